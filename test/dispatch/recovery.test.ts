// Leases and crash safety: calls of a worker that stopped renewing its leases are recovered —
// requeued if they were never dialled, settled (never redialled) if they were.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { insertBatch } from '../helpers/fixtures.ts';
import { expectConsistentBatch, manualSimulator, manualTimers, phoneEndingIn, testWorker } from '../helpers/dispatch.ts';
import { TEST_DATABASE_URL } from '../helpers/database.ts';
import { waitFor } from '../helpers/wait.ts';
import { startReceiver } from '../helpers/webhook-receiver.ts';
import { deliverDue } from '../../src/services/webhooks/delivery-worker.ts';
import { createSimulatorProvider } from '../../src/dispatch/voice/simulator.ts';
import { createProviderRegistry } from '../../src/dispatch/voice/registry.ts';
import type { CallEndResult, ProviderCallLookup, ProviderEventListener, VoiceProvider } from '../../src/dispatch/voice/provider.ts';

let t: TestApp;
let a: SeededAccount;

beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount({ limits: { maxConcurrentCalls: 100 } });
});
afterAll(() => t.close());
beforeEach(() => t.clock.set(new Date('2025-02-02T12:00:00.000Z')));

const calls = (batchId: string) => t.deps.db.prisma.call.findMany({ where: { batchId }, orderBy: { seq: 'asc' } });
const LEASE = 1000;

describe('lease expired before the dial', () => {
  it('the call is requeued (history kept) and dialled once by another worker', async () => {
    const {
      batch,
      calls: [c],
    } = await insertBatch(t.deps, a, { contacts: 1, callOverrides: () => ({ status: 'queued', phoneNumber: phoneEndingIn(4) }) });
    // A worker leased it and vanished before dialling.
    await t.deps.db.prisma.call.update({
      where: { id: c.id },
      data: { leaseOwner: 'ghost#1', leaseExpiresAt: new Date('2025-02-02T11:59:59.000Z') },
    });
    const worker = testWorker(t.deps);
    const tick = await worker.runOnce();
    expect(tick.requeued).toBe(1);
    await worker.drain();
    const { events } = await expectConsistentBatch(t.deps, batch.id);
    expect(events.map((e) => `${e.from_status}->${e.to_status}:${e.detail?.event}`).slice(0, 2)).toEqual([
      'queued->queued:requeue',
      'queued->ringing:dial',
    ]);
    expect(events[0].detail).toMatchObject({ reason: 'lease_expired', previous_worker: 'ghost#1' });
    expect((await calls(batch.id))[0].status).toBe('completed');
  });

  it('a live lease is left alone', async () => {
    const {
      batch,
      calls: [c],
    } = await insertBatch(t.deps, a, { contacts: 1, callOverrides: () => ({ status: 'queued' }) });
    await t.deps.db.prisma.call.update({
      where: { id: c.id },
      data: { leaseOwner: 'other#1', leaseExpiresAt: new Date('2025-02-02T12:00:30.000Z') },
    });
    const tick = await testWorker(t.deps).runOnce();
    expect(tick.requeued).toBe(0);
    expect(tick.claimed).toBe(0);
    expect((await calls(batch.id))[0]).toMatchObject({ status: 'queued', leaseOwner: 'other#1', attempts: 0 });
    await t.deps.db.prisma.call.update({ where: { id: c.id }, data: { leaseOwner: null, leaseExpiresAt: null } });
    await testWorker(t.deps).drain();
  });
});

