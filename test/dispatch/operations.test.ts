// start / pause / resume / cancel at each stage of a batch, on both surfaces, with calls kept in
// flight by a simulator that runs on the test clock.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { insertBatch } from '../helpers/fixtures.ts';
import { expectConsistentBatch, manualSimulator, phoneEndingIn, testWorker } from '../helpers/dispatch.ts';
import type { DispatchWorker } from '../../src/dispatch/worker.ts';
import { BATCH_OPTION_REST_NAMES } from '../../src/domain/batch-options.ts';

const BASE = '/api/v1/public/call-batches';
let t: TestApp;
let a: SeededAccount;
let other: SeededAccount;

beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount({ limits: { maxConcurrentCalls: 50 } });
  other = await t.seedAccount();
});
afterAll(() => t.close());
beforeEach(() => t.clock.set(new Date('2025-05-05T10:00:00.000Z')));

const op = (id: string, name: string, key = a.apiKey) => t.request('POST', `${BASE}/${id}/${name}`, { key, body: {} });
const gqlOp = (id: string, name: string, key = a.apiKey) =>
  t.gql(`mutation($id: ID!) { ${name}Batch(id: $id) { id status queued inProgress completed failed cancelled completedAt } }`, { id }, key);
const stored = (id: string) => t.deps.db.prisma.batch.findUniqueOrThrow({ where: { id } });
const calls = (id: string) => t.deps.db.prisma.call.findMany({ where: { batchId: id }, orderBy: { seq: 'asc' } });

function expectConflict(res: { status: number; body: any }, message: string) {
  expect(res.status).toBe(409);
  expect(res.body).toEqual({ status_code: 409, message, error: { code: 'INVALID_STATE', details: [] }, data: null });
}

describe('pending (scheduled, not yet due)', () => {
  it('cannot be paused or resumed; cancel cancels every call and finishes the batch at once', async () => {
    const { batch } = await insertBatch(t.deps, a, {
      contacts: 3,
      startMode: 'scheduled',
      batch: { scheduledAt: new Date('2025-05-06T10:00:00.000Z') },
    });
    expect(batch.status).toBe('pending');
    expectConflict(await op(batch.id, 'pause'), 'Cannot pause a batch that is pending');
    expectConflict(await op(batch.id, 'resume'), 'Cannot resume a batch that is pending');

    const res = await op(batch.id, 'cancel');
    expect(res.status).toBe(200);
    expect(res.body.message).toBe('Call batch cancelled successfully');
    expect(res.body.data).toMatchObject({
      batch_id: batch.id,
      status: 'cancelled',
      queued: 0,
      in_progress: 0,
      cancelled: 3,
      accepted_contacts: 3,
      started_at: null,
      completed_at: '2025-05-05T10:00:00.000Z',
    });
    expect(Object.keys(res.body.data)).toEqual([
      'batch_id',
      'agent_id',
      'version_id',
      'status',
      'start_mode',
      'scheduled_at',
      'timezone',
      'concurrency',
      'total_contacts',
      'accepted_contacts',
      'rejected_contacts',
      'callbacks',
      'queued',
      'in_progress',
      'completed',
      'failed',
      'cancelled',
      'created_at',
      'started_at',
      'completed_at',
      'retry',
      'expires_at',
      'calling_window',
      'enforced_calling_window',
      ...BATCH_OPTION_REST_NAMES,
    ]);
    const { calls: after } = await expectConsistentBatch(t.deps, batch.id);
    expect(after.every((c) => c.status === 'cancelled' && c.completedAt !== null)).toBe(true);

    // Nothing is dialled later, even when its time comes.
    t.clock.set(new Date('2025-05-07T10:00:00.000Z'));
    await testWorker(t.deps).drain();
    expect((await stored(batch.id)).status).toBe('cancelled');
    expect((await calls(batch.id)).every((c) => c.attempts === 0)).toBe(true);
    for (const name of ['start', 'pause', 'resume', 'cancel']) expectConflict(await op(batch.id, name), `Cannot ${name} a batch that is cancelled`);
  });
});

