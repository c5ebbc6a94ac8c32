// Ownership (docs/dispatch.md "Ownership"): a worker that lost a call's lease - paused past it, cut
// off from the database - touches nothing: no stop-call, no dial, no write. A "paused" worker here
// is one whose clock stood still (so it renewed nothing) while the others' ran on, then jumped to
// theirs; on PostgreSQL a real worker process is also stopped (SIGSTOP) and resumed (SIGCONT).
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/deps.ts';
import { createProviderRegistry } from '../../src/dispatch/voice/registry.ts';
import { createRetellProvider } from '../../src/dispatch/voice/retell/provider.ts';
import { DialForfeitedError, type VoiceProvider } from '../../src/dispatch/voice/provider.ts';
import { callEvents, manualSimulator, phoneEndingIn, testWorker } from '../helpers/dispatch.ts';
import { createTestApp, type TestApp, type TestClock } from '../helpers/app.ts';
import { TEST_DATABASE_URL } from '../helpers/database.ts';
import { startFakeRetell, type FakeRetell } from '../helpers/fake-retell.ts';
import { insertBatch } from '../helpers/fixtures.ts';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';
import { batchSettled, expectedRecord, pickRecord, retellApp, until, type RetellApp } from '../retell/retell-app.ts';
import type { DispatchWorker } from '../../src/dispatch/worker.ts';

const LEASE_MS = 2_000;
/** A last digit the fake Retell answers (and ends as completed). */
const ANSWERED = 4;
/** Never delivered in-process (no delivery worker runs there): only queued, and counted. */
const HOOKS = 'https://hooks.example.com/calls';

let r: RetellApp | undefined;
let app: TestApp | undefined;
let rx: Receiver | undefined;
let child: ChildProcess | undefined;
const workers: DispatchWorker[] = [];
afterEach(async () => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const w of workers.splice(0)) await w.stop({ graceMs: 0 });
  await r?.close();
  await app?.close();
  await rx?.close();
  r = app = rx = child = undefined;
});

/** A worker's own clock: follows the test clock until paused, stands still, then jumps back to it. */
function pausableClock(base: TestClock): Clock & { pause(): void; resume(): void } {
  let pausedAt: Date | null = null;
  return {
    now: () => (pausedAt ? new Date(pausedAt) : base.now()),
    pause: () => void (pausedAt = base.now()),
    resume: () => void (pausedAt = null),
  };
}

function started(w: DispatchWorker): DispatchWorker {
  workers.push(w);
  w.start();
  return w;
}

const count = (t: TestApp, where: Record<string, unknown>) => t.deps.db.prisma.call.count({ where });

async function adoptions(t: TestApp, batchId: string): Promise<string[]> {
  return (await callEvents(t.deps, batchId)).filter((e) => e.detail?.event === 'adopted').map((e) => e.call_id);
}

/** The call webhooks queued per call, in order. */
async function callWebhooks(t: TestApp, batchId: string): Promise<Map<string, string[]>> {
  const rows = await t.deps.db.prisma.$queryRaw<{ call_id: string; event_type: string }[]>`
    SELECT payload->'data'->>'call_id' AS call_id, event_type FROM webhook_deliveries
     WHERE batch_id = ${batchId} AND event_type LIKE 'call.%' ORDER BY id`;
  const out = new Map<string, string[]>();
  for (const row of rows) out.set(row.call_id, [...(out.get(row.call_id) ?? []), row.event_type]);
  return out;
}

/** Four answered Retell calls, dialled and watched by a worker that `start` starts. */
async function fourAnsweredCalls(start: () => void, o: { alive?: () => void; callbackUrl?: string } = {}) {
  const { t, fake, a } = r!;
  const alive = o.alive ?? (() => undefined);
  const { batch } = await insertBatch(t.deps, a, {
    contacts: 4,
    batch: { concurrency: 4, callbackUrl: o.callbackUrl ?? HOOKS },
    callOverrides: (i) => ({ status: 'queued', phoneNumber: phoneEndingIn(ANSWERED, i) }),
  });
  start();
  await until(async () => (alive(), (await count(t, { batchId: batch.id, providerCallId: { not: null } })) === 4), 60_000, 'four calls dialled');
  await fake.startAll();
  await until(async () => (alive(), (await count(t, { batchId: batch.id, status: 'in_progress' })) === 4), 30_000, 'four calls answered');
  return batch;
}