describe('lease expired after the dial', () => {
  it('calls of a crashed worker end failed by the system (dispatcher_lost), are never redialled, and the batch finishes', async () => {
    const { batch } = await insertBatch(t.deps, a, {
      contacts: 6,
      batch: { concurrency: 3 },
      callOverrides: (i) => ({ status: 'queued', phoneNumber: phoneEndingIn(5, i) }),
    });
    // Worker A dials three calls (one gets answered), then dies: its provider goes silent and it
    // never renews its leases again.
    const simA = manualSimulator(t.clock, { callMs: 60_000, ringMs: 1_000 });
    const workerA = testWorker(t.deps, { workerId: 'A', leaseMs: LEASE, providers: simA.registry });
    await workerA.runOnce();
    await workerA.settle();
    simA.timers.advance(500);
    await workerA.settle();
    await simA.provider.close();
    let rows = await calls(batch.id);
    expect(rows.map((r) => r.status)).toEqual(['ringing', 'ringing', 'ringing', 'queued', 'queued', 'queued']);

    // Before the lease runs out, another worker leaves A's calls alone.
    const workerB = testWorker(t.deps, { workerId: 'B', leaseMs: LEASE });
    t.clock.advance(LEASE - 500 - 1); // A's leases run until dial time + LEASE
    expect((await workerB.runOnce()).settled).toBe(0);
    await workerB.settle();
    t.clock.advance(2);
    await workerB.drain();

    const { batch: done, events } = await expectConsistentBatch(t.deps, batch.id);
    expect(done.status).toBe('completed');
    rows = await calls(batch.id);
    for (const r of rows.slice(0, 3)) {
      expect([r.status, r.hangupBy, r.disconnectReason, r.attempts, r.leaseOwner]).toEqual(['failed', 'system', 'dispatcher_lost', 1, null]);
    }
    for (const r of rows.slice(3)) expect([r.status, r.attempts]).toEqual(['completed', 1]);
    const recovered = events.filter((e) => e.detail?.event === 'recovered');
    expect(recovered).toHaveLength(3);
    expect(recovered[0].detail).toMatchObject({ reason: 'dispatcher_lost', worker: workerB.id });
    expect(String(recovered[0].detail!.previous_worker)).toMatch(/^A#/);
  });

  it('an answered call of a crashed worker gets transcript_status failed', async () => {
    const { batch } = await insertBatch(t.deps, a, { contacts: 1, callOverrides: () => ({ status: 'queued', phoneNumber: phoneEndingIn(6) }) });
    const simA = manualSimulator(t.clock, { callMs: 60_000, ringMs: 1_000 });
    const workerA = testWorker(t.deps, { leaseMs: LEASE, providers: simA.registry });
    await workerA.runOnce();
    await simA.dialled(1);
    simA.timers.advance(2_000);
    await workerA.settle();
    expect((await calls(batch.id))[0].status).toBe('in_progress');
    await simA.provider.close();
    t.clock.advance(LEASE + 1);
    await testWorker(t.deps).drain();
    const [c] = await calls(batch.id);
    expect([c.status, c.hangupBy, c.disconnectReason, c.transcriptStatus]).toEqual(['failed', 'system', 'dispatcher_lost', 'failed']);
    await expectConsistentBatch(t.deps, batch.id);
  });

  it('a provider that can look calls up settles them with their real result', async () => {
    const { batch } = await insertBatch(t.deps, a, {
      contacts: 2,
      batch: { concurrency: 2 },
      callOverrides: (i) => ({ status: 'queued', phoneNumber: phoneEndingIn(i === 0 ? 4 : 1, i) }),
    });
    const fake = lookupProvider(t.clock);
    const registry = createProviderRegistry({ simulator: () => fake.provider });
    const workerA = testWorker(t.deps, { leaseMs: LEASE, providers: registry });
    await workerA.runOnce();
    await workerA.settle();
    // Worker A dies; the calls still finish at the provider, which remembers how.
    fake.muted = true;
    fake.timers.advance(10_000);
    t.clock.advance(LEASE + 1);
    const workerB = testWorker(t.deps, { leaseMs: LEASE, providers: registry });
    expect((await workerB.runOnce()).settled).toBe(2);
    await workerB.drain();
    const rows = await calls(batch.id);
    expect(rows.map((r) => [r.status, r.hangupBy, r.disconnectReason])).toEqual([
      ['completed', 'agent', 'agent_hangup'],
      ['busy', null, 'busy'],
    ]);
    // The recovered answered call is analysed too (its transcript came from the provider).
    expect(rows[0]).toMatchObject({ transcriptStatus: 'ready', recordingAvailable: true, leaseOwner: null });
    expect(rows[0].summary).toBeTruthy();
    await expectConsistentBatch(t.deps, batch.id);
  });

  it("a recovered call that reached voicemail, its provider saying nothing of a message, gets voicemail_left from the batch's setting", async () => {
    const { batch } = await insertBatch(t.deps, a, {
      contacts: 1,
      batch: { voicemail: 'leave_message', voicemailMessage: 'Call us back' },
      callOverrides: () => ({ status: 'queued', metadata: { sim: 'voicemail' } }),
    });
    const fake = lookupProvider(t.clock, { forgetVoicemailLeft: true });
    const registry = createProviderRegistry({ simulator: () => fake.provider });
    const workerA = testWorker(t.deps, { leaseMs: LEASE, providers: registry });
    await workerA.runOnce();
    await workerA.settle();
    fake.muted = true;
    fake.timers.advance(10_000);
    t.clock.advance(LEASE + 1);
    const workerB = testWorker(t.deps, { leaseMs: LEASE, providers: registry });
    expect((await workerB.runOnce()).settled).toBe(1);
    await workerB.drain();
    const [row] = await calls(batch.id);
    expect([row.status, row.disconnectReason, row.voicemailLeft]).toEqual(['no_answer', 'voicemail', true]);
  });
});

describe('a lost dial still on its way to the provider', () => {
  it('is not settled as never dialled while the provider may still create it (its request timeout after the lease lapsed)', async () => {
    const {
      batch,
      calls: [c, d],
    } = await insertBatch(t.deps, a, {
      contacts: 2,
      batch: { concurrency: 2 },
      callOverrides: (i) => ({ status: 'ringing', attempts: 1, phoneNumber: phoneEndingIn(4, i) }),
    });
    // Worker A sent both creates and was cut off; its leases lapsed a moment ago.
    const lapsed = new Date(t.clock.now().getTime() - 1);
    await t.deps.db.prisma.call.updateMany({ where: { batchId: batch.id }, data: { leaseOwner: 'A#cut', leaseExpiresAt: lapsed } });
    // A slow provider: neither create has been made yet (list-calls finds nothing), so far.
    const created = new Map<string, string>();
    const provider: VoiceProvider = {
      name: 'slow-create',
      requestTimeoutMs: 8_000,
      placeCall: async () => ({ providerCallId: 'never' }),
      hangup: async () => {},
      onEvent: () => () => {},
      close: async () => {},
      findCall: async (ref) => created.get(ref.callId) ?? null,
      async lookup(id): Promise<ProviderCallLookup> {
        const at = t.clock.now();
        return id === 'rc_late'
          ? {
              state: 'ended',
              result: {
                status: 'completed',
                hangupBy: 'agent',
                disconnectReason: 'agent_hangup',
                startedAt: at,
                answeredAt: at,
                endedAt: at,
                transcript: 'Agent: Hi.',
                recording: null,
              },
            }
          : { state: 'unknown' };
      },
    };
    const worker = testWorker(t.deps, { workerId: 'B', leaseMs: LEASE, providers: createProviderRegistry({ simulator: () => provider }) });
    expect((await worker.runOnce()).settled).toBe(0);
    // One create lands late: at the next look (5 s on), that call is settled with the provider's result.
    created.set(c.id, 'rc_late');
    t.clock.advance(5_000);
    expect((await worker.runOnce()).settled).toBe(1);
    // The other never arrives: its next look is past the provider's request timeout, and it is settled as lost.
    t.clock.advance(10_000);
    expect((await worker.runOnce()).settled).toBe(1);
    await worker.settle();
    const rows = await calls(batch.id);
    expect(rows.map((r) => [r.id, r.status, r.disconnectReason])).toEqual([
      [c.id, 'completed', 'agent_hangup'],
      [d.id, 'failed', 'dispatcher_lost'],
    ]);
  });
});

describe('analysis left unfinished', () => {
  it('is taken over and completed by another worker', async () => {
    const transcript = 'Agent: Hello Ann, this is Sales Agent.\nUser: Yes, I am interested. Tell me more.\nAgent: Goodbye!';
    const {
      batch,
      calls: [c],
    } = await insertBatch(t.deps, a, {
      contacts: 1,
      status: 'completed',
      callOverrides: () => ({ status: 'completed', llmTranscript: transcript, transcriptStatus: 'processing', hangupBy: 'agent', name: 'Ann' }),
    });
    await t.deps.db.prisma.call.update({
      where: { id: c.id },
      data: { leaseOwner: 'ghost#2', leaseExpiresAt: new Date('2025-02-02T11:00:00.000Z') },
    });
    const worker = testWorker(t.deps);
    expect((await worker.runOnce()).analysisRecovered).toBe(1);
    await worker.settle();
    const [row] = await calls(batch.id);
    expect(row).toMatchObject({ transcriptStatus: 'ready', leaseOwner: null, leaseExpiresAt: null });
    expect(row.summary).toMatch(/Ann/);
    expect(row.outcomes).toMatchObject({ interested: 'interested' });
  });
});

describe.skipIf(!TEST_DATABASE_URL)('worker processes', () => {
  it('a worker process killed with SIGKILL mid-batch: every call ends exactly once, no number is dialled twice, and each sends exactly the webhook events its ending promises (PostgreSQL only: PGlite is single-process)', async () => {
    t.clock.set(new Date());
    const rx = await startReceiver();
    try {
      const { batch } = await insertBatch(t.deps, a, {
        contacts: 30,
        batch: { concurrency: 4, useAlternateNumber: true, callbackUrl: rx.url },
        callOverrides: (i) => ({
          status: 'queued',
          phoneNumber: phoneEndingIn(i % 10, i),
          alternatePhone: i % 10 === 1 ? phoneEndingIn(7, i) : null,
        }),
      });
      // Calls ring 200 ms and talk 800 ms: most of a call's time in flight is spent answered.
      const child = startWorkerProcess({ SIM_CALL_MS: '1000', LEASE_MS: '1000', WORKER_ID: 'child', WEBHOOK_ALLOW_PRIVATE: 'true' });
      const inFlight = (statuses: string[]) => t.deps.db.prisma.call.count({ where: { batchId: batch.id, status: { in: statuses } } });
      try {
        // Kill it once it has finished some calls and has others in flight, answered ones among them.
        await waitFor(
          async () => {
            const b = await t.deps.db.prisma.batch.findUniqueOrThrow({ where: { id: batch.id } });
            return b.completed + b.failed >= 4 && (await inFlight(['in_progress'])) >= 2;
          },
          { timeoutMs: 60_000, what: 'calls ended and answered calls in flight', abortIf: exitedEarly(child) },
        );
      } finally {
        child.kill('SIGKILL');
      }
      await new Promise((r) => child.once('exit', r));
      const lostIds = (
        await t.deps.db.prisma.call.findMany({ where: { batchId: batch.id, status: { in: ['ringing', 'answered', 'in_progress'] } } })
      ).map((c) => c.id);
      const answeredAtKill = new Set(
        (await t.deps.db.prisma.call.findMany({ where: { batchId: batch.id, status: { in: ['answered', 'in_progress'] } } })).map((c) => c.id),
      );
      expect(answeredAtKill.size).toBeGreaterThan(0);

      // A survivor takes over once the dead worker's leases (LEASE_MS 1000, real time) lapse.
      t.clock.set(new Date(Date.now() + 1_500));
      await testWorker(t.deps).drain({ timeoutMs: 30_000 });
      const { batch: done, calls: rows, events } = await expectConsistentBatch(t.deps, batch.id);
      expect(done.status).toBe('completed');
      expect(
        rows
          .filter((r) => r.disconnectReason === 'dispatcher_lost')
          .map((r) => r.id)
          .sort(),
      ).toEqual([...lostIds].sort());
      // Exactly one dial per number of each call, whoever dialled it.
      for (const r of rows) {
        const dials = events.filter((e) => e.call_id === r.id && e.detail?.event === 'dial').map((e) => e.detail!.number);
        expect(dials.length).toBe(r.attempts);
        expect(dials[0]).toBe(r.phoneNumber);
      }
      expect(new Set(events.filter((e) => e.detail?.event === 'dial').map((e) => String(e.detail!.worker ?? '').split('#')[0]))).toContain('child');

      // The events, as queued: each call exactly one terminal event, named by the status it ended
      // in, and one call.analyzed if it was answered (docs/webhooks.md, "Events").
      const queued = await callWebhookRows(batch.id);
      for (const r of rows) {
        const mine = queued.filter((e) => e.callId === r.id);
        const terminal = r.status === 'completed' ? 'call.completed' : 'call.failed';
        expect({ call: r.id, status: r.status, events: mine.map((e) => e.type).sort() }).toEqual({
          call: r.id,
          status: r.status,
          events: (r.transcriptStatus === null ? [terminal] : [terminal, 'call.analyzed']).sort(),
        });
      }
      // The answered calls the dead worker held: failed by the system, both events queued together
      // with the same final record.
      for (const id of answeredAtKill) {
        const mine = queued.filter((e) => e.callId === id);
        expect(mine.map((e) => e.type)).toEqual(['call.failed', 'call.analyzed']);
        const [failed, analyzed] = mine;
        expect(failed.data).toMatchObject({
          status: 'failed',
          reason: 'failed',
          disconnect_reason: 'dispatcher_lost',
          hangup_by: 'system',
          transcript_status: 'failed',
        });
        expect({ ...failed.data, reason: undefined }).toEqual({ ...analyzed.data, reason: undefined });
        expect(failed.createdAt).toBe(analyzed.createdAt);
      }
      for (const id of lostIds.filter((id) => !answeredAtKill.has(id))) {
        expect(queued.filter((e) => e.callId === id).map((e) => e.type)).toEqual(['call.failed']);
      }

      // What an integrator receives: whatever the dead process was sending is sent again with the
      // same webhook-id, so per call the distinct events are exactly those queued.
      t.clock.advance(t.deps.config.WEBHOOK_LEASE_MS + 1_000);
      const delivering = { ...t.deps, config: { ...t.deps.config, WEBHOOK_ALLOW_PRIVATE: true } };
      await waitFor(async () => (await deliverDue(delivering, { limit: 100 })).length === 0, { what: 'every event delivered' });
      const received = new Map(rx.bodies().map((e) => [e.id, e]));
      const receivedCalls = [...received.values()].filter((e) => e.type.startsWith('call.'));
      expect(receivedCalls.map((e) => `${e.data.call_id} ${e.type}`).sort()).toEqual(queued.map((e) => `${e.callId} ${e.type}`).sort());
    } finally {
      await rx.close();
    }
  }, 180_000);

  it('SIGTERM stops leasing and lets calls in flight finish before the process exits (PostgreSQL only: PGlite is single-process)', async () => {
    t.clock.set(new Date());
    const { batch } = await insertBatch(t.deps, a, {
      contacts: 20,
      batch: { concurrency: 3 },
      callOverrides: (i) => ({ status: 'queued', phoneNumber: phoneEndingIn(4, i) }),
    });
    const child = startWorkerProcess({ SIM_CALL_MS: '500', LEASE_MS: '10000' });
    await waitFor(async () => (await t.deps.db.prisma.batch.findUniqueOrThrow({ where: { id: batch.id } })).inProgress > 0, {
      timeoutMs: 60_000,
      what: 'calls in flight',
      abortIf: exitedEarly(child),
    });
    child.kill('SIGTERM');
    const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    expect(code).toBe(0);
    const rows = await calls(batch.id);
    // Nothing left in flight or leased: dialled calls finished normally, the rest wait unleased.
    expect(rows.filter((r) => !['completed', 'queued'].includes(r.status))).toEqual([]);
    expect(rows.filter((r) => r.leaseOwner !== null)).toEqual([]);
    expect(rows.filter((r) => r.status === 'queued').length).toBeGreaterThan(0);
    expect(rows.some((r) => r.disconnectReason === 'worker_shutdown')).toBe(false);
    await testWorker(t.deps).drain({ timeoutMs: 30_000 });
    expect((await expectConsistentBatch(t.deps, batch.id)).batch.status).toBe('completed');
  }, 120_000);
});

// ---- helpers ----------------------------------------------------------------------------------

/** For waitFor: stop waiting at once if the worker process died on its own. */
const exitedEarly = (child: ChildProcess) => () => {
  if (child.exitCode !== null) throw new Error(`worker process exited early (${child.exitCode})`);
};

/** The call events queued in the webhook outbox for a batch, in the order they were queued. */
async function callWebhookRows(batchId: string) {
  const rows = await t.deps.db.prisma.$queryRaw<{ event_type: string; payload: { created_at: string; data: Record<string, unknown> } }[]>`
    SELECT event_type, payload FROM webhook_deliveries WHERE batch_id = ${batchId} AND event_type LIKE 'call.%' ORDER BY id`;
  return rows.map((r) => ({ type: r.event_type, callId: String(r.payload.data.call_id), createdAt: r.payload.created_at, data: r.payload.data }));
}

function startWorkerProcess(env: Record<string, string>): ChildProcess {
  const root = path.resolve(import.meta.dirname, '../..');
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'src/worker.ts')], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: t.testDb.url!,
      APP_SECRET: t.deps.appSecret,
      MIGRATE_ON_START: 'false',
      LOG_LEVEL: 'warn',
      WORKER_POLL_MS: '20',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr!.on('data', (d) => process.stderr.write(`[worker] ${d}`));
  return child;
}

