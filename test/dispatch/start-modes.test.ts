// Start modes end to end: batches created through the API, dispatched by a worker on the test clock.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { batchBody, CALL_BATCHES } from '../helpers/batch-requests.ts';
import { expectConsistentBatch, testWorker } from '../helpers/dispatch.ts';

let t: TestApp;
let a: SeededAccount;

beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount();
});
afterAll(() => t.close());

async function create(overrides: Record<string, unknown>): Promise<string> {
  const res = await t.request('POST', CALL_BATCHES, { key: a.apiKey, body: batchBody(a, overrides) });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect(res.body.data.status).toBe('pending');
  return res.body.data.batch_id;
}

const stored = (id: string) => t.deps.db.prisma.batch.findUniqueOrThrow({ where: { id } });
const dials = (id: string) => t.deps.db.prisma.call.count({ where: { batchId: id, attempts: { gt: 0 } } });

describe('start modes', () => {
  it('immediate: dispatches at once', async () => {
    const id = await create({ start_mode: 'immediate' });
    expect((await stored(id)).status).toBe('queued');
    await testWorker(t.deps).drain();
    const { batch } = await expectConsistentBatch(t.deps, id);
    expect(batch.status).toBe('completed');
    expect(batch.startedAt).not.toBeNull();
  });

  it('scheduled across the spring-forward change: starts at 09:00 Berlin summer time (07:00Z), not an hour late', async () => {
    // Created before the change (CET, UTC+01:00), scheduled for the first day of CEST (UTC+02:00).
    t.clock.set(new Date('2025-03-29T12:00:00.000Z'));
    const id = await create({
      start_mode: 'scheduled',
      schedule_date: '2025-03-30',
      schedule_time: '09:00',
      schedule_timezone: 'Europe/Berlin (CET, UTC+01:00)',
    });
    expect((await stored(id)).scheduledAt.toISOString()).toBe('2025-03-30T07:00:00.000Z');
    const worker = testWorker(t.deps);

    t.clock.set(new Date('2025-03-30T06:59:59.999Z'));
    await worker.drain();
    expect((await stored(id)).status).toBe('pending');
    expect(await dials(id)).toBe(0);

    t.clock.set(new Date('2025-03-30T07:00:00.000Z'));
    await worker.drain();
    const { batch } = await expectConsistentBatch(t.deps, id);
    expect(batch.status).toBe('completed');
    expect(batch.startedAt!.toISOString()).toBe('2025-03-30T07:00:00.000Z');
  });

  it('scheduled in the fall-back fold: the earlier 01:30 New York (05:30Z) starts it', async () => {
    t.clock.set(new Date('2025-11-01T12:00:00.000Z'));
    const id = await create({
      start_mode: 'scheduled',
      schedule_date: '2025-11-02',
      schedule_time: '01:30',
      schedule_timezone: 'America/New_York',
    });
    expect((await stored(id)).scheduledAt.toISOString()).toBe('2025-11-02T05:30:00.000Z');
    const worker = testWorker(t.deps);
    t.clock.set(new Date('2025-11-02T05:29:00.000Z'));
    await worker.drain();
    expect((await stored(id)).status).toBe('pending');
    t.clock.set(new Date('2025-11-02T05:30:00.000Z'));
    await worker.drain();
    expect((await stored(id)).status).toBe('completed');
  });

  it('manual: waits in paused until started (REST), then dispatches', async () => {
    const id = await create({ start_mode: 'manual' });
    expect((await stored(id)).status).toBe('paused');
    const worker = testWorker(t.deps);
    await worker.drain();
    expect((await stored(id)).status).toBe('paused');
    expect(await dials(id)).toBe(0);

    const res = await t.request('POST', `${CALL_BATCHES}/${id}/start`, { key: a.apiKey, body: {} });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status_code: 200, message: 'Call batch started successfully', error: null });
    expect(res.body.data).toMatchObject({ batch_id: id, status: 'queued', start_mode: 'manual', started_at: null, queued: 2 });

    await worker.drain();
    const { batch } = await expectConsistentBatch(t.deps, id);
    expect(batch.status).toBe('completed');
  });

  it('a scheduled batch can be started early', async () => {
    t.clock.set(new Date('2025-06-01T10:00:00.000Z'));
    const id = await create({ start_mode: 'scheduled', schedule_date: '2025-06-20', schedule_time: '10:00' });
    const res = await t.gql(`mutation($id: ID!) { startBatch(id: $id) { id status } }`, { id }, a.apiKey);
    expect(res.body.data.startBatch).toEqual({ id, status: 'queued' });
    await testWorker(t.deps).drain();
    expect((await stored(id)).status).toBe('completed');
  });
});