/** The calls end at Retell and are analysed; whoever holds them records it. */
async function finishAtRetell(batchId: string) {
  const { t, fake } = r!;
  await until(
    async () => {
      if (await batchSettled(t, batchId)) return true;
      await fake.finishAll();
      await fake.analyzeAll();
      return false;
    },
    60_000,
    'batch settled',
  );
}

/** Each call ends exactly as the adopter records it: no write, no webhook of the paused worker's. */
async function expectRecordedByAdopter(batchId: string, adopter: string) {
  const { t, fake } = r!;
  const calls = await t.deps.db.prisma.call.findMany({ where: { batchId }, orderBy: { seq: 'asc' } });
  const events = await callEvents(t.deps, batchId);
  const hooks = await callWebhooks(t, batchId);
  for (const c of calls) {
    expect({ phone: c.phoneNumber, ...pickRecord(c) }).toEqual({ phone: c.phoneNumber, ...expectedRecord(c.phoneNumber, { analysed: true }) });
    expect(c.leaseOwner).toBeNull();
    const mine = events.filter((e) => e.call_id === c.id);
    expect(mine.map((e) => `${e.from_status}->${e.to_status}:${e.detail?.event ?? ''}`)).toEqual([
      'queued->ringing:dial',
      'ringing->answered:',
      'answered->in_progress:',
      'in_progress->in_progress:adopted',
      'in_progress->completed:ended',
    ]);
    expect(mine[3].detail?.worker).toBe(adopter);
    expect((hooks.get(c.id) ?? []).filter((h) => h === 'call.completed' || h === 'call.failed')).toEqual(['call.completed']);
  }
  // One Retell call per call of ours, none stopped.
  expect(fake.creates).toHaveLength(4);
  expect(fake.stops).toEqual([]);
}

describe('a worker paused past its lease while another adopted its answered calls', () => {
  it('takes none of their events, sends no stop-call and writes nothing once its clock moves on; the adopter records every call', async () => {
    r = await retellApp({ config: { LEASE_MS: String(LEASE_MS) } });
    const { t } = r;
    const clockA = pausableClock(t.clock);
    let workerA: DispatchWorker | undefined;
    const batch = await fourAnsweredCalls(() => (workerA = started(testWorker({ ...t.deps, clock: clockA }, { workerId: 'A' }))));

    // A's time stands still: it renews nothing more, while for everyone else its leases run out.
    clockA.pause();
    t.clock.advance(2 * LEASE_MS);
    const workerB = started(testWorker(t.deps, { workerId: 'B' }));
    await until(async () => (await adoptions(t, batch.id)).length === 4, 30_000, 'B adopts the four calls');
    // The calls end at Retell while A still watches them: their events are left for B.
    await r.fake.finishAll();
    await until(async () => (await count(t, { batchId: batch.id, status: 'completed' })) === 4, 30_000, 'B records the ends');

    // A resumes: its renewal finds the calls gone, and it lets go of them.
    clockA.resume();
    await until(() => workerA!.stats().inFlight === 0, 30_000, 'A drops the calls it lost');
    await finishAtRetell(batch.id);
    await workerB.settle();
    await workerA!.settle();
    await expectRecordedByAdopter(batch.id, workerB.id);
  }, 120_000);
});

