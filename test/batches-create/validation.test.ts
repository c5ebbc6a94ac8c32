// Create-request errors: authentication, request validation (envelope), per-contact rejection,
// and the business-rule 422s (detail form). Nothing is stored for any error.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { batchBody, CALL_BATCHES, makeContacts, validPhone } from '../helpers/batch-requests.ts';

let t: TestApp;
let a: SeededAccount;

beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount({ limits: { maxBatchSize: 5, maxCallDurationSeconds: 600 } });
});
afterAll(() => t.close());

let batchesBefore = 0;
beforeEach(async () => {
  batchesBefore = await t.deps.db.prisma.batch.count();
});
const batchesCreated = async () => (await t.deps.db.prisma.batch.count()) - batchesBefore;

const send = (method: 'POST' | 'PUT', body: unknown, key: string | null = a.apiKey) => t.request(method, CALL_BATCHES, { key, body });

function envelope(details: string[]) {
  return {
    status_code: 422,
    message: 'Missing required parameter',
    error: { code: 'MISSING_PARAMETER', details },
    data: null,
  };
}

describe('authentication', () => {
  it.each(['POST', 'PUT'] as const)('%s without a key or with an invalid key is 401 Invalid API key', async (method) => {
    for (const key of [null, 'sk_not_a_real_key']) {
      const res = await send(method, batchBody(a, { idempotency_key: 'k' }), key);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ detail: 'Invalid API key' });
    }
    expect(await batchesCreated()).toBe(0);
  });
});

