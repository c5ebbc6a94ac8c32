// The create request's retry and expires_at: stored and shown on both surfaces, and every bad value
// refused in the contract's forms (REST's 422 envelope with `<path>: <reason>` details, GraphQL's
// MISSING_PARAMETER with camelCase paths), nothing created.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { batchBody, CALL_BATCHES, typedInput } from '../helpers/batch-requests.ts';

let t: TestApp;
let a: SeededAccount;

beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount();
});
afterAll(() => t.close());
beforeEach(() => t.clock.set(new Date('2026-11-25T12:00:00.000Z')));

const post = (overrides: Record<string, unknown>) => t.request('POST', CALL_BATCHES, { key: a.apiKey, body: batchBody(a, overrides) });

async function refused(overrides: Record<string, unknown>): Promise<string[]> {
  const before = await t.deps.db.prisma.batch.count();
  const res = await post(overrides);
  expect(res.status, JSON.stringify(res.body)).toBe(422);
  expect(res.body).toMatchObject({ status_code: 422, message: 'Missing required parameter', error: { code: 'MISSING_PARAMETER' }, data: null });
  expect(await t.deps.db.prisma.batch.count()).toBe(before);
  return res.body.error.details;
}

const MUTATION = `mutation($input: CreateCallBatchInput!) {
  createCallBatch(input: $input) { batch { id retry { maxAttempts on delaySeconds } expiresAt callingWindow { start end days timezone } } }
}`;

describe('REST', () => {
  it('stores the policy and the expiry, with defaults for what is left out, and shows them in the batch details', async () => {
    const res = await post({ retry: { max_attempts: '3' }, expires_at: '2026-12-01T19:00:00+01:00' });
    expect(res.status).toBe(201);
    const details = await t.request('GET', `${CALL_BATCHES}/${res.body.data.batch_id}`, { key: a.apiKey });
    expect(details.body.data).toMatchObject({
      retry: { max_attempts: 3, on: ['no_answer', 'busy', 'voicemail'], delay_seconds: 3600 },
      expires_at: '2026-12-01T18:00:00.000Z',
    });
  });

  it('lists the outcomes in their own order, each once', async () => {
    const res = await post({ retry: { max_attempts: 2, on: ['voicemail', 'failed', 'voicemail'], delay_seconds: 86_400 } });
    expect(res.status).toBe(201);
    const details = await t.request('GET', `${CALL_BATCHES}/${res.body.data.batch_id}`, { key: a.apiKey });
    expect(details.body.data.retry).toEqual({ max_attempts: 2, on: ['failed', 'voicemail'], delay_seconds: 86_400 });
  });

  it('null fields are absent: the batch behaves as before', async () => {
    const res = await post({ retry: null, expires_at: null });
    expect(res.status).toBe(201);
    const details = await t.request('GET', `${CALL_BATCHES}/${res.body.data.batch_id}`, { key: a.apiKey });
    expect(details.body.data).toMatchObject({ retry: null, expires_at: null });
  });

  it.each([
    [{ retry: 3 }, ['retry: Input should be a valid dictionary']],
    [{ retry: {} }, ['retry.max_attempts: Field required']],
    [{ retry: { max_attempts: 0 } }, ['retry.max_attempts: Input should be greater than or equal to 1']],
    [{ retry: { max_attempts: 11 } }, ['retry.max_attempts: Input should be less than or equal to 10']],
    [{ retry: { max_attempts: 'three' } }, ['retry.max_attempts: Input should be a valid integer, unable to parse string as an integer']],
    [{ retry: { max_attempts: 2, delay_seconds: 59 } }, ['retry.delay_seconds: Input should be greater than or equal to 60']],
    [{ retry: { max_attempts: 2, delay_seconds: 86_401 } }, ['retry.delay_seconds: Input should be less than or equal to 86400']],
    [{ retry: { max_attempts: 2, on: [] } }, ['retry.on: List should have at least 1 item after validation, not 0']],
    [{ retry: { max_attempts: 2, on: 'busy' } }, ['retry.on: Input should be a valid list']],
    [
      { retry: { max_attempts: 2, on: ['busy', 'answered'] } },
      ["retry.on.1: Input should be 'no_answer', 'busy', 'failed', 'voicemail' or 'voicemail_left'"],
    ],
    [{ retry: { max_attempts: 2, on: ['busy', 7] } }, ['retry.on.1: Input should be a valid string']],
    [{ expires_at: 'tomorrow' }, ['expires_at: Value error, Invalid datetime, expected ISO 8601 with a time zone (e.g. 2026-12-01T18:00:00Z)']],
    [
      { expires_at: '2026-12-01T18:00:00' },
      ['expires_at: Value error, Invalid datetime, expected ISO 8601 with a time zone (e.g. 2026-12-01T18:00:00Z)'],
    ],
    [
      { expires_at: '2026-02-30T18:00:00Z' },
      ['expires_at: Value error, Invalid datetime, expected ISO 8601 with a time zone (e.g. 2026-12-01T18:00:00Z)'],
    ],
    [{ expires_at: '2026-11-25T12:00:00Z' }, ['expires_at: Value error, expires_at must be in the future']],
    [{ expires_at: 20261201 }, ['expires_at: Input should be a valid string']],
    [{ calling_window: 'mornings' }, ['calling_window: Input should be a valid dictionary']],
    [
      { calling_window: { days: 'mon' } },
      ['calling_window.start: Field required', 'calling_window.end: Field required', 'calling_window.days: Input should be a valid list'],
    ],
    [
      { calling_window: { start: '9am', end: '24:30' } },
      ['calling_window.start: Value error, Invalid time, expected HH:MM', 'calling_window.end: Value error, Invalid time, expected HH:MM'],
    ],
    [{ calling_window: { start: '20:00', end: '08:00' } }, ['calling_window.end: Value error, end must be after start (no overnight windows)']],
    [
      { calling_window: { start: '09:00', end: '17:00', days: [] } },
      ['calling_window.days: List should have at least 1 item after validation, not 0'],
    ],
    [
      { calling_window: { start: '09:00', end: '17:00', days: ['mon', 'someday'] } },
      ["calling_window.days.1: Input should be 'mon', 'tue', 'wed', 'thu', 'fri', 'sat' or 'sun'"],
    ],
    [
      { calling_window: { start: '09:00', end: '17:00', timezone: 'Nowhere/City' } },
      ["calling_window.timezone: Value error, Unknown time zone 'Nowhere/City'; give an IANA zone or 'recipient'"],
    ],
    [
      { contacts: [{ contact_id: 'c1', phone_number: '+12125550100', timezone: 'Mars/Olympus' }] },
      ["contacts.0.timezone: Value error, Unknown time zone 'Mars/Olympus'"],
    ],
    [{ contacts: [{ contact_id: 'c1', phone_number: '+12125550100', timezone: 5 }] }, ['contacts.0.timezone: Input should be a valid string']],
  ])('refuses %j', async (overrides, details) => {
    expect(await refused(overrides)).toEqual(details);
  });

  it('reports them after the contract fields, beside the other problems', async () => {
    expect(await refused({ concurrency: 0, retry: { max_attempts: 20 }, expires_at: 'x' })).toEqual([
      'concurrency: Input should be greater than or equal to 1',
      'retry.max_attempts: Input should be less than or equal to 10',
      'expires_at: Value error, Invalid datetime, expected ISO 8601 with a time zone (e.g. 2026-12-01T18:00:00Z)',
    ]);
  });

  it('a huge `on` list is refused without being walked value by value', async () => {
    const details = await refused({ retry: { max_attempts: 2, on: Array.from({ length: 100_000 }, () => 'busy') } });
    expect(details).toEqual(['retry.on: List should have at most 20 items after validation, not 100000']);
  });
});