describe('a worker delayed between its claim and its dial', () => {
  it('does not dial a call another worker settled meanwhile', async () => {
    const t = (app = await createTestApp());
    const a = await t.seedAccount({ limits: { maxConcurrentCalls: 10 } });
    const {
      batch,
      calls: [c],
    } = await insertBatch(t.deps, a, {
      contacts: 1,
      batch: { callbackUrl: HOOKS },
      callOverrides: () => ({ status: 'queued', phoneNumber: phoneEndingIn(ANSWERED) }),
    });
    // A's provider holds the dial at its pacing step (the last before the dial) until released;
    // the claim reads the pacing first, and passes.
    const sim = manualSimulator(t.clock, { callMs: 60_000 });
    let release!: () => void;
    const gate = new Promise<void>((res) => (release = res));
    let rateReads = 0;
    let atGate = 0;
    let placed = 0;
    const held: VoiceProvider = {
      ...sim.provider,
      dialRate: async () => {
        if (++rateReads > 1) {
          atGate += 1;
          await gate;
        }
        return 0;
      },
      placeCall: (req, ownership) => {
        placed += 1;
        return sim.provider.placeCall(req, ownership);
      },
    };
    const workerA = testWorker(t.deps, { workerId: 'A', leaseMs: LEASE_MS, providers: createProviderRegistry({ simulator: () => held }) });
    workers.push(workerA);
    const tickA = workerA.runOnce();
    await until(() => atGate === 1, 30_000, 'A claimed the call and waits to dial it');
    expect(await t.deps.db.prisma.call.findUniqueOrThrow({ where: { id: c.id } })).toMatchObject({ status: 'ringing', attempts: 1 });

    // A's lease runs out; B's recovery settles the call (its provider cannot tell about it).
    t.clock.advance(LEASE_MS + 1);
    const workerB = testWorker(t.deps, { workerId: 'B', leaseMs: LEASE_MS, providers: manualSimulator(t.clock, { callMs: 60_000 }).registry });
    workers.push(workerB);
    expect((await workerB.runOnce()).settled).toBe(1);
    await workerB.settle();

    // A goes on: it must see that the call is no longer its own before dialling it.
    release();
    await tickA;
    await workerA.settle();
    expect(placed).toBe(0);
    const row = await t.deps.db.prisma.call.findUniqueOrThrow({ where: { id: c.id } });
    expect([row.status, row.disconnectReason, row.attempts, row.leaseOwner, row.providerCallId]).toEqual([
      'failed',
      'dispatcher_lost',
      1,
      null,
      null,
    ]);
    const events = await callEvents(t.deps, batch.id);
    expect(events.map((e) => `${e.from_status}->${e.to_status}:${e.detail?.event}`)).toEqual(['queued->ringing:dial', 'ringing->failed:recovered']);
    expect((await callWebhooks(t, batch.id)).get(c.id)).toEqual(['call.failed']);
    expect(workerA.stats().inFlight).toBe(0);
  });

  it('a Retell dial asks for the lease again before every create, and creates nothing once it is lost', async () => {
    const fake: FakeRetell = await startFakeRetell({ apiKey: 'key_test_ownership_0123456789' });
    try {
      const provider = retellFor(fake);
      // The first create fails (503, nothing created); by the retry, the worker has lost the call.
      fake.failNext(1, 503, false);
      const answers = [true, false];
      let asked = 0;
      const dial = provider.placeCall(dialRequest('call_1'), {
        owner: 'A#1',
        confirmDial: async () => answers[asked++] ?? false,
        holdsNow: () => true,
      });
      await expect(dial).rejects.toBeInstanceOf(DialForfeitedError);
      expect([asked, fake.creates.length, fake.calls.size]).toEqual([2, 0, 0]);
      await provider.close();
    } finally {
      await fake.close();
    }
  });

  it('a Retell create is written only while the worker still holds the call: a lease lost after the last confirmation keeps it in', async () => {
    const fake: FakeRetell = await startFakeRetell({ apiKey: 'key_test_ownership_0123456789' });
    const provider = retellFor(fake);
    try {
      // Confirmed, then (a pause) no longer held as the connection is ready; confirmed again: lost.
      const lost = { confirms: [true, false], holds: [false], asked: 0, gated: 0 };
      const lostDial = provider.placeCall(dialRequest('call_g1'), {
        owner: 'A#1',
        confirmDial: async () => lost.confirms[lost.asked++] ?? false,
        holdsNow: () => lost.holds[lost.gated++] ?? true,
      });
      await expect(lostDial).rejects.toBeInstanceOf(DialForfeitedError);
      expect([lost.asked, lost.gated, fake.creates.length]).toEqual([2, 1, 0]);

      // The same, but the second confirmation finds the lease still ours: created once, on the next write.
      const kept = { asked: 0, gated: 0 };
      const { providerCallId: placed } = await provider.placeCall(dialRequest('call_g2'), {
        owner: 'A#1',
        confirmDial: async () => (kept.asked++, true),
        holdsNow: () => kept.gated++ > 0,
      });
      expect([kept.asked, kept.gated, fake.creates.length]).toEqual([2, 2, 1]);

      // A hang-up is gated the same way: none leaves once the lease is no longer held.
      await provider.hangup(placed, 'cancelled', { accountId: 'acc_1', holdsNow: () => false });
      expect(fake.stops).toEqual([]);
      await provider.hangup(placed, 'cancelled', { accountId: 'acc_1', holdsNow: () => true });
      expect(fake.stops).toEqual([placed]);
    } finally {
      await provider.close();
      await fake.close();
    }
  });
});

