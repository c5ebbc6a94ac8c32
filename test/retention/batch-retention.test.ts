// Batch retention (BATCH_RETENTION_DAYS) on a controllable clock: a finished batch whose last call
// ended before the retention goes with its calls, their history and recordings and its webhook
// deliveries, a chunk at a time; unfinished, recent, still-analysing and still-owing batches stay,
// and so does the do-not-call list. Deleted batches read like batches that never existed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { batchBody, CALL_BATCHES } from '../helpers/batch-requests.ts';
import { insertBatch } from '../helpers/fixtures.ts';
import { testWorker } from '../helpers/dispatch.ts';
import { loadConfig } from '../../src/config.ts';
import { pruneFinishedBatches } from '../../src/services/retention/prune-batches.ts';

const T0 = new Date('2031-03-01T12:00:00.000Z');
const DAY = 86_400_000;
const at = (ms: number) => new Date(T0.getTime() + ms);
const HOOK = 'http://127.0.0.1:9/hooks';

let t: TestApp;
let a: SeededAccount;
beforeAll(async () => {
  t = await createTestApp({ config: { BATCH_RETENTION_DAYS: '30', WEBHOOK_ALLOW_PRIVATE: 'true' } });
  a = await t.seedAccount({ outcomeKeys: ['interested', 'opt_out'] });
  const r = await t.gql('mutation($id: ID!) { updateAgent(id: $id, input: { optOutOutcomeKey: "opt_out" }) { id } }', { id: a.agent.id }, a.apiKey);
  expect(r.body.errors).toBeUndefined();
});
afterAll(() => t.close());