describe('paused (manual, never started)', () => {
  it('cannot be paused again; resume starts it like start does', async () => {
    const { batch } = await insertBatch(t.deps, a, { contacts: 2, startMode: 'manual' });
    expect(batch.status).toBe('paused');
    expectConflict(await op(batch.id, 'pause'), 'Cannot pause a batch that is paused');
    const res = await gqlOp(batch.id, 'resume');
    expect(res.body.data.resumeBatch).toMatchObject({ id: batch.id, status: 'queued', queued: 2 });
    await testWorker(t.deps).drain();
    expect((await stored(batch.id)).status).toBe('completed');
  });

  it('can be cancelled before it ever ran (GraphQL)', async () => {
    const { batch } = await insertBatch(t.deps, a, { contacts: 2, startMode: 'manual' });
    const res = await gqlOp(batch.id, 'cancel');
    expect(res.body.data.cancelBatch).toMatchObject({ status: 'cancelled', queued: 0, cancelled: 2 });
    await expectConsistentBatch(t.deps, batch.id);
  });
});

/** Batch details over REST, with the counter rule checked on every read. */
async function details(id: string) {
  const res = await t.request('GET', `${BASE}/${id}`, { key: a.apiKey });
  expect(res.status).toBe(200);
  const d = res.body.data;
  expect(d.queued + d.in_progress + d.completed + d.failed + d.cancelled).toBe(d.accepted_contacts);
  return d;
}

describe('queued (started, nothing dialled yet)', () => {
  async function startedManualBatch(contacts: number) {
    const { batch } = await insertBatch(t.deps, a, {
      contacts,
      startMode: 'manual',
      callOverrides: (i) => ({ status: 'queued', phoneNumber: phoneEndingIn(4, i) }),
    });
    const started = await op(batch.id, 'start');
    expect(started.status).toBe(200);
    expect(started.body).toMatchObject({
      message: 'Call batch started successfully',
      data: { status: 'queued', queued: contacts, started_at: null },
    });
    return batch;
  }

  it('pause holds it before any dial; start again (or resume) releases it', async () => {
    const batch = await startedManualBatch(3);
    expectConflict(await op(batch.id, 'start'), 'Cannot start a batch that is queued');
    expectConflict(await op(batch.id, 'resume'), 'Cannot resume a batch that is queued');

    const paused = await op(batch.id, 'pause');
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({
      message: 'Call batch paused successfully',
      data: { status: 'paused', queued: 3, in_progress: 0, started_at: null },
    });
    const tick = await testWorker(t.deps).runOnce();
    expect(tick.claimed).toBe(0);
    expect((await calls(batch.id)).every((c) => c.status === 'queued' && c.attempts === 0)).toBe(true);
    expect(await details(batch.id)).toMatchObject({ status: 'paused', queued: 3 });

    expect((await op(batch.id, 'start')).body.data.status).toBe('queued');
    await testWorker(t.deps).drain();
    const { batch: done } = await expectConsistentBatch(t.deps, batch.id);
    expect([done.status, done.completed]).toEqual(['completed', 3]);
  });

  it('cancel cancels every call and finishes the batch at once; nothing is dialled later', async () => {
    const batch = await startedManualBatch(4);
    const res = await op(batch.id, 'cancel');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      message: 'Call batch cancelled successfully',
      data: {
        status: 'cancelled',
        queued: 0,
        in_progress: 0,
        cancelled: 4,
        accepted_contacts: 4,
        started_at: null,
        completed_at: '2025-05-05T10:00:00.000Z',
      },
    });
    expect(await details(batch.id)).toMatchObject({ status: 'cancelled', cancelled: 4 });
    await testWorker(t.deps).drain();
    const { calls: after } = await expectConsistentBatch(t.deps, batch.id);
    expect(after.every((c) => c.status === 'cancelled' && c.attempts === 0)).toBe(true);
    const results = await t.request('GET', `${BASE}/${batch.id}/results`, { key: a.apiKey });
    expect(results.body.data.status).toBe('cancelled');
  });

  it('an immediate batch waiting for the worker can be paused and cancelled the same way', async () => {
    const { batch } = await insertBatch(t.deps, a, { contacts: 2, callOverrides: (i) => ({ status: 'queued', phoneNumber: phoneEndingIn(4, i) }) });
    expect(batch.status).toBe('queued');
    expect((await op(batch.id, 'pause')).body.data).toMatchObject({ status: 'paused', queued: 2 });
    expect((await op(batch.id, 'cancel')).body.data).toMatchObject({ status: 'cancelled', queued: 0, cancelled: 2 });
    await expectConsistentBatch(t.deps, batch.id);
  });
});

