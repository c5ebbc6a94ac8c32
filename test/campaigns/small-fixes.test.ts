// Issue 33's smaller defects (point 8), each reproduced on a controllable clock: batches created
// through REST, dialled by the worker with the simulator. Nothing sleeps: the clock moves, and the
// worker drains what is due.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { batchBody, CALL_BATCHES } from '../helpers/batch-requests.ts';
import { callEvents, expectConsistentBatch, testWorker } from '../helpers/dispatch.ts';

// Friday 2026-03-06 13:30Z: 08:30 in New York (EST).
const FRIDAY = new Date('2026-03-06T13:30:00.000Z');
const NY = '+12125550100';
const MINUTE = 60_000;

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ config: { RETRY_MIN_DELAY_SECONDS: '1' } });
});
afterAll(() => t.close());
beforeEach(() => t.clock.set(FRIDAY));

const account = () => t.seedAccount({ limits: { maxConcurrentCalls: 100 } });
const calls = (batchId: string) => t.deps.db.prisma.call.findMany({ where: { batchId }, orderBy: { seq: 'asc' } });
const batchRow = (id: string) => t.deps.db.prisma.batch.findUniqueOrThrow({ where: { id } });
const drain = () => testWorker(t.deps).drain();
const later = (ms: number) => t.clock.set(new Date(t.clock.now().getTime() + ms));

async function create(a: SeededAccount, contacts: Record<string, unknown>[], overrides: Record<string, unknown> = {}) {
  const res = await t.request('POST', CALL_BATCHES, {
    key: a.apiKey,
    body: batchBody(a, {
      contacts: contacts.map((c, i) => ({ contact_id: `c${i + 1}`, metadata: { sim: 'completed' }, ...c })),
      ...overrides,
    }),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data as { batch_id: string; accepted_contacts: number; rejected_contacts: number; validation_errors: any[] };
}

async function enforce(a: SeededAccount, window: Record<string, unknown> | null) {
  const r = await t.gql(
    `mutation($id: ID!, $w: CallingWindowInput) { adminUpdateAccount(id: $id, input: { enforcedCallingWindow: $w }) { id } }`,
    { id: a.account.id, w: window },
    ADMIN_TOKEN,
  );
  expect(r.body.errors).toBeUndefined();
}

describe('a: a manual batch never started, at its expires_at', () => {
  it('ends its calls expired and completes, as a started batch does; starting it then is refused', async () => {
    const a = await account();
    const { batch_id: id } = await create(a, [{ phone_number: '+14155550104' }, { phone_number: '+14155550114' }], {
      start_mode: 'manual',
      expires_at: '2026-03-06T13:40:00Z',
    });
    await drain();
    expect((await batchRow(id)).status).toBe('paused');
    expect((await calls(id)).map((c) => c.status)).toEqual(['pending', 'pending']);

    later(10 * MINUTE);
    await drain();
    expect((await calls(id)).map((c) => [c.status, c.disconnectReason, c.attempts])).toEqual([
      ['cancelled', 'expired', 0],
      ['cancelled', 'expired', 0],
    ]);
    const { batch } = await expectConsistentBatch(t.deps, id);
    expect([batch.status, batch.cancelled, batch.queued]).toEqual(['completed', 2, 0]);
    const start = await t.request('POST', `${CALL_BATCHES}/${id}/start`, { key: a.apiKey });
    expect(start.status).toBe(409);
    expect((await callEvents(t.deps, id)).filter((e) => e.detail?.event === 'dial')).toEqual([]);
  });
});
