// Warnings, not silence (issue 33): the create response says what it accepted but will not do as
// the request reads — REST `data.warnings`, GraphQL `CreateCallBatchPayload.warnings` — and an
// idempotent replay returns the create's own. Also: "All contacts are invalid" says why beside the
// contract's text, and a scheduled start at or after expires_at is refused.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { batchBody, CALL_BATCHES, typedInput, validPhone } from '../helpers/batch-requests.ts';
import { MAX_WARNING_CONTACTS } from '../../src/domain/create-warnings.ts';

let t: TestApp;
let a: SeededAccount;

const NOW = '2026-01-15T15:00:00.000Z'; // 10:00 in New York, 07:00 in Los Angeles
const RECIPIENT_WINDOW = { start: '08:00', end: '21:00', timezone: 'recipient' };

beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount({ outcomeKeys: ['interested'] });
});
afterAll(() => t.close());
beforeEach(() => t.clock.set(new Date(NOW)));

async function create(body: Record<string, unknown>, account = a) {
  const res = await t.request('POST', CALL_BATCHES, { key: account.apiKey, body: batchBody(account, body) });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data as { batch_id: string; warnings: any[]; validation_errors: any[] };
}
const codes = (warnings: { code: string }[]) => warnings.map((w) => w.code);

describe('warnings in the create response', () => {
  it('none for a batch with a recipient window, valid alternates and an agent that detects opt-outs; the contract fields are unchanged', async () => {
    const data = await create({
      use_alternate_number: true,
      calling_window: RECIPIENT_WINDOW,
      contacts: [{ contact_id: 'c1', phone_number: '+12125550101', metadata: { alternate_phone: '+12125550102' } }],
    });
    expect(data.warnings).toEqual([]);
    expect(Object.keys(data)).toEqual([
      'batch_id',
      'agent_id',
      'version_id',
      'status',
      'start_mode',
      'total_contacts',
      'accepted_contacts',
      'rejected_contacts',
      'validation_errors',
      'concurrency',
      'created_at',
      'idempotent',
      'warnings',
    ]);
  });

  it('no_protective_window: no window on the batch, no account default, no enforced window', async () => {
    const data = await create({});
    expect(data.warnings).toEqual([
      { code: 'no_protective_window', message: expect.stringContaining('03:00 local'), contact_count: null, contacts: [], contacts_left_out: 0 },
    ]);
    // An account default window protects the batch: no warning.
    const other = await t.seedAccount();
    await t.deps.db.prisma.account.update({
      where: { id: other.account.id },
      data: {
        defaultCallingWindow: { start: '09:00', end: '20:00', days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], timezone: 'recipient' },
      },
    });
    expect((await create({}, other)).warnings).toEqual([]);
    // So does a compliance profile (us_tcpa: 08:00-21:00 for US numbers); the tests run with none by default.
    expect((await create({ compliance_profiles: ['us_tcpa'] })).warnings).toEqual([]);
  });

  it('fixed_zone_window_other_zones: a New York window over a Los Angeles and a London contact, not the New York one', async () => {
    const data = await create({
      calling_window: { start: '09:00', end: '17:00', timezone: 'America/New_York' },
      contacts: [
        { contact_id: 'ny', phone_number: '+12125550103' },
        { contact_id: 'la', phone_number: '+13105550104' },
        { contact_id: 'uk', phone_number: '+442071838750' },
        // Detroit keeps New York's hours all year: not "another zone".
        { contact_id: 'det', phone_number: '+13135550105' },
      ],
    });
    expect(data.warnings).toEqual([
      {
        code: 'fixed_zone_window_other_zones',
        message: expect.stringContaining('2 contacts are in other zones'),
        contact_count: 2,
        contacts: [
          { index: 2, external_id: 'la' },
          { index: 3, external_id: 'uk' },
        ],
        contacts_left_out: 0,
      },
    ]);
    // A recipient window (the batch's or an enforced one) judges each in their own zones: no warning.
    expect((await create({ calling_window: RECIPIENT_WINDOW, contacts: [{ contact_id: 'la', phone_number: '+13105550104' }] })).warnings).toEqual([]);
  });

  it('window_never_opens repeats the contacts rejected for it; window_opens_after_expiry names those that will expire uncalled', async () => {
    const data = await create({
      // 19:00-21:00: never open in New York and Honolulu at once.
      calling_window: { start: '19:00', end: '21:00', timezone: 'recipient' },
      expires_at: '2026-01-16T01:00:00Z', // New York opens at 00:00Z, Los Angeles at 03:00Z: after it
      contacts: [
        { contact_id: 'ny', phone_number: '+12125550106' },
        { contact_id: 'honolulu', phone_number: '+12125550107', timezone: 'Pacific/Honolulu' },
        { contact_id: 'la', phone_number: '+13105550108' },
      ],
    });
    expect(data.validation_errors.map((e: any) => [e.index, e.field])).toEqual([[2, 'timezone']]);
    expect(data.warnings).toEqual([
      expect.objectContaining({ code: 'window_never_opens', contact_count: 1, contacts: [{ index: 2, external_id: 'honolulu' }] }),
      expect.objectContaining({ code: 'window_opens_after_expiry', contact_count: 1, contacts: [{ index: 3, external_id: 'la' }] }),
    ]);
  });

  it('dropped alternates: on the do-not-call list, invalid, or never in its window; only when the batch uses alternates', async () => {
    const listedAlternate = validPhone(301);
    expect((await t.request('POST', '/api/v1/public/suppressions', { key: a.apiKey, body: { phone_numbers: [listedAlternate] } })).status).toBe(200);
    const contacts = [
      { contact_id: 'dnc-alt', phone_number: validPhone(302), metadata: { alternate_phone: listedAlternate } },
      { contact_id: 'bad-alt', phone_number: validPhone(303), metadata: { alternate_number: '12' } },
      { contact_id: 'same-alt', phone_number: validPhone(304), metadata: { alternate_phone: validPhone(304) } },
      { contact_id: 'tollfree-alt', phone_number: validPhone(305), metadata: { alternate_phone: '+18005550109' } },
      { contact_id: 'fine', phone_number: validPhone(306), metadata: { alternate_phone: validPhone(307) } },
    ];
    const data = await create({ use_alternate_number: true, calling_window: { start: '09:00', end: '17:00', timezone: 'recipient' }, contacts });
    expect(data.validation_errors).toEqual([]);
    expect(data.warnings).toEqual([
      expect.objectContaining({ code: 'alternate_window_never_opens', contact_count: 1, contacts: [{ index: 4, external_id: 'tollfree-alt' }] }),
      {
        code: 'alternate_on_do_not_call_list',
        message: "1 alternate number is on the account's do-not-call list and will not be dialled (the primary number is called)",
        contact_count: 1,
        contacts: [{ index: 1, external_id: 'dnc-alt' }],
        contacts_left_out: 0,
      },
      expect.objectContaining({
        code: 'alternate_invalid',
        contact_count: 2,
        contacts: [
          { index: 2, external_id: 'bad-alt' },
          { index: 3, external_id: 'same-alt' },
        ],
      }),
    ]);
    // The call keeps no alternate it would dial.
    const [dncAlt] = await t.deps.db.prisma.call.findMany({ where: { batchId: data.batch_id }, orderBy: { seq: 'asc' } });
    expect(dncAlt.alternatePhone).toBeNull();

    const without = await create({ use_alternate_number: false, calling_window: RECIPIENT_WINDOW, contacts });
    expect(without.warnings).toEqual([]);
  });

  it(`bounded: a warning lists ${MAX_WARNING_CONTACTS} contacts in submission order and counts the rest`, async () => {
    const contacts = Array.from({ length: MAX_WARNING_CONTACTS + 25 }, (_, i) => ({
      contact_id: `c${i + 1}`,
      phone_number: validPhone(1_000 + i),
      metadata: { alternate_phone: 'not a number' },
    }));
    const data = await create({ use_alternate_number: true, calling_window: RECIPIENT_WINDOW, contacts });
    const [w] = data.warnings;
    expect([w.code, w.contact_count, w.contacts.length, w.contacts_left_out]).toEqual([
      'alternate_invalid',
      MAX_WARNING_CONTACTS + 25,
      MAX_WARNING_CONTACTS,
      25,
    ]);
    expect(w.message).toBe(
      `${MAX_WARNING_CONTACTS + 25} contacts' alternate number is invalid or the same as the primary number and will not be dialled`,
    );
    expect(w.contacts.map((c: any) => c.index)).toEqual(Array.from({ length: MAX_WARNING_CONTACTS }, (_, i) => i + 1));
  });

  it("an idempotent replay returns the create's warnings; GraphQL has them on the payload", async () => {
    const body = batchBody(a, { idempotency_key: 'warn-replay', contacts: [{ contact_id: 'c1', phone_number: validPhone(401) }] });
    const first = await t.request('PUT', CALL_BATCHES, { key: a.apiKey, body });
    const again = await t.request('PUT', CALL_BATCHES, { key: a.apiKey, body });
    expect([first.status, again.status]).toEqual([201, 200]);
    expect(codes(first.body.data.warnings)).toEqual(['no_protective_window']);
    expect(again.body.data.warnings).toEqual(first.body.data.warnings);

    const gql = await t.gql(
      'mutation($input: CreateCallBatchInput!) { createCallBatch(input: $input) { acceptedContacts warnings { code message contactCount contacts { index externalId } contactsLeftOut } } }',
      {
        input: typedInput(a, {
          useAlternateNumber: true,
          contacts: [{ contactId: 'x', phoneNumber: validPhone(402), metadata: { alternate_phone: 'nope' } }],
        }),
      },
      a.apiKey,
    );
    expect(gql.body.data.createCallBatch.warnings).toEqual([
      expect.objectContaining({ code: 'no_protective_window', contactCount: null, contacts: [], contactsLeftOut: 0 }),
      expect.objectContaining({ code: 'alternate_invalid', contactCount: 1, contacts: [{ index: 1, externalId: 'x' }], contactsLeftOut: 0 }),
    ]);
  });
});

