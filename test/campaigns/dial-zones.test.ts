// Every dial lawful where the called person is, end to end on a controllable clock: the alternate
// number judged in its own zones (and waiting for its own window), a contact's zone narrowing its
// number's, an unlisted exchange of a split area code judged in all of its zones, and a dialled
// call that ends while waiting getting its one terminal webhook.
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

interface Contact {
  phone: string;
  sim: string;
  alternate?: string;
  timezone?: string;
}

async function create(contacts: Contact[], overrides: Record<string, unknown>) {
  const res = await t.request('POST', CALL_BATCHES, {
    key: a.apiKey,
    body: batchBody(a, {
      contacts: contacts.map((c, i) => ({
        contact_id: `c${i + 1}`,
        phone_number: c.phone,
        metadata: { sim: c.sim, ...(c.alternate ? { alternate_phone: c.alternate } : {}) },
        ...(c.timezone ? { timezone: c.timezone } : {}),
      })),
      ...overrides,
    }),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data as { batch_id: string; accepted_contacts: number; validation_errors: any[] };
}

const calls = (batchId: string) => t.deps.db.prisma.call.findMany({ where: { batchId }, orderBy: { seq: 'asc' } });
const drain = () => testWorker(t.deps).drain();
const setClock = (iso: string) => t.clock.set(new Date(iso));
const dials = async (batchId: string) =>
  (await callEvents(t.deps, batchId)).flatMap((e) => (e.detail?.event === 'dial' ? [[e.detail.number, e.detail.alternate, e.at.toISOString()]] : []));

beforeEach(() => setClock('2026-01-15T23:08:00.000Z'));

describe('the alternate number', () => {
  it('waits for its own window: a California alternate is not dialled at 15:08 PST after a New York primary fails at 18:08', async () => {
    const { batch_id: id } = await create([{ phone: '+12125550144', alternate: '+13105550144', sim: 'no_answer,completed' }], {
      use_alternate_number: true,
      calling_window: { start: '16:00', end: '20:00', timezone: 'recipient' },
    });
    await drain();
    expect(await dials(id)).toEqual([['+12125550144', false, '2026-01-15T23:08:00.000Z']]);
    const [waiting] = await calls(id);
    expect([waiting.status, waiting.attempts, waiting.nextAttemptAt?.toISOString(), waiting.waitReason]).toEqual([
      'queued',
      1,
      '2026-01-16T00:00:00.000Z',
      'alternate_window',
    ]);
    const gql = await t.gql(`query($id: ID!) { call(id: $id) { waitReason nextAttemptAt } }`, { id: waiting.id }, a.apiKey);
    expect(gql.body.data.call).toEqual({ waitReason: 'CALLING_WINDOW', nextAttemptAt: '2026-01-16T00:00:00.000Z' });

    setClock('2026-01-15T23:59:00.000Z');
    await drain();
    expect((await dials(id)).length).toBe(1);
    // 16:00 in Los Angeles: the claim dials the alternate, not the primary again.
    setClock('2026-01-16T00:00:00.000Z');
    await drain();
    expect(await dials(id)).toEqual([
      ['+12125550144', false, '2026-01-15T23:08:00.000Z'],
      ['+13105550144', true, '2026-01-16T00:00:00.000Z'],
    ]);
    const [done] = await calls(id);
    expect([done.status, done.attempts, done.dialedNumber, done.usedAlternate]).toEqual(['completed', 2, '+13105550144', true]);
    await expectConsistentBatch(t.deps, id);
  });
});

describe("a contact's own zone", () => {
  it("narrows its number's zones: a 212 number said to be in Honolulu is never dialled at midnight New York time", async () => {
    // 19:00 in Honolulu = 00:00 in New York: the two 19:00-21:00 windows never meet.
    setClock('2026-01-16T05:00:00.000Z');
    const created = await create(
      [
        { phone: '+12125550144', timezone: 'Pacific/Honolulu', sim: 'completed' },
        { phone: '+18085550144', sim: 'completed' },
      ],
      { calling_window: { start: '19:00', end: '21:00', timezone: 'recipient' } },
    );
    expect(created.validation_errors).toEqual([
      { index: 1, external_id: 'c1', field: 'timezone', message: expect.stringContaining('(America/New_York, Pacific/Honolulu)') },
    ]);
    await drain();
    expect((await dials(created.batch_id)).map(([n]) => n)).toEqual(['+18085550144']);
  });
});

describe('a split area code', () => {
  it('judges an unlisted exchange in every zone of its area code: 850-555 is not dialled at 07:00 Central', async () => {
    // 08:00 in New York (EDT) is 07:00 in Chicago (CDT).
    setClock('2026-07-15T12:00:00.000Z');
    const { batch_id: id } = await create([{ phone: '+18505550144', sim: 'completed' }], {
      calling_window: { start: '08:00', end: '21:00', timezone: 'recipient' },
    });
    await drain();
    const [row] = await calls(id);
    expect([row.attempts, row.timezone, row.nextAttemptAt?.toISOString()]).toEqual([
      0,
      'America/New_York,America/Chicago',
      '2026-07-15T13:00:00.000Z',
    ]);
    setClock('2026-07-15T13:00:00.000Z');
    await drain();
    expect(await dials(id)).toEqual([['+18505550144', false, '2026-07-15T13:00:00.000Z']]);
  });
});

describe('a dialled call that ends while waiting', () => {
  const terminal = new Set(['call.completed', 'call.failed', 'call.cancelled']);
  const webhooks = async (batchId: string, callId: string) =>
    (await t.deps.db.prisma.webhookDelivery.findMany({ where: { batchId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] }))
      .map((d) => d.payload as any)
      .filter((p) => p.data.call_id === callId)
      .map((p) => [p.type, p.data.status, p.data.disconnect_reason ?? null]);

  it('gets exactly one terminal webhook when it expires, or when its number is listed before its retry', async () => {
    setClock('2026-03-02T15:00:00.000Z');
    const { batch_id: id } = await create(
      [
        { phone: '+14155550144', sim: 'no_answer,completed' },
        { phone: '+14155550145', sim: 'no_answer,completed' },
      ],
      { retry: { max_attempts: 2, delay_seconds: 600 }, expires_at: '2026-03-02T15:30:00Z', callback_url: 'https://hooks.example.com/calls' },
    );
    await drain();
    const [first, second] = await calls(id);
    expect([first.status, second.status]).toEqual(['queued', 'queued']);
    // The second's number goes on the do-not-call list while it waits for its retry.
    const listed = await t.request('POST', '/api/v1/public/suppressions', { key: a.apiKey, body: { phone_numbers: ['+14155550145'] } });
    expect(listed.status, JSON.stringify(listed.body)).toBeLessThan(300);
    setClock('2026-03-02T15:10:00.000Z');
    await drain();
    expect((await calls(id))[1]).toMatchObject({ status: 'cancelled', disconnectReason: 'suppressed' });
    expect(await webhooks(id, second.id)).toEqual([
      ['call.retry_scheduled', 'queued', null],
      ['call.cancelled', 'cancelled', 'suppressed'],
    ]);
    // The first is answered on its retry: no cancel. A third round would come after the expiry.
    expect(await webhooks(id, first.id)).toEqual([
      ['call.retry_scheduled', 'queued', null],
      ['call.completed', 'completed', 'agent_hangup'],
      ['call.analyzed', 'completed', 'agent_hangup'],
    ]);
  });

  it('gets call.cancelled when the batch expires while it waits for a retry', async () => {
    setClock('2026-03-02T15:00:00.000Z');
    const { batch_id: id } = await create([{ phone: '+14155550146', sim: 'no_answer,completed' }], {
      retry: { max_attempts: 2, delay_seconds: 1200 },
      expires_at: '2026-03-02T15:30:00Z',
      callback_url: 'https://hooks.example.com/calls',
    });
    await drain();
    setClock('2026-03-02T15:30:00.000Z');
    await drain();
    const [row] = await calls(id);
    expect([row.status, row.disconnectReason]).toEqual(['cancelled', 'expired']);
    const events = await webhooks(id, row.id);
    expect(events).toEqual([
      ['call.retry_scheduled', 'queued', null],
      ['call.cancelled', 'cancelled', 'expired'],
    ]);
    expect(events.filter(([type]) => terminal.has(type))).toHaveLength(1);
  });
});