describe('request validation (422 envelope)', () => {
  it('lists every problem, in the field order of the contract', async () => {
    const res = await send('PUT', {
      agent_id: a.agent.id,
      interruption: 'perhaps',
      start_mode: 'later',
      schedule_date: '2030-02-30',
      schedule_time: '9:30',
      schedule_timezone: 'Mars/Olympus (MST, UTC+00:00)',
      concurrency: 0,
      max_duration_seconds_per_call: 601,
      contacts: [{ contact_id: 'c1', phone_number: '+1415' }, { phone_number: 14155552671 }],
      idempotency_key: 'x'.repeat(129),
    });
    expect(res.status).toBe(422);
    expect(res.body).toEqual(
      envelope([
        'version_id: Value error, version_id or version_name is required',
        'interruption: Input should be a valid boolean, unable to interpret input',
        'use_alternate_number: Field required',
        "start_mode: Input should be 'manual', 'immediate' or 'scheduled'",
        'schedule_date: Value error, Invalid date, expected YYYY-MM-DD',
        'schedule_time: Value error, Invalid time, expected HH:MM',
        "schedule_timezone: Value error, Unknown time zone 'Mars/Olympus'",
        'concurrency: Input should be greater than or equal to 1',
        'max_duration_seconds_per_call: Input should be less than or equal to 600',
        'contacts.0.phone_number: String should have at least 8 characters',
        'contacts.1.contact_id: Field required',
        'contacts.1.phone_number: Input should be a valid string',
        'idempotency_key: String should have at most 128 characters',
      ]),
    );
    expect(await batchesCreated()).toBe(0);
  });

  it('the schedule fields, interruption, use_alternate_number, start_mode and contacts are required', async () => {
    const res = await send('POST', { agent_id: a.agent.id, version_id: a.version.id });
    expect(res.body).toEqual(
      envelope([
        'interruption: Field required',
        'use_alternate_number: Field required',
        'start_mode: Field required',
        'schedule_date: Field required',
        'schedule_time: Field required',
        'schedule_timezone: Field required',
        'contacts: Field required',
      ]),
    );
  });

  it.each(['manual', 'immediate'])('the schedule fields are required even when start_mode is %s', async (startMode) => {
    const noSchedule = { schedule_date: undefined, schedule_time: undefined, schedule_timezone: undefined };
    for (const method of ['POST', 'PUT'] as const) {
      const res = await send(
        method,
        batchBody(a, { ...noSchedule, start_mode: startMode, idempotency_key: method === 'PUT' ? `no-schedule-${startMode}` : undefined }),
      );
      expect(res.status).toBe(422);
      expect(res.body).toEqual(envelope(['schedule_date: Field required', 'schedule_time: Field required', 'schedule_timezone: Field required']));
    }
    // Each one on its own is required too.
    for (const field of Object.keys(noSchedule)) {
      const res = await send('POST', batchBody(a, { start_mode: startMode, [field]: undefined }));
      expect(res.body).toEqual(envelope([`${field}: Field required`]));
    }
    expect(await batchesCreated()).toBe(0);
  });

  it('PUT requires idempotency_key (1 to 128 characters); POST does not', async () => {
    expect((await send('PUT', batchBody(a))).body).toEqual(envelope(['idempotency_key: Field required']));
    expect((await send('PUT', batchBody(a, { idempotency_key: '' }))).body).toEqual(
      envelope(['idempotency_key: String should have at least 1 character']),
    );
    expect((await send('PUT', batchBody(a, { idempotency_key: 'k'.repeat(128) }))).status).toBe(201);
    expect((await send('POST', batchBody(a))).status).toBe(201);
  });

  it('contacts must be a non-empty list', async () => {
    expect((await send('POST', batchBody(a, { contacts: [] }))).body).toEqual(
      envelope(['contacts: List should have at least 1 item after validation, not 0']),
    );
    expect((await send('POST', batchBody(a, { contacts: 'all' }))).body).toEqual(envelope(['contacts: Input should be a valid list']));
  });

  it('max_duration_seconds_per_call may not exceed the account max_call_duration_seconds', async () => {
    expect((await send('POST', batchBody(a, { max_duration_seconds_per_call: 601 }))).body).toEqual(
      envelope(['max_duration_seconds_per_call: Input should be less than or equal to 600']),
    );
    expect((await send('POST', batchBody(a, { max_duration_seconds_per_call: 600 }))).status).toBe(201);
  });

  it('refuses text with NUL characters, which the database cannot store', async () => {
    const res = await send('POST', {
      ...batchBody(a, { callback_url: 'https://x.test/\u0000' }),
      contacts: [{ contact_id: 'c1', phone_number: validPhone(1), name: 'A\u0000B', metadata: { ['k\u0000']: 1 } }],
    });
    // The wording belongs to the request guard in front of every route; the fields are what matter here.
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('MISSING_PARAMETER');
    const fields = (res.body.error.details as string[]).map((d) => d.slice(0, d.indexOf(':')));
    expect(fields).toEqual(expect.arrayContaining(['callback_url', 'contacts.0.name']));
    expect(fields.some((f) => f.startsWith('contacts.0.metadata'))).toBe(true);
    expect(await batchesCreated()).toBe(0);
  });

  it('a body that is not JSON, or not an object, is a validation error', async () => {
    const bad = await t.request('POST', CALL_BATCHES, { key: a.apiKey, rawBody: '{"agent_id":', headers: { 'content-type': 'application/json' } });
    expect(bad.body).toEqual(envelope(['body: JSON decode error']));
    expect((await send('POST', [1, 2])).body).toEqual(envelope(['body: Input should be a valid dictionary']));
    expect(await batchesCreated()).toBe(0);
  });
});