describe('running, with calls in flight', () => {
  let sim: ReturnType<typeof manualSimulator>;
  let worker: DispatchWorker;

  beforeEach(() => {
    sim = manualSimulator(t.clock, { callMs: 10_000, ringMs: 2_000 });
    worker = testWorker(t.deps, { providers: sim.registry });
  });

  async function runningBatch(contacts: number) {
    const { batch } = await insertBatch(t.deps, a, {
      contacts,
      batch: { concurrency: 2 },
      callOverrides: (i) => ({ status: 'queued', phoneNumber: phoneEndingIn(4, i) }),
    });
    await worker.runOnce();
    await worker.settle();
    return batch;
  }

  it('pause: no new dials, calls in flight finish; resume: dialling goes on', async () => {
    const batch = await runningBatch(5);
    expect((await stored(batch.id)).status).toBe('running');
    expect((await calls(batch.id)).map((c) => c.status)).toEqual(['ringing', 'ringing', 'queued', 'queued', 'queued']);

    const paused = await op(batch.id, 'pause');
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ message: 'Call batch paused successfully', data: { status: 'paused', in_progress: 2, queued: 3 } });

    sim.timers.advance(10_000); // the two calls in flight end
    await worker.settle();
    await worker.runOnce();
    await worker.settle();
    let b = await stored(batch.id);
    expect({ status: b.status, queued: b.queued, inProgress: b.inProgress, completed: b.completed }).toEqual({
      status: 'paused',
      queued: 3,
      inProgress: 0,
      completed: 2,
    });
    expect((await calls(batch.id)).filter((c) => c.attempts > 0)).toHaveLength(2);

    const resumed = await op(batch.id, 'resume');
    expect(resumed.body).toMatchObject({ message: 'Call batch resumed successfully', data: { status: 'queued' } });
    await worker.runOnce();
    await worker.settle();
    b = await stored(batch.id);
    expect({ status: b.status, inProgress: b.inProgress, queued: b.queued }).toEqual({ status: 'running', inProgress: 2, queued: 1 });

    for (let i = 0; i < 4; i++) {
      sim.timers.advance(10_000);
      await worker.settle();
      await worker.runOnce();
      await worker.settle();
    }
    const done = await expectConsistentBatch(t.deps, batch.id);
    expect(done.batch.status).toBe('completed');
    expect(done.batch.completed).toBe(5);
  });

  it('start and resume of a running batch are refused with 409 and change nothing', async () => {
    const batch = await runningBatch(4);
    expect((await stored(batch.id)).status).toBe('running');
    expectConflict(await op(batch.id, 'start'), 'Cannot start a batch that is running');
    expectConflict(await op(batch.id, 'resume'), 'Cannot resume a batch that is running');
    const g = await gqlOp(batch.id, 'start');
    expect(g.body.errors![0]).toMatchObject({ message: 'Cannot start a batch that is running', extensions: { code: 'CONFLICT' } });
    expect(await details(batch.id)).toMatchObject({ status: 'running', in_progress: 2, queued: 2 });
    // The refused operations did not disturb dialling.
    for (let i = 0; i < 3; i++) {
      sim.timers.advance(10_000);
      await worker.settle();
      await worker.runOnce();
      await worker.settle();
    }
    const done = await expectConsistentBatch(t.deps, batch.id);
    expect([done.batch.status, done.batch.completed]).toEqual(['completed', 4]);
  });

  it('cancel of a paused batch with calls in flight: undialled calls cancelled, calls in flight end once, sum rule holds', async () => {
    const batch = await runningBatch(5);
    sim.timers.advance(3_000); // both answered, talking
    await worker.settle();
    expect((await op(batch.id, 'pause')).body.data).toMatchObject({ status: 'paused', in_progress: 2, queued: 3 });

    const res = await op(batch.id, 'cancel');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      message: 'Call batch cancelled successfully',
      data: { status: 'cancelled', queued: 0, in_progress: 2, completed: 0, cancelled: 3, accepted_contacts: 5, completed_at: null },
    });
    expect(await details(batch.id)).toMatchObject({ status: 'cancelled', in_progress: 2, cancelled: 3 });
    const mid = await calls(batch.id);
    expect(mid.map((c) => c.status)).toEqual(['in_progress', 'in_progress', 'cancelled', 'cancelled', 'cancelled']);

    const tick = await worker.runOnce();
    expect(tick.claimed).toBe(0);
    await worker.settle();
    const { batch: b, calls: after } = await expectConsistentBatch(t.deps, batch.id);
    expect(b.status).toBe('cancelled');
    expect(b.completedAt).not.toBeNull();
    expect({ completed: b.completed, cancelled: b.cancelled, inProgress: b.inProgress, queued: b.queued }).toEqual({
      completed: 2,
      cancelled: 3,
      inProgress: 0,
      queued: 0,
    });
    const sorted = after.sort((x, y) => x.seq - y.seq);
    // The two in flight ended (as any call of a cancelled batch: hung up by the system), dialled once each.
    expect(sorted.slice(0, 2).map((c) => [c.status, c.hangupBy, c.disconnectReason, c.attempts])).toEqual([
      ['completed', 'system', 'cancelled', 1],
      ['completed', 'system', 'cancelled', 1],
    ]);
    expect(sorted.slice(2).every((c) => c.status === 'cancelled' && c.attempts === 0)).toBe(true);
    expect(await details(batch.id)).toMatchObject({ status: 'cancelled', completed: 2, cancelled: 3, in_progress: 0 });
    // Nothing left to dial, whatever happens next.
    sim.timers.advance(60_000);
    await worker.drain();
    expect((await calls(batch.id)).filter((c) => c.attempts > 0)).toHaveLength(2);
  });

  it('a paused batch whose last calls end while paused is completed', async () => {
    const batch = await runningBatch(2);
    expect((await op(batch.id, 'pause')).status).toBe(200);
    sim.timers.advance(10_000);
    await worker.settle();
    const { batch: b } = await expectConsistentBatch(t.deps, batch.id);
    expect(b.status).toBe('completed');
    expect(b.completedAt).not.toBeNull();
  });

  it('cancel: undialled calls are cancelled at once, calls in flight are hung up by the system', async () => {
    const batch = await runningBatch(5);
    sim.timers.advance(3_000); // both answered (ring 2 s), talking
    await worker.settle();
    expect((await calls(batch.id)).slice(0, 2).map((c) => c.status)).toEqual(['in_progress', 'in_progress']);

    const res = await gqlOp(batch.id, 'cancel');
    expect(res.body.data.cancelBatch).toMatchObject({ status: 'cancelled', queued: 0, inProgress: 2, cancelled: 3, completedAt: null });

    const tick = await worker.runOnce(); // sees the cancelled batch, hangs up
    expect(tick.hungUp).toBe(2);
    expect(tick.claimed).toBe(0);
    await worker.settle();
    const { batch: b, calls: after } = await expectConsistentBatch(t.deps, batch.id);
    expect(b.status).toBe('cancelled');
    expect(b.completedAt?.toISOString()).toBe('2025-05-05T10:00:03.000Z');
    expect({ completed: b.completed, cancelled: b.cancelled, inProgress: b.inProgress }).toEqual({ completed: 2, cancelled: 3, inProgress: 0 });
    const sorted = after.sort((x, y) => x.seq - y.seq);
    expect(sorted.slice(0, 2).map((c) => [c.status, c.hangupBy, c.disconnectReason])).toEqual([
      ['completed', 'system', 'cancelled'],
      ['completed', 'system', 'cancelled'],
    ]);
    expect(sorted.slice(2).every((c) => c.status === 'cancelled' && c.attempts === 0)).toBe(true);

    const results = await t.gql(`query($id: ID!) { batch(id: $id) { status } }`, { id: batch.id }, a.apiKey);
    expect(results.body.data.batch.status).toBe('cancelled');
  });

  it('cancel of a ringing call ends it failed with hangup_by system', async () => {
    const batch = await runningBatch(1);
    expect((await op(batch.id, 'cancel')).status).toBe(200);
    await worker.runOnce();
    await worker.settle();
    const [c] = await calls(batch.id);
    expect([c.status, c.hangupBy, c.disconnectReason]).toEqual(['failed', 'system', 'cancelled']);
    expect((await stored(batch.id)).completedAt).not.toBeNull();
  });
});