/** A simulator that remembers how each call ended and can stop telling its listeners (a dead worker). */
function lookupProvider(clock: Parameters<typeof manualTimers>[0], opts: { forgetVoicemailLeft?: boolean } = {}) {
  const timers = manualTimers(clock);
  const inner = createSimulatorProvider({ callMs: 5_000, ringMs: 1_000, clock: timers });
  const results = new Map<string, CallEndResult>();
  const listeners = new Set<ProviderEventListener>();
  const state = { muted: false };
  inner.onEvent((e) => {
    if (e.type === 'ended') results.set(e.providerCallId, e.result);
    if (!state.muted) for (const l of listeners) l(e);
  });
  const provider: VoiceProvider = {
    name: 'lookup-sim',
    placeCall: (r) => inner.placeCall(r),
    hangup: (id, reason) => inner.hangup(id, reason),
    onEvent(l) {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    close: () => inner.close(),
    async lookup(id): Promise<ProviderCallLookup> {
      const r = results.get(id);
      if (!r) return { state: 'unknown' };
      if (!opts.forgetVoicemailLeft) return { state: 'ended', result: r };
      const { voicemailLeft: _said, ...told } = r;
      return { state: 'ended', result: told };
    },
  };
  return {
    provider,
    timers,
    get muted() {
      return state.muted;
    },
    set muted(v: boolean) {
      state.muted = v;
    },
  };
}
