import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { batchBody, CALL_BATCHES, validPhone } from '../helpers/batch-requests.ts';

let t: TestApp;
let a: SeededAccount;
let other: SeededAccount;

beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount();
  other = await t.seedAccount();
  const res = await t.request('POST', '/api/v1/public/suppressions', { key: a.apiKey, body: { phone_numbers: [validPhone(1), validPhone(9)] } });
  expect(res.status).toBe(200);
});
afterAll(() => t.close());

const contacts = [
  { contact_id: 'c1', phone_number: validPhone(0) },
  { contact_id: 'c2', phone_number: '1 415 550 0001' },
  { contact_id: 'c3', phone_number: '+0 123 456 789' },
  { contact_id: 'c4', phone_number: validPhone(3), metadata: { alternate_number: validPhone(9) } },
];

describe('create with a do-not-call list', () => {
  it('rejects a listed contact like other invalid contacts, in submission order, and drops a listed alternate', async () => {
    const res = await t.request('POST', CALL_BATCHES, { key: a.apiKey, body: batchBody(a, { contacts }) });
    expect(res.status).toBe(201);
    expect(res.body.message).toBe('Call batch created with validation errors');
    expect(res.body.data).toMatchObject({ total_contacts: 4, accepted_contacts: 2, rejected_contacts: 2 });
    expect(res.body.data.validation_errors).toEqual([
      { index: 2, external_id: 'c2', field: 'phone_number', message: "Phone number is on the account's do-not-call list" },
      { index: 3, external_id: 'c3', field: 'phone_number', message: 'Invalid phone number' },
    ]);
    const calls = await t.deps.db.prisma.call.findMany({ where: { batchId: res.body.data.batch_id }, orderBy: { seq: 'asc' } });
    expect(calls.map((c) => [c.phoneNumber, c.alternatePhone])).toEqual([
      [validPhone(0), null],
      [validPhone(3), null],
    ]);
  });

  it('answers 422 when every contact is listed, and another account is not affected by this list', async () => {
    const only = [{ contact_id: 'x', phone_number: validPhone(1) }];
    const res = await t.request('POST', CALL_BATCHES, { key: a.apiKey, body: batchBody(a, { contacts: only }) });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ detail: 'All contacts are invalid' });
    const foreign = await t.request('POST', CALL_BATCHES, { key: other.apiKey, body: batchBody(other, { contacts: only }) });
    expect(foreign.status).toBe(201);
    expect(foreign.body.data.rejected_contacts).toBe(0);
  });
});
