import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';

let t: TestApp;
let a: SeededAccount;

beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount({ limits: { maxBatchSize: 500, maxConcurrentCalls: 7, maxCallDurationSeconds: 300, rateLimitPerMinute: 90 } });
});
afterAll(() => t.close());

describe('GET /api/v1/public/me', () => {
  it('returns the account in the envelope with the four integer limits', async () => {
    const res = await t.request('GET', '/api/v1/public/me', { key: a.apiKey });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect(res.body).toEqual({
      status_code: 200,
      message: 'Account details fetched successfully',
      error: null,
      data: {
        account_id: a.account.id,
        name: a.account.name,
        email: a.account.email,
        limits: { max_batch_size: 500, max_concurrent_calls: 7, max_call_duration_seconds: 300, rate_limit_per_minute: 90 },
      },
    });
  });

  it('GraphQL me returns the same account', async () => {
    const res = await t.gql('{ me { id email limits { maxBatchSize rateLimitPerMinute } } }', {}, a.apiKey);
    expect(res.status).toBe(200);
    expect(res.body.data.me).toEqual({ id: a.account.id, email: a.account.email, limits: { maxBatchSize: 500, rateLimitPerMinute: 90 } });
  });

  it('unknown route under /api is a 404 detail, wrong method a 405', async () => {
    expect((await t.request('GET', '/api/v1/public/nope', { key: a.apiKey })).body).toEqual({ detail: 'Not Found' });
    const r = await t.request('DELETE', '/api/v1/public/me', { key: a.apiKey });
    expect(r.status).toBe(405);
    expect(r.body).toEqual({ detail: 'Method Not Allowed' });
    expect(r.headers.get('allow')).toBe('GET');
    const batches = await t.request('DELETE', '/api/v1/public/call-batches', { key: a.apiKey });
    expect(batches.headers.get('allow')).toBe('GET, POST, PUT');
  });
});
