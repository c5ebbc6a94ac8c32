// A real `src/worker.ts` process dialling through the fake Retell is killed with SIGKILL mid-batch
// (PostgreSQL only: PGlite is private to one process). At that moment its calls are in every state
// a crash can leave them in: ended with Retell's analysis outstanding, answered, ringing, ringing at
// our end but answered at Retell's, ended at Retell while nobody listened, and created at Retell
// without the create's answer (so without a stored provider_call_id). A surviving worker must
// finish every one of them with Retell's real outcome - adopting those still in flight - and
// never place a second Retell call for any of them.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TEST_DATABASE_URL } from '../helpers/database.ts';
import { callEvents, expectConsistentBatch, phoneEndingIn, testWorker } from '../helpers/dispatch.ts';
import { fakeOutcome } from '../helpers/fake-retell.ts';
import { insertBatch } from '../helpers/fixtures.ts';
import { batchSettled, expectedRecord, expectNoInvalidBodies, pickRecord, retellApp, until, type RetellApp } from './retell-app.ts';

let r: RetellApp | undefined;
let child: ChildProcess | undefined;
afterEach(async () => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await r?.close();
  r = child = undefined;
});

const LEASE_MS = 1500;
/** Last digits: the first six dialled are answered (3-9); the rest cover every outcome. */
const DIGITS = [4, 5, 6, 7, 8, 3, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 9];

