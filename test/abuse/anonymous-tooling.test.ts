// Anonymous tooling (codegen, IDE schema polling, GraphiQL before a key is typed) spends its own
// per-address budget, never the failed-authentication one, and a valid key from an address that
// sends wrong keys still gets through on its account's budget.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { gqlSend, inWindow, send } from '../helpers/abuse.ts';

const ME = '/api/v1/public/me';
const INTROSPECTION = '{ __schema { queryType { name } types { name } } }';

let t: TestApp;
let a: SeededAccount;

beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount({ limits: { rateLimitPerMinute: 1000 } });
});
afterAll(() => t.close());

const wrong = (i: number) => 'sk_' + String(i).padStart(43, 'w');

function mentionsFailedAuth(body: unknown): boolean {
  return /fail|authenticat/i.test(JSON.stringify(body));
}

describe('anonymous tooling', () => {
  it('100 anonymous introspection and __typename requests in a minute leave the address free for a valid key', async () => {
    t.clock.set(inWindow(1_000));
    const address = '198.51.100.7';
    for (let i = 0; i < 100; i++) {
      const r = await gqlSend(t.app, i % 2 ? '{ __typename }' : INTROSPECTION, {}, { address });
      expect(r.status, `anonymous request ${i + 1}`).toBe(200);
      expect(r.body.errors).toBeUndefined();
    }
    const rest = await send(t.app, 'GET', ME, { key: a.apiKey, address });
    expect(rest.status).toBe(200);
    const gql = await gqlSend(t.app, '{ me { id } }', {}, { key: a.apiKey, address });
    expect(gql.status).toBe(200);
    expect(gql.body).toEqual({ data: { me: { id: a.account.id } } });
  });

  it('wrong keys get 429 past AUTH_FAILURES_PER_MINUTE while a valid key from the same address still succeeds', async () => {
    t.clock.set(inWindow(2_000, '2031-03-04T08:00:00.000Z'));
    const address = '198.51.100.8';
    const limit = t.deps.config.AUTH_FAILURES_PER_MINUTE;
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) {
      const r =
        i % 2 ? await send(t.app, 'GET', ME, { key: wrong(i), address }) : await gqlSend(t.app, '{ me { id } }', {}, { key: wrong(i), address });
      statuses.push(r.status);
      if (i >= limit) {
        expect(r.status, `wrong key ${i + 1}`).toBe(429);
        // GraphQL over HTTP answers the refusal in its own form, REST in the envelope.
        expect(JSON.stringify(r.body)).toContain('RATE_LIMITED');
      }
      // Interleaved: the valid key is never refused, before or after the threshold.
      if (i % 10 === 9) {
        expect((await send(t.app, 'GET', ME, { key: a.apiKey, address })).status, `valid key after ${i + 1} wrong ones`).toBe(200);
      }
    }
    expect(statuses.slice(0, limit).every((s) => s === 401 || s === 200)).toBe(true);
    const gql = await gqlSend(t.app, '{ me { id } }', {}, { key: a.apiKey, address });
    expect(gql.body).toEqual({ data: { me: { id: a.account.id } } });
    // Anonymous requests are not failures: the address's tooling still works.
    expect((await gqlSend(t.app, '{ __typename }', {}, { address })).status).toBe(200);
  });
});

describe('the anonymous budget', () => {
  it('refuses keyless requests past ANONYMOUS_REQUESTS_PER_MINUTE with a message that says what it is', async () => {
    const small = await createTestApp({ config: { ANONYMOUS_REQUESTS_PER_MINUTE: '4', AUTH_FAILURES_PER_MINUTE: '2' } });
    try {
      const b = await small.seedAccount();
      small.clock.set(inWindow(5_000));
      const address = '198.51.100.9';
      for (let i = 0; i < 4; i++) expect((await gqlSend(small.app, '{ __typename }', {}, { address })).status).toBe(200);
      const gql = await gqlSend(small.app, '{ __typename }', {}, { address });
      expect(gql.status).toBe(429);
      expect(gql.body.errors![0]).toMatchObject({ message: 'Too many requests', extensions: { code: 'RATE_LIMITED' } });
      expect(gql.body.errors![0].extensions.details.join(' ')).toMatch(/without an API key/);
      expect(mentionsFailedAuth(gql.body)).toBe(false);
      expect(gql.headers.get('retry-after')).toBe('55');
      const rest = await send(small.app, 'GET', ME, { address });
      expect(rest.status).toBe(429);
      expect(rest.body).toMatchObject({ status_code: 429, error: { code: 'RATE_LIMITED' } });
      expect(mentionsFailedAuth(rest.body)).toBe(false);
      // A key (valid or wrong) is not anonymous: the valid one proceeds, a wrong one is a 401.
      expect((await send(small.app, 'GET', ME, { key: b.apiKey, address })).status).toBe(200);
      expect((await send(small.app, 'GET', ME, { key: wrong(1), address })).status).toBe(401);
      // Health checks never count.
      expect((await send(small.app, 'GET', '/healthz', { address })).status).toBe(200);
      small.clock.advance(55_000);
      expect((await gqlSend(small.app, '{ __typename }', {}, { address })).status).toBe(200);
    } finally {
      await small.close();
    }
  });
});