describe('refusals that say why', () => {
  it('"All contacts are invalid" keeps the contract\'s text and lists the rejections beside it (REST and GraphQL)', async () => {
    const res = await t.request('POST', CALL_BATCHES, {
      key: a.apiKey,
      body: batchBody(a, { contacts: [{ contact_id: 'only', phone_number: '4155550182' }] }),
    });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      detail: 'All contacts are invalid',
      rejected_contacts: 1,
      validation_errors: [
        {
          index: 1,
          external_id: 'only',
          field: 'phone_number',
          message: 'Invalid phone number (no country code? +14155550182 is valid: write numbers as +<country code><number>)',
        },
      ],
    });
    const gql = await t.gql(
      'mutation($input: CreateCallBatchInput!) { createCallBatch(input: $input) { batchId } }',
      { input: typedInput(a, { contacts: [{ contactId: 'only', phoneNumber: '12345678' }] }) },
      a.apiKey,
    );
    expect(gql.body.errors[0].message).toBe('All contacts are invalid');
    expect(gql.body.errors[0].extensions).toMatchObject({
      code: 'UNPROCESSABLE',
      rejectedContacts: 1,
      validationErrors: [{ index: 1, externalId: 'only', field: 'phone_number', message: 'Invalid phone number' }],
    });
  });

  it('a scheduled start at or after expires_at is refused (422, expires_at); a manual batch with the same fields is not', async () => {
    const late = {
      start_mode: 'scheduled',
      schedule_date: '2026-01-20',
      schedule_time: '09:00',
      schedule_timezone: 'America/New_York',
      expires_at: '2026-01-18T00:00:00Z',
    };
    const res = await t.request('POST', CALL_BATCHES, { key: a.apiKey, body: batchBody(a, late) });
    expect(res.status).toBe(422);
    expect(res.body.error).toEqual({
      code: 'MISSING_PARAMETER',
      details: [
        'expires_at: Value error, expires_at must be after the scheduled start (2026-01-20T14:00:00.000Z): the batch would expire before it dials',
      ],
    });
    expect((await t.request('POST', CALL_BATCHES, { key: a.apiKey, body: batchBody(a, { ...late, start_mode: 'manual' }) })).status).toBe(201);
    expect(
      (await t.request('POST', CALL_BATCHES, { key: a.apiKey, body: batchBody(a, { ...late, expires_at: '2026-01-21T00:00:00Z' }) })).status,
    ).toBe(201);
  });
});