describe('GraphQL', () => {
  it('takes the same fields in camelCase', async () => {
    const res = await t.gql(
      MUTATION,
      {
        input: typedInput(a, {
          retry: { maxAttempts: 4, on: ['busy'], delaySeconds: 120 },
          expiresAt: '2026-12-24T00:00:00Z',
          callingWindow: { start: '10:00', end: '18:30', days: ['sat', 'mon'], timezone: 'Europe/Berlin' },
        }),
      },
      a.apiKey,
    );
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.createCallBatch.batch).toMatchObject({
      retry: { maxAttempts: 4, on: ['busy'], delaySeconds: 120 },
      expiresAt: '2026-12-24T00:00:00.000Z',
      callingWindow: { start: '10:00', end: '18:30', days: ['mon', 'sat'], timezone: 'Europe/Berlin' },
    });
  });

  it('refuses bad values with camelCase paths', async () => {
    const res = await t.gql(
      MUTATION,
      { input: typedInput(a, { retry: { maxAttempts: 0, delaySeconds: 5 }, expiresAt: '2020-01-01T00:00:00Z' }) },
      a.apiKey,
    );
    expect(res.body.errors?.[0]).toMatchObject({
      extensions: {
        code: 'MISSING_PARAMETER',
        details: [
          'retry.maxAttempts: Input should be greater than or equal to 1',
          'retry.delaySeconds: Input should be greater than or equal to 60',
          'expiresAt: Value error, expires_at must be in the future',
        ],
      },
    });
  });
});