describe('per-contact rejection', () => {
  it('drops invalid numbers, reports them with 1-based index, and still creates the batch', async () => {
    const res = await send('POST', {
      ...batchBody(a),
      contacts: [
        { contact_id: 'ok-1', phone_number: validPhone(1) },
        { contact_id: 'bad-2', phone_number: '+12223333333' },
        { contact_id: 'ok-3', phone_number: validPhone(3) },
        { contact_id: 'bad-4', phone_number: '+1-800-FLOWERS' },
      ],
    });
    expect(res.status).toBe(201);
    expect(res.body.message).toBe('Call batch created with validation errors');
    expect(res.body.data).toMatchObject({
      total_contacts: 4,
      accepted_contacts: 2,
      rejected_contacts: 2,
      validation_errors: [
        { index: 2, external_id: 'bad-2', field: 'phone_number', message: 'Invalid phone number' },
        { index: 4, external_id: 'bad-4', field: 'phone_number', message: 'Invalid phone number' },
      ],
    });
    const calls = await t.deps.db.prisma.call.findMany({ where: { batchId: res.body.data.batch_id }, orderBy: { seq: 'asc' } });
    expect(calls.map((c) => [c.seq, c.externalId])).toEqual([
      [1, 'ok-1'],
      [2, 'ok-3'],
    ]);
    const batch = await t.deps.db.prisma.batch.findUniqueOrThrow({ where: { id: res.body.data.batch_id } });
    expect(batch).toMatchObject({ acceptedContacts: 2, rejectedContacts: 2, queued: 2 });
    expect(batch.validationErrors).toEqual(res.body.data.validation_errors);
  });

  it('all contacts invalid: 422 detail and nothing stored', async () => {
    const callsBefore = await t.deps.db.prisma.call.count();
    const res = await send('PUT', {
      ...batchBody(a, { idempotency_key: 'all-bad' }),
      contacts: [
        { contact_id: 'x1', phone_number: '+12223333333' },
        { contact_id: 'x2', phone_number: '00000000000' },
      ],
    });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ detail: 'All contacts are invalid' });
    expect(await batchesCreated()).toBe(0);
    expect(await t.deps.db.prisma.call.count()).toBe(callsBefore);
    // The key was not used up: a corrected retry creates the batch.
    expect((await send('PUT', batchBody(a, { idempotency_key: 'all-bad' }))).status).toBe(201);
  });

  it('deduplicate_by_phone drops repeats (compared in E.164) and reports them', async () => {
    const res = await send('POST', {
      ...batchBody(a, { deduplicate_by_phone: true }),
      contacts: [
        { contact_id: 'd1', phone_number: '+14155552671' },
        { contact_id: 'd2', phone_number: '1 (415) 555-2671' },
        { contact_id: 'd3', phone_number: validPhone(7) },
      ],
    });
    expect(res.status).toBe(201);
    expect(res.body.message).toBe('Call batch created with validation errors');
    expect(res.body.data).toMatchObject({
      total_contacts: 3,
      accepted_contacts: 2,
      rejected_contacts: 1,
      validation_errors: [{ index: 2, external_id: 'd2', field: 'phone_number', message: 'Duplicate phone number (same as contact d1)' }],
    });
  });

  it('without deduplicate_by_phone repeats are kept', async () => {
    const res = await send('POST', {
      ...batchBody(a),
      contacts: [
        { contact_id: 'd1', phone_number: '+14155552671' },
        { contact_id: 'd2', phone_number: '+14155552671' },
      ],
    });
    expect(res.body.data).toMatchObject({ accepted_contacts: 2, rejected_contacts: 0 });
  });
});

describe('business rules (422 detail)', () => {
  it('more contacts than max_batch_size is refused and says the limit', async () => {
    const res = await send('POST', batchBody(a, { contacts: makeContacts(6) }));
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ detail: "Too many contacts: 6 submitted, the account's max_batch_size is 5" });
    expect(await batchesCreated()).toBe(0);
    expect((await send('POST', batchBody(a, { contacts: makeContacts(5) }))).status).toBe(201);
  });

  it('an unavailable voice or DID number is a 422 detail and stores nothing', async () => {
    expect((await send('POST', batchBody(a, { voice: 'nope' }))).body).toEqual({
      detail: "Voice 'nope' is not available on this account",
    });
    expect((await send('POST', batchBody(a, { did_number_id: 'did_nope' }))).body).toEqual({
      detail: "DID number 'did_nope' is not available on this account",
    });
    expect(await batchesCreated()).toBe(0);
  });
});
