// A create screens its contacts a chunk at a time while the previous chunk is copied
// (services/batches/screen-contacts.ts). Whatever the chunk size, the batch must come out the same
// as if the whole list were screened at once: duplicates found across chunks, the do-not-call list
// applied to every chunk, calling-window placement, rejections in submission order, seq dense.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { asCreateRequest, batchBody, CALL_BATCHES } from '../helpers/batch-requests.ts';
import { createBatch } from '../../src/services/batches/create-batch.ts';

let t: TestApp;
let a: SeededAccount;

const NY = '+12125550100';
const LA = '+13105550100';
const LISTED = '+14155550177';

/** Valid, invalid, duplicate (also across any chunk edge), listed and window-less contacts. */
const CONTACTS = [
  { contact_id: 'ny', phone_number: NY },
  { contact_id: 'bad', phone_number: 'not a number' },
  { contact_id: 'la', phone_number: LA },
  { contact_id: 'listed', phone_number: LISTED },
  { contact_id: 'ny-again', phone_number: '1 (212) 555-0100' },
  { contact_id: 'toll-free', phone_number: '+18005550100' },
  { contact_id: 'listed-alternate', phone_number: '+12125550101', metadata: { alternate_phone: LISTED } },
  { contact_id: 'la-again', phone_number: '+1.310.555.0100' },
  { contact_id: 'own-zone', phone_number: '+12125550102', timezone: 'Europe/London' },
  { contact_id: 'last', phone_number: '+13105550103' },
];

beforeAll(async () => {
  t = await createTestApp({ config: { WEBHOOK_ALLOW_PRIVATE: 'false' } });
  t.clock.set(new Date('2026-03-06T15:00:00.000Z'));
  a = await t.seedAccount();
  await t.deps.db.prisma.suppression.create({ data: { accountId: a.account.id, phoneNumber: LISTED, source: 'api' } });
});
afterAll(() => t.close());

const body = (overrides: Record<string, unknown> = {}) =>
  batchBody(a, {
    contacts: CONTACTS,
    deduplicate_by_phone: true,
    calling_window: { start: '09:00', end: '20:00', days: ['mon', 'tue', 'wed', 'thu', 'fri'] },
    ...overrides,
  });

async function created(chunkSize: number) {
  const r = await createBatch(t.deps, a.account, asCreateRequest(body()), { insert: { chunkSize } });
  const calls = await t.deps.db.prisma.call.findMany({ where: { batchId: r.batchId }, orderBy: { seq: 'asc' } });
  const batch = await t.deps.db.prisma.batch.findUniqueOrThrow({ where: { id: r.batchId } });
  return {
    result: { accepted: r.acceptedContacts, rejected: r.rejectedContacts, errors: r.validationErrors },
    stored: { accepted: batch.acceptedContacts, rejected: batch.rejectedContacts, errors: batch.validationErrors, queued: batch.queued },
    calls: calls.map((c) => [c.seq, c.externalId, c.phoneNumber, c.alternatePhone, c.timezone, c.nextAttemptAt?.toISOString() ?? null]),
  };
}

describe('screening in chunks', () => {
  it('every chunk size gives the batch the whole list gives', async () => {
    const whole = await created(1_000);
    expect(whole.calls.map((c) => c[1])).toEqual(['ny', 'la', 'listed-alternate', 'own-zone', 'last']);
    expect(whole.calls.map((c) => c[0])).toEqual([1, 2, 3, 4, 5]);
    // The listed alternate is dropped, the contact kept.
    expect(whole.calls[2][3]).toBeNull();
    expect(whole.result.errors.map((e) => [e.index, e.external_id])).toEqual([
      [2, 'bad'],
      [4, 'listed'],
      [5, 'ny-again'],
      [6, 'toll-free'],
      [8, 'la-again'],
    ]);
    expect(whole.stored).toEqual({ accepted: 5, rejected: 5, errors: whole.result.errors, queued: 5 });
    for (const size of [1, 2, 3, 4, 7]) expect({ size, ...(await created(size)) }).toEqual({ size, ...whole });
  });

  it('a refused callback_url is the answer unless every contact is invalid, and writes nothing', async () => {
    const before = await t.deps.db.prisma.batch.count({ where: { accountId: a.account.id } });
    const refused = await t.request('POST', CALL_BATCHES, { key: a.apiKey, body: body({ callback_url: 'https://localhost/hook' }) });
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual({ detail: 'callback_url must name a public host (localhost is local or internal)' });
    const allInvalid = await t.request('POST', CALL_BATCHES, {
      key: a.apiKey,
      body: body({ callback_url: 'https://localhost/hook', contacts: [CONTACTS[1], CONTACTS[3], CONTACTS[5]] }),
    });
    expect(allInvalid.status).toBe(422);
    expect(allInvalid.body).toMatchObject({ detail: 'All contacts are invalid', rejected_contacts: 3 });
    expect(await t.deps.db.prisma.batch.count({ where: { accountId: a.account.id } })).toBe(before);
  });

  it('every contact invalid: 422 and nothing written, whatever the chunk size', async () => {
    const before = await t.deps.db.prisma.batch.count({ where: { accountId: a.account.id } });
    for (const chunkSize of [1, 1_000]) {
      const attempt = createBatch(t.deps, a.account, asCreateRequest(body({ contacts: [CONTACTS[1], CONTACTS[3], CONTACTS[5]] })), {
        insert: { chunkSize },
      });
      await expect(attempt).rejects.toThrow('All contacts are invalid');
    }
    expect(await t.deps.db.prisma.batch.count({ where: { accountId: a.account.id } })).toBe(before);
  });
});