/** The Retell provider against the fake, retrying a failed create at once. */
function retellFor(fake: FakeRetell) {
  return createRetellProvider({
    baseURL: fake.url,
    account: async () => ({ apiKey: 'key_test_ownership_0123456789' }),
    agent: async () => ({ agentId: 'agent_abc', agentVersion: 3 }),
    feed: async () => [],
    analyzed: async () => [],
    now: () => new Date(),
    maxAttempts: 4,
    backoffMs: 1,
  });
}

function dialRequest(callId: string) {
  return {
    callId,
    batchId: 'batch_1',
    accountId: 'acc_1',
    attempt: 1,
    from: '+14155550100',
    to: '+14155550124',
    agent: { id: 'agt-1', name: 'Ava', voice: 'retell-Cimo', outcomeKeys: [] },
    prompt: { id: 'pmt-1', name: 'v1', text: 'Hello' },
    contact: { externalId: 'c1', name: null, metadata: {} },
    recordingEnabled: false,
    interruption: false,
    maxDurationSeconds: 60,
  };
}

// ---- a real worker process, stopped and resumed (PostgreSQL: PGlite is private to one process) ----

function startWorkerProcess(env: Record<string, string>, onLog: (line: Record<string, unknown>) => void): ChildProcess {
  const root = path.resolve(import.meta.dirname, '../..');
  const p = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'src/worker.ts')], {
    cwd: root,
    env: { ...process.env, MIGRATE_ON_START: 'false', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let rest = '';
  p.stdout!.on('data', (d) => {
    const lines = (rest + String(d)).split('\n');
    rest = lines.pop()!;
    for (const l of lines) {
      try {
        onLog(JSON.parse(l));
      } catch {
        process.stderr.write(`[worker] ${l}\n`);
      }
    }
  });
  p.stderr!.on('data', (d) => process.stderr.write(`[worker] ${d}`));
  return p;
}

describe.skipIf(!TEST_DATABASE_URL)('a worker process stopped (SIGSTOP) past its lease, then resumed (PostgreSQL)', () => {
  it('sends no stop-call for the calls a survivor adopted meanwhile, and writes nothing to them', async () => {
    r = await retellApp({ config: { LEASE_MS: String(LEASE_MS) } });
    rx = await startReceiver();
    const { t, fake } = r;
    const lost = new Set<string>();
    const alive = () => {
      if (child!.exitCode !== null) throw new Error(`worker process exited early (${child!.exitCode})`);
    };
    const batch = await fourAnsweredCalls(
      () => {
        child = startWorkerProcess(
          {
            DATABASE_URL: t.testDb.url!,
            APP_SECRET: t.deps.appSecret,
            WORKER_ID: 'paused',
            WORKER_POLL_MS: '20',
            LEASE_MS: String(LEASE_MS),
            RETELL_BASE_URL: fake.url,
            RETELL_POLL_MS: '20',
            RETELL_DIAL_RATE_PER_NUMBER: '0',
            RETELL_ANALYSIS_GRACE_MS: '600000',
            WEBHOOK_ALLOW_PRIVATE: 'true',
          },
          (line) => {
            if (String(line.msg).startsWith('call no longer leased by this worker')) lost.add(String(line.callId));
          },
        );
      },
      { alive, callbackUrl: rx.url },
    );

    child!.kill('SIGSTOP');
    // The survivor's clock is past the stopped worker's leases (no real waiting needed).
    t.clock.advance(2 * LEASE_MS);
    const survivor = started(testWorker(t.deps, { workerId: 'survivor' }));
    await until(async () => (await adoptions(t, batch.id)).length === 4, 30_000, 'the survivor adopts the four calls');

    child!.kill('SIGCONT');
    await until(() => (alive(), lost.size === 4), 30_000, 'the resumed worker lets go of the four calls');
    await finishAtRetell(batch.id);
    await survivor.settle();
    // Whatever the resumed worker would still send has gone out by the time it has shut down.
    child!.kill('SIGTERM');
    await until(() => child!.exitCode !== null || child!.signalCode !== null, 30_000, 'the resumed worker exits');
    await expectRecordedByAdopter(batch.id, survivor.id);
  }, 180_000);
});