/** Creates a batch over REST (one contact per `sim` outcome) and runs it to its end with the worker. */
async function runBatch(sims: string[], overrides: Record<string, unknown> = {}): Promise<string> {
  const contacts = sims.map((sim, i) => ({ contact_id: `c${i + 1}`, phone_number: `+1415555${String(2000 + i)}`, metadata: { sim } }));
  const res = await t.request('POST', CALL_BATCHES, {
    key: a.apiKey,
    body: batchBody(a, { contacts, callback_url: HOOK, recording_enabled: true, ...overrides }),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const id: string = res.body.data.batch_id;
  await testWorker(t.deps).drain();
  return id;
}

/** Marks a batch's webhook deliveries as delivered (no delivery worker runs here). */
const deliverAll = (batchId: string) =>
  t.deps.db.prisma.webhookDelivery.updateMany({ where: { batchId }, data: { status: 'delivered', deliveredAt: t.clock.now(), attempts: 1 } });

/** Every row a batch owns, by table. */
async function rowsOf(batchId: string, callIds: string[]) {
  const p = t.deps.db.prisma;
  return {
    batches: await p.batch.count({ where: { id: batchId } }),
    calls: await p.call.count({ where: { batchId } }),
    callEvents: await p.callEvent.count({ where: { callId: { in: callIds } } }),
    recordings: await p.recording.count({ where: { callId: { in: callIds } } }),
    deliveries: await p.webhookDelivery.count({ where: { batchId } }),
  };
}
const callIdsOf = async (batchId: string) => (await t.deps.db.prisma.call.findMany({ where: { batchId }, select: { id: true } })).map((c) => c.id);
const GONE = { batches: 0, calls: 0, callEvents: 0, recordings: 0, deliveries: 0 };

describe('batch retention', () => {
  it('deletes old finished batches with every dependent row, a chunk at a time; keeps the rest and the do-not-call list', async () => {
    t.clock.set(T0);
    // Completed: answered calls with recordings and analysis, unanswered ones, an opt-out.
    const old = await runBatch(['completed', 'completed', 'no_answer', 'busy', 'opt_out', 'completed', 'failed']);
    await deliverAll(old);
    // Cancelled before it started: its calls end cancelled and the batch closes.
    const cancelled = await runBatch(['completed', 'completed', 'completed'], { start_mode: 'manual' });
    expect((await t.request('POST', `${CALL_BATCHES}/${cancelled}/cancel`, { key: a.apiKey })).status).toBe(200);
    await testWorker(t.deps).drain();
    await deliverAll(cancelled);
    // Old but still owed to its receiver: one delivery pending.
    const owing = await runBatch(['completed', 'no_answer']);
    await deliverAll(owing);
    await t.deps.db.prisma.webhookDelivery.updateMany({
      where: { batchId: owing, eventType: 'batch.completed' },
      data: { status: 'pending', deliveredAt: null },
    });
    // Old but one call's analysis is still outstanding.
    const analysing = await runBatch(['completed', 'completed']);
    await deliverAll(analysing);
    await t.deps.db.prisma.call.updateMany({ where: { batchId: analysing, seq: 2 }, data: { transcriptStatus: 'processing' } });
    // Old and never finished: waiting for its manual start.
    const paused = await runBatch(['completed'], { start_mode: 'manual' });
    // Finished a day later: inside the retention when the others are past it.
    t.clock.set(at(DAY));
    const recent = await runBatch(['completed', 'busy']);
    await deliverAll(recent);
    // Running since before the others (written here: no worker runs after this).
    const { batch: running } = await insertBatch(t.deps, a, { contacts: 3, status: 'running', createdAt: at(-DAY) });

    const doneAt = await t.deps.db.prisma.batch.findMany({
      where: { id: { in: [old, cancelled, owing, analysing, recent] } },
      select: { id: true, status: true, completedAt: true },
    });
    expect(Object.fromEntries(doneAt.map((b) => [b.id, b.status]))).toEqual({
      [old]: 'completed',
      [cancelled]: 'cancelled',
      [owing]: 'completed',
      [analysing]: 'completed',
      [recent]: 'completed',
    });
    for (const b of doneAt) expect(b.completedAt!.getTime()).toBeLessThanOrEqual(b.id === recent ? at(DAY).getTime() : T0.getTime());

    const oldCalls = await callIdsOf(old);
    const cancelledCalls = await callIdsOf(cancelled);
    const before = await rowsOf(old, oldCalls);
    const cancelledBefore = await rowsOf(cancelled, cancelledCalls);
    // The batch really owns rows in every table: history, recordings, deliveries (more than a chunk of each).
    expect(before.calls).toBe(7);
    expect(before.callEvents).toBeGreaterThan(14);
    expect(before.recordings).toBe(4);
    expect(before.deliveries).toBeGreaterThan(2);
    const optedOut = await t.deps.db.prisma.suppression.findMany({ where: { accountId: a.account.id } });
    expect(optedOut.map((s) => s.source)).toEqual([`call:${oldCalls[4]}`]);
    const kept = [owing, analysing, paused, running.id, recent];
    const keptBefore = await Promise.all(kept.map(async (id) => rowsOf(id, await callIdsOf(id))));

    // One minute past 30 days after the old batches ended.
    t.clock.set(at(30 * DAY + 60_000));
    const r = await pruneFinishedBatches(t.deps, { calls: 2, deliveries: 2 });
    expect(r).toEqual({ batches: 2, calls: 10, deliveries: before.deliveries + cancelledBefore.deliveries, waiting: 1 });

    expect(await rowsOf(old, oldCalls)).toEqual(GONE);
    expect(await rowsOf(cancelled, cancelledCalls)).toEqual(GONE);
    expect(await Promise.all(kept.map(async (id) => rowsOf(id, await callIdsOf(id))))).toEqual(keptBefore);
    // The do-not-call list is the account's: the opt-out stays, naming a call that is gone.
    expect(await t.deps.db.prisma.suppression.findMany({ where: { accountId: a.account.id } })).toEqual(optedOut);

    // Deleted batches answer exactly like batches that never existed.
    const unknown = 'sched_00000000000000000000000000000000';
    const routes: [method: string, path: string][] = [
      ['GET', ''],
      ['GET', '/calls'],
      ['GET', '/results'],
      ['GET', '/results.csv'],
      ['POST', '/cancel'],
    ];
    for (const [method, path] of routes) {
      const never = await t.request(method, `${CALL_BATCHES}/${unknown}${path}`, { key: a.apiKey });
      expect(never.status).toBe(404);
      for (const id of [old, cancelled]) {
        const res = await t.request(method, `${CALL_BATCHES}/${id}${path}`, { key: a.apiKey });
        expect({ status: res.status, body: res.body }).toEqual({ status: never.status, body: never.body });
      }
    }
    const q = 'query($id: ID!) { batch(id: $id) { id } }';
    const never = await t.gql(q, { id: unknown }, a.apiKey);
    expect(never.body.errors).toHaveLength(1);
    expect((await t.gql(q, { id: old }, a.apiKey)).body.errors).toEqual(never.body.errors);
    // node(id): a deleted batch's is what an unknown one's is; a kept one's is there.
    const node = async (id: string) => (await t.gql('query($id: ID!) { node(id: $id) { id } }', { id }, a.apiKey)).body;
    expect(await node(old)).toEqual(await node(unknown));
    expect((await node(recent)).data.node).toEqual({ id: recent });
    const callQ = 'query($id: ID!) { call(id: $id) { id } }';
    expect((await t.gql(callQ, { id: oldCalls[0] }, a.apiKey)).body.errors?.[0]).toMatchObject({
      message: 'Call not found',
      extensions: { code: 'NOT_FOUND' },
    });
    const records = await t.request('GET', '/api/v1/public/call-records?start_date=2031-03-01&end_date=2031-03-02&page_size=200', { key: a.apiKey });
    expect(records.status).toBe(200);
    const listed = new Set(records.body.data.items.map((c: { batch_id: string }) => c.batch_id));
    expect(listed.has(old) || listed.has(cancelled)).toBe(false);
    expect(listed.has(recent)).toBe(true);

    // Nothing more is old enough; a day later the recent batch is too.
    expect(await pruneFinishedBatches(t.deps)).toEqual({ batches: 0, calls: 0, deliveries: 0, waiting: 1 });
    t.clock.set(at(31 * DAY + 60_000));
    const ids = async () => new Set((await t.deps.db.prisma.batch.findMany({ select: { id: true } })).map((b) => b.id));
    const left = await ids();
    await pruneFinishedBatches(t.deps);
    const after = await ids();
    expect([...left].filter((id) => !after.has(id))).toEqual([recent]);

    // The owed delivery finishes: the batch goes on the next run. Settled analysis: likewise.
    await deliverAll(owing);
    await t.deps.db.prisma.call.updateMany({ where: { batchId: analysing, seq: 2 }, data: { transcriptStatus: 'ready' } });
    expect(await pruneFinishedBatches(t.deps)).toMatchObject({ batches: 2, waiting: 0 });
    expect(await t.deps.db.prisma.batch.count({ where: { id: { in: [paused, running.id] } } })).toBe(2);
    // Out of the next tests' way (their worker would dial them).
    await t.deps.db.prisma.batch.deleteMany({ where: { id: { in: [paused, running.id] } } });
  });

  it('keeps everything with a retention of 0, the default', async () => {
    expect(loadConfig({}).BATCH_RETENTION_DAYS).toBe(0);
    t.clock.set(T0);
    const id = await runBatch(['completed', 'no_answer']);
    await deliverAll(id);
    const calls = await callIdsOf(id);
    const before = await rowsOf(id, calls);
    t.clock.set(at(3650 * DAY));
    const keepForever = { ...t.deps, config: { ...t.deps.config, BATCH_RETENTION_DAYS: 0 } };
    expect(await pruneFinishedBatches(keepForever)).toEqual({ batches: 0, calls: 0, deliveries: 0, waiting: 0 });
    expect(await rowsOf(id, calls)).toEqual(before);
    // The same batch with the suite's 30 days.
    expect(await pruneFinishedBatches(t.deps)).toMatchObject({ batches: 1, calls: 2 });
  });

  it('deletes a batch of more calls than several chunks; concurrent pruners share it', async () => {
    t.clock.set(T0);
    const { batch } = await insertBatch(t.deps, a, {
      contacts: 250,
      status: 'completed',
      createdAt: at(-DAY),
      callOverrides: (i) => ({ status: i % 2 ? 'completed' : 'no_answer', completedAt: T0 }),
      batch: { completedAt: T0 },
    });
    const calls = await callIdsOf(batch.id);
    await t.deps.db.prisma.$executeRaw`
      INSERT INTO call_events (account_id, call_id, from_status, to_status, at)
      SELECT account_id, id, 'ringing', status, ${T0} FROM calls WHERE batch_id = ${batch.id}`;
    await t.deps.db.prisma.$executeRaw`
      INSERT INTO recordings (call_id, account_id, content_type, data)
      SELECT id, account_id, 'audio/wav', decode('UklGRg==', 'base64') FROM calls WHERE batch_id = ${batch.id} AND seq <= 120`;
    t.clock.set(at(31 * DAY));
    const [x, y] = await Promise.all([pruneFinishedBatches(t.deps, { calls: 7 }), pruneFinishedBatches(t.deps, { calls: 7 })]);
    // Whichever took which chunks, every call went once and the batch once.
    expect(x.calls + y.calls).toBe(250);
    expect(x.batches + y.batches).toBe(1);
    expect(await rowsOf(batch.id, calls)).toEqual(GONE);
  });
});
