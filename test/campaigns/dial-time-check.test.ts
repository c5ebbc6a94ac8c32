// Every dial passes dialPermission at dial time, not only alternates: the claim picks calls by the
// window slots stored at create, at a retry or left by a lost worker, and a slot that no longer
// holds (here made stale on purpose, as an older create, a changed rule or a clock jump leaves
// it) must not lead to a dial. The call waits for its real opening, undialled and unannounced.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { batchBody, CALL_BATCHES } from '../helpers/batch-requests.ts';
import { callEvents, expectConsistentBatch, testWorker } from '../helpers/dispatch.ts';

let t: TestApp;
let a: SeededAccount;

beforeAll(async () => {
  t = await createTestApp({ config: { RETRY_MIN_DELAY_SECONDS: '1' } });
  a = await t.seedAccount({ limits: { maxConcurrentCalls: 100 } });
});
afterAll(() => t.close());

// 09:00-17:00 in New York: 14:00Z-22:00Z in January.
const WINDOW = { start: '09:00', end: '17:00', timezone: 'recipient' };
const setClock = (iso: string) => t.clock.set(new Date(iso));
const drain = () => testWorker(t.deps).drain();
const calls = (batchId: string) => t.deps.db.prisma.call.findMany({ where: { batchId }, orderBy: { seq: 'asc' } });
const sql = (text: string, params: unknown[]) => t.deps.db.prisma.$executeRawUnsafe(text, ...params);

async function create(sim: string, overrides: Record<string, unknown> = {}) {
  const res = await t.request('POST', CALL_BATCHES, {
    key: a.apiKey,
    body: batchBody(a, {
      contacts: [{ contact_id: 'c1', phone_number: '+12125550177', metadata: { sim } }],
      calling_window: WINDOW,
      callback_url: 'https://hooks.example.com/calls',
      ...overrides,
    }),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.batch_id as string;
}

/** Dials that reached the provider: each claim's `dial` event not followed by a withheld one. */
async function placedDials(batchId: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await callEvents(t.deps, batchId)) {
    if (e.detail?.event === 'dial') out.push(e.at.toISOString());
    if (e.detail?.event === 'dial_withheld') out.pop();
  }
  return out;
}

const webhookTypes = async (batchId: string) =>
  (await t.deps.db.prisma.webhookDelivery.findMany({ where: { batchId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] })).map(
    (d) => (d.payload as any).type,
  );

beforeEach(() => setClock('2026-01-15T17:00:00.000Z'));

describe('a claimed call whose window closed after its slot was stored', () => {
  it('a first dial: withheld at 17:30 New York time, placed at 09:00 the next morning', async () => {
    const id = await create('completed', { start_mode: 'manual' });
    // A stale slot: open until 05:00Z as far as the row says.
    await sql(`UPDATE calls SET window_closes_at = '2026-01-16T05:00:00Z' WHERE batch_id = $1`, [id]);
    setClock('2026-01-15T22:30:00.000Z');
    expect((await t.request('POST', `${CALL_BATCHES}/${id}/start`, { key: a.apiKey })).status).toBeLessThan(300);
    await drain();
    const [waiting] = await calls(id);
    expect([waiting.status, waiting.attempts, waiting.waitReason, waiting.nextAttemptAt?.toISOString(), waiting.leaseOwner]).toEqual([
      'queued',
      0,
      'calling_window',
      '2026-01-16T14:00:00.000Z',
      null,
    ]);
    expect(await placedDials(id)).toEqual([]);
    const withheld = (await callEvents(t.deps, id)).find((e) => e.detail?.event === 'dial_withheld');
    expect(withheld?.detail).toMatchObject({ reason: 'calling_window', number: '+12125550177', zones: ['America/New_York'] });
    // Nothing to announce: no dial was made.
    expect(await webhookTypes(id)).not.toContain('call.retry_scheduled');
    // REST shows it waiting for its window, with no attempt.
    const rest = await t.request('GET', `${CALL_BATCHES}/${id}/calls`, { key: a.apiKey });
    expect(rest.status).toBe(200);

    setClock('2026-01-16T14:00:00.000Z');
    await drain();
    const [done] = await calls(id);
    expect([done.status, done.attempts]).toEqual(['completed', 1]);
    expect(await placedDials(id)).toEqual(['2026-01-16T14:00:00.000Z']);
    await expectConsistentBatch(t.deps, id);
  });

  it('a retry: its stored due time falls after the close; withheld, then placed at the next opening', async () => {
    setClock('2026-01-15T21:00:00.000Z');
    const id = await create('no_answer,completed', { retry: { max_attempts: 2, delay_seconds: 600 } });
    await drain();
    const [retrying] = await calls(id);
    expect([retrying.status, retrying.attempts, retrying.nextAttemptAt?.toISOString()]).toEqual(['queued', 1, '2026-01-15T21:10:00.000Z']);
    // As if scheduled by a stale window: due at 17:30 local, the row saying the window is open.
    await sql(`UPDATE calls SET next_attempt_at = '2026-01-15T22:30:00Z', window_closes_at = '2026-01-16T05:00:00Z' WHERE batch_id = $1`, [id]);
    setClock('2026-01-15T22:30:00.000Z');
    await drain();
    const [waiting] = await calls(id);
    expect([waiting.status, waiting.attempts, waiting.waitReason, waiting.nextAttemptAt?.toISOString()]).toEqual([
      'queued',
      1,
      'calling_window',
      '2026-01-16T14:00:00.000Z',
    ]);
    expect(await placedDials(id)).toEqual(['2026-01-15T21:00:00.000Z']);
    expect((await webhookTypes(id)).filter((x) => x === 'call.retry_scheduled')).toHaveLength(1);

    setClock('2026-01-16T14:00:00.000Z');
    await drain();
    const [done] = await calls(id);
    expect([done.status, done.attempts]).toEqual(['completed', 2]);
    expect(await placedDials(id)).toEqual(['2026-01-15T21:00:00.000Z', '2026-01-16T14:00:00.000Z']);
    await expectConsistentBatch(t.deps, id);
  });

  it("an adopted call: put back after a lost worker's lease lapsed, claimed after the close, withheld", async () => {
    const id = await create('completed');
    // A worker leased it (undialled) and vanished; its slot was cleared with it.
    await sql(
      `UPDATE calls SET status = 'queued', lease_owner = 'lost-worker', lease_expires_at = '2026-01-15T17:00:30Z', window_closes_at = NULL, next_attempt_at = NULL WHERE batch_id = $1`,
      [id],
    );
    setClock('2026-01-15T22:30:00.000Z');
    await drain();
    const events = (await callEvents(t.deps, id)).map((e) => e.detail?.event);
    expect(events).toContain('requeue');
    const [waiting] = await calls(id);
    expect([waiting.status, waiting.attempts, waiting.waitReason, waiting.nextAttemptAt?.toISOString()]).toEqual([
      'queued',
      0,
      'calling_window',
      '2026-01-16T14:00:00.000Z',
    ]);
    expect(await placedDials(id)).toEqual([]);

    setClock('2026-01-16T14:00:00.000Z');
    await drain();
    expect((await calls(id))[0].status).toBe('completed');
    expect(await placedDials(id)).toEqual(['2026-01-16T14:00:00.000Z']);
    await expectConsistentBatch(t.deps, id);
  });
});