describe('finished batches and foreign ids', () => {
  it('a completed batch refuses every operation', async () => {
    const { batch } = await insertBatch(t.deps, a, { contacts: 1 });
    await testWorker(t.deps).drain();
    expect((await stored(batch.id)).status).toBe('completed');
    for (const name of ['start', 'pause', 'resume', 'cancel']) expectConflict(await op(batch.id, name), `Cannot ${name} a batch that is completed`);
    const g = await gqlOp(batch.id, 'pause');
    expect(g.body.errors![0]).toMatchObject({ message: 'Cannot pause a batch that is completed', extensions: { code: 'CONFLICT' } });
  });

  it("another account's batch and an unknown id are 404 Call batch not found", async () => {
    const { batch } = await insertBatch(t.deps, a, { contacts: 1, startMode: 'manual' });
    for (const name of ['start', 'pause', 'resume', 'cancel']) {
      const res = await op(batch.id, name, other.apiKey);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ detail: 'Call batch not found' });
    }
    expect((await op('sched_unknown', 'start')).body).toEqual({ detail: 'Call batch not found' });
    const g = await gqlOp(batch.id, 'start', other.apiKey);
    expect(g.body.errors![0]).toMatchObject({ message: 'Call batch not found', extensions: { code: 'NOT_FOUND' } });
    expect((await stored(batch.id)).status).toBe('paused');
  });

  it('operations need a valid API key', async () => {
    const res = await t.request('POST', `${BASE}/sched_x/start`, { key: 'sk_wrong', body: {} });
    expect(res.status).toBe(401);
  });
});

describe('request bodies', () => {
  it('takes no body (as `curl -X POST` sends) and still checks one that is sent', async () => {
    const { batch } = await insertBatch(t.deps, a, { contacts: 1, startMode: 'manual' });
    const bare = await t.request('POST', `${BASE}/${batch.id}/pause`, { key: a.apiKey });
    expect(bare.status).toBe(409);
    expect(bare.body.message).toBe('Cannot pause a batch that is paused');
    const started = await t.request('POST', `${BASE}/${batch.id}/start`, { key: a.apiKey });
    expect(started.status).toBe(200);
    expect(started.body.data.status).toBe('queued');
    const broken = await t.request('POST', `${BASE}/${batch.id}/cancel`, {
      key: a.apiKey,
      rawBody: '{',
      headers: { 'content-type': 'application/json' },
    });
    expect(broken.status).toBe(422);
    expect((await stored(batch.id)).status).toBe('queued');
  });
});