function startWorkerProcess(env: Record<string, string>): ChildProcess {
  const root = path.resolve(import.meta.dirname, '../..');
  const p = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'src/worker.ts')], {
    cwd: root,
    env: { ...process.env, MIGRATE_ON_START: 'false', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  p.stderr!.on('data', (d) => process.stderr.write(`[worker] ${d}`));
  return p;
}

describe.skipIf(!TEST_DATABASE_URL)('a Retell worker process killed mid-batch (PostgreSQL)', () => {
  it('a survivor adopts or settles every call with Retell’s outcome; no second Retell call; exact records and counters', async () => {
    r = await retellApp({ config: { LEASE_MS: String(LEASE_MS) } });
    const { t, fake, a } = r;
    const { batch, calls: inserted } = await insertBatch(t.deps, a, {
      contacts: 20,
      batch: { concurrency: 4 },
      callOverrides: (i) => ({ status: 'queued', phoneNumber: phoneEndingIn(DIGITS[i], i) }),
    });
    const seq = (n: number) => inserted[n - 1];
    const row = (n: number) => t.deps.db.prisma.call.findUniqueOrThrow({ where: { id: seq(n).id } });
    const retellCall = (n: number) => [...fake.calls.values()].find((c) => c.metadata.call_id === seq(n).id)!;
    const isSeq =
      (...ns: number[]) =>
      (c: Record<string, any>) =>
        ns.some((n) => c.metadata.call_id === seq(n).id);

    // The sixth create is made at Retell but its answer never reaches the worker.
    fake.holdCreatesFrom(6);
    child = startWorkerProcess({
      DATABASE_URL: t.testDb.url!,
      APP_SECRET: t.deps.appSecret,
      WORKER_ID: 'doomed',
      WORKER_POLL_MS: '20',
      LEASE_MS: String(LEASE_MS),
      RETELL_BASE_URL: fake.url,
      RETELL_POLL_MS: '20',
      RETELL_DIAL_RATE_PER_NUMBER: '0',
      RETELL_ANALYSIS_GRACE_MS: '600000',
    });
    const alive = () => {
      if (child!.exitCode !== null) throw new Error(`worker process exited early (${child!.exitCode})`);
    };

    // Calls 1-4 dialled and their Retell ids stored.
    await until(
      async () => (alive(), (await t.deps.db.prisma.call.count({ where: { batchId: batch.id, providerCallId: { not: null } } })) === 4),
      60_000,
      'first dials',
    );
    // Calls 1 and 2 end; the worker records them and waits for Retell's analysis.
    await fake.finishAll({ only: isSeq(1, 2) });
    await until(
      async () => (alive(), [(await row(1)).transcriptStatus, (await row(2)).transcriptStatus].every((s) => s === 'processing')),
      20_000,
      'calls 1, 2 ended',
    );
    // Their slots go to calls 5 and 6, dialled together: whichever reaches Retell second is created
    // there but its answer is held (so no Retell id is stored); call 3 is answered.
    const stored5 = async () => (await row(5)).providerCallId !== null;
    await until(
      async () => (alive(), fake.creates.length === 6 && fake.held === 1 && (await stored5()) !== ((await row(6)).providerCallId !== null)),
      20_000,
      'calls 5, 6 dialled',
    );
    const [stored, held] = (await stored5()) ? [5, 6] : [6, 5];
    await fake.startAll(isSeq(3));
    await until(async () => (alive(), (await row(3)).status === 'in_progress'), 20_000, 'call 3 answered');

    child.kill('SIGKILL');
    await new Promise((res) => child!.once('exit', res));
    fake.holdCreatesFrom(null);
    expect((await row(held)).providerCallId).toBeNull();
    expect([(await row(1)).status, (await row(3)).status, (await row(4)).status, (await row(5)).status, (await row(6)).status]).toEqual([
      'completed',
      'in_progress',
      'ringing',
      'ringing',
      'ringing',
    ]);

    // Nobody listening: call 4 ends at Retell, the stored one of 5 and 6 is answered there, analyses come in.
    await fake.finishAll({ only: isSeq(4) });
    await fake.startAll(isSeq(stored));
    await fake.analyzeAll();

    // The survivor starts once the dead worker's leases have lapsed.
    t.clock.advance(LEASE_MS + 500);
    const w = testWorker(t.deps);
    w.start();
    try {
      const adopted = async () => (await callEvents(t.deps, batch.id)).filter((e) => e.detail?.event === 'adopted').map((e) => e.call_id);
      await until(async () => (await adopted()).length === 3, 20_000, 'adoptions');
      expect((await adopted()).sort()).toEqual([seq(3).id, seq(5).id, seq(6).id].sort());
      expect((await row(held)).providerCallId).toBe(retellCall(held).call_id);
      // Answered while nobody listened: the adopter records the answer through its write queue,
      // just after the adoption itself.
      await until(async () => (await row(stored)).status === 'in_progress', undefined, 'adopted call recorded as answered');
      // Adopted calls end when Retell says so; the rest of the batch runs normally.
      await until(
        async () => {
          if (await batchSettled(t, batch.id)) return true;
          await fake.finishAll();
          await fake.analyzeAll();
          return false;
        },
        60_000,
        'batch settled',
      );
      await w.settle();
    } finally {
      await w.stop({ graceMs: 0 });
    }

    const { batch: done, calls, events } = await expectConsistentBatch(t.deps, batch.id);
    const answered = DIGITS.filter((d) => d >= 3).length;
    expect({ status: done.status, completed: done.completed, failed: done.failed, queued: done.queued, inProgress: done.inProgress }).toEqual({
      status: 'completed',
      completed: answered,
      failed: 20 - answered,
      queued: 0,
      inProgress: 0,
    });
    for (const c of calls) {
      expect({ phone: c.phoneNumber, ...pickRecord(c) }).toEqual({ phone: c.phoneNumber, ...expectedRecord(c.phoneNumber, { analysed: true }) });
      expect(c.providerCallId).toBe([...fake.calls.values()].find((x) => x.metadata.call_id === c.id)!.call_id);
      expect([c.attempts, c.leaseOwner]).toEqual([1, null]);
    }
    expect(calls.filter((c) => c.disconnectReason === 'dispatcher_lost')).toEqual([]);
    // Exactly one Retell call per call of ours.
    expect(fake.creates).toHaveLength(20);
    expect(new Set(fake.creates.map((c) => c.metadata.call_id))).toEqual(new Set(calls.map((c) => c.id)));
    // Call 4 ended while nobody listened: settled from get-call, by the survivor.
    const settled = events.find((e) => e.call_id === seq(4).id && e.detail?.event === 'ended')!;
    expect(settled.detail).toMatchObject({ recovered: true, disconnect_reason: fakeOutcome(seq(4).phoneNumber).disconnection, worker: w.id });
    expect(String(settled.detail!.previous_worker)).toMatch(/^doomed#/);
    // Each call was dialled once, by whichever worker.
    const dials = events.filter((e) => e.detail?.event === 'dial');
    expect(dials).toHaveLength(20);
    expect(new Set(dials.map((e) => String(e.detail!.worker).split('#')[0]))).toEqual(new Set(['doomed', w.id.split('#')[0]]));
    expectNoInvalidBodies(fake);
  }, 180_000);
});
