// Per-account rate limits (REST and GraphQL, one unit per operation), their headers, the window
// reset under a controlled clock, failed-key attempts per client address, and pruning.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { budget, gqlSend, inWindow, send } from '../helpers/abuse.ts';
import { wsClient, wsOnce } from '../helpers/ws-client.ts';
import { MemoryRateLimitStore } from '../../src/services/auth/rate-limit-store-memory.ts';
import { DatabaseRateLimitStore } from '../../src/services/auth/rate-limit-store-postgres.ts';
import { updateAccount } from '../../src/services/accounts/accounts.ts';

const ME = '/api/v1/public/me';
const BATCHES = '/api/v1/public/call-batches';
const AUTH_FAILURES = 5;

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ config: { AUTH_FAILURES_PER_MINUTE: String(AUTH_FAILURES) } });
});
afterAll(() => t.close());

function seed(rateLimitPerMinute: number): Promise<SeededAccount> {
  return t.seedAccount({ limits: { rateLimitPerMinute } });
}

describe('per-account limit over REST', () => {
  it('reports the budget on every authenticated response, refuses with 429 RATE_LIMITED once spent, and resets with the window', async () => {
    t.clock.set(inWindow(10_000));
    const a = await seed(3);

    const ok = await send(t.app, 'GET', ME, { key: a.apiKey });
    expect(ok.status).toBe(200);
    expect(budget(ok.headers)).toMatchObject({ limit: 3, remaining: 2, reset: 50 });
    expect(ok.headers.has('retry-after')).toBe(false);

    // Error responses of an authenticated request count and carry the headers too.
    const missing = await send(t.app, 'GET', `${BATCHES}/sched_missing`, { key: a.apiKey });
    expect(missing.status).toBe(404);
    expect(budget(missing.headers)).toMatchObject({ limit: 3, remaining: 1 });
    const badJson = await send(t.app, 'POST', BATCHES, { key: a.apiKey, raw: '{', headers: { 'content-type': 'application/json' } });
    expect(badJson.status).toBe(422);
    expect(budget(badJson.headers)).toMatchObject({ limit: 3, remaining: 0 });

    const refused = await send(t.app, 'GET', ME, { key: a.apiKey });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      status_code: 429,
      message: 'Too many requests',
      error: { code: 'RATE_LIMITED', details: ['Rate limit of 3 requests per minute exceeded; retry in 50 s'] },
      data: null,
    });
    expect(budget(refused.headers)).toEqual({ limit: 3, remaining: 0, reset: 50, retryAfter: 50 });

    t.clock.advance(20_000);
    const later = await send(t.app, 'GET', ME, { key: a.apiKey });
    expect(later.status).toBe(429);
    expect(budget(later.headers)).toMatchObject({ reset: 30, retryAfter: 30 });

    t.clock.advance(30_000); // next window
    const reset = await send(t.app, 'GET', ME, { key: a.apiKey });
    expect(reset.status).toBe(200);
    expect(budget(reset.headers)).toMatchObject({ limit: 3, remaining: 2, reset: 60 });
  });

  it('refused requests do not spend budget of the next window, and a throttled client gets its body ignored', async () => {
    t.clock.set(inWindow(59_000));
    const a = await seed(1);
    expect((await send(t.app, 'GET', ME, { key: a.apiKey })).status).toBe(200);
    for (let i = 0; i < 5; i++) {
      const r = await send(t.app, 'POST', BATCHES, { key: a.apiKey, raw: 'not json', headers: { 'content-type': 'application/json' } });
      expect(r.status).toBe(429);
      expect(budget(r.headers).retryAfter).toBe(1);
    }
    t.clock.advance(1_000);
    expect((await send(t.app, 'GET', ME, { key: a.apiKey })).status).toBe(200);
  });

  it('budgets are per account; a limit changed through this process applies from the next request', async () => {
    t.clock.set(inWindow(0));
    const a = await seed(1);
    const b = await seed(1);
    expect((await send(t.app, 'GET', ME, { key: a.apiKey })).status).toBe(200);
    expect((await send(t.app, 'GET', ME, { key: a.apiKey })).status).toBe(429);
    expect((await send(t.app, 'GET', ME, { key: b.apiKey })).status).toBe(200);
    const updated = await gqlSend(
      t.app,
      `mutation { adminUpdateAccount(id: "${a.account.id}", input: { limits: { rateLimitPerMinute: 3 } }) { id } }`,
      {},
      { key: ADMIN_TOKEN },
    );
    expect(updated.body.errors).toBeUndefined();
    const raised = await send(t.app, 'GET', ME, { key: a.apiKey });
    expect(raised.status).toBe(200);
    expect(budget(raised.headers)).toMatchObject({ limit: 3, remaining: 1 });
  });

  it('a limit changed by another process applies once API_KEY_CACHE_MS has passed', async () => {
    t.clock.set(inWindow(0, '2031-03-04T05:10:00.000Z'));
    const a = await seed(1);
    expect((await send(t.app, 'GET', ME, { key: a.apiKey })).status).toBe(200);
    await updateAccount(t.deps.db, a.account.id, { limits: { rateLimitPerMinute: 3 } }, t.clock.now());
    expect(budget((await send(t.app, 'GET', ME, { key: a.apiKey })).headers)).toMatchObject({ limit: 1, remaining: 0 });
    t.clock.advance(t.deps.config.API_KEY_CACHE_MS);
    const raised = await send(t.app, 'GET', ME, { key: a.apiKey });
    expect(raised.status).toBe(200);
    expect(budget(raised.headers)).toMatchObject({ limit: 3, remaining: 1 });
  });

  it('a 401 carries no budget headers and spends nothing; the operator token is not limited', async () => {
    t.clock.set(inWindow(0));
    const r = await send(t.app, 'GET', ME, { key: null });
    expect(r.status).toBe(401);
    expect(r.headers.has('ratelimit-limit')).toBe(false);
    const a = await seed(1);
    for (let i = 0; i < 3; i++) {
      const admin = await gqlSend(t.app, '{ me { id } }', {}, { key: ADMIN_TOKEN, headers: { 'x-act-as-account': a.account.id } });
      expect(admin.body.data).toEqual({ me: { id: a.account.id } });
    }
    expect((await send(t.app, 'GET', ME, { key: a.apiKey })).status).toBe(200);
  });
});

describe('per-account limit over GraphQL', () => {
  it('counts one unit per operation however many fields need the account, and refuses with extensions.code RATE_LIMITED', async () => {
    t.clock.set(inWindow(15_000));
    const a = await seed(3);
    const first = await gqlSend(t.app, '{ me { id } agents { id } didNumbers { id } promptVersions { id } }', {}, { key: a.apiKey });
    expect(first.status).toBe(200);
    expect(first.body.errors).toBeUndefined();
    expect(budget(first.headers)).toMatchObject({ limit: 3, remaining: 2, reset: 45 });

    // An operation that never asks for the account still spends a unit: the key authenticated it.
    const typename = await gqlSend(t.app, '{ __typename }', {}, { key: a.apiKey });
    expect(typename.body.data).toEqual({ __typename: 'Query' });
    expect(budget(typename.headers).remaining).toBe(1);

    // REST and GraphQL share the budget.
    expect(budget((await send(t.app, 'GET', ME, { key: a.apiKey })).headers).remaining).toBe(0);

    const refused = await gqlSend(t.app, '{ me { id } agents { id } }', {}, { key: a.apiKey });
    expect(refused.status).toBe(429);
    expect(refused.body.data ?? null).toBeNull();
    expect(refused.body.errors).toHaveLength(1);
    expect(refused.body.errors![0]).toMatchObject({ message: 'Too many requests', extensions: { code: 'RATE_LIMITED' } });
    expect(budget(refused.headers)).toEqual({ limit: 3, remaining: 0, reset: 45, retryAfter: 45 });

    // A document that fails validation is refused too (the budget is checked before parsing).
    const invalid = await gqlSend(t.app, '{ nope }', {}, { key: a.apiKey });
    expect(invalid.status).toBe(429);

    t.clock.advance(45_000);
    const again = await gqlSend(t.app, '{ me { id } }', {}, { key: a.apiKey });
    expect(again.body.data).toEqual({ me: { id: a.account.id } });
    expect(budget(again.headers)).toMatchObject({ remaining: 2, reset: 60 });
  });

  it('a GraphQL auth failure carries no budget headers', async () => {
    const r = await gqlSend(t.app, '{ me { id } }', {}, { key: 'sk_' + 'Z'.repeat(43) });
    expect(r.body.errors![0].extensions.code).toBe('UNAUTHENTICATED');
    expect(r.headers.has('ratelimit-limit')).toBe(false);
  });
});

describe('failed key attempts per client address', () => {
  const wrong = (i: number) => 'sk_' + String(i).padStart(43, 'x');

  it(`allows ${AUTH_FAILURES} failures per minute, then 429 for every wrong key from that address (a valid one proceeds), until the window resets`, async () => {
    t.clock.set(inWindow(5_000));
    const a = await seed(1000);
    const address = '203.0.113.10';
    // Successful requests spend nothing of the address's budget.
    for (let i = 0; i < AUTH_FAILURES + 3; i++) expect((await send(t.app, 'GET', ME, { key: a.apiKey, address })).status).toBe(200);
    for (let i = 0; i < AUTH_FAILURES; i++) {
      const r =
        i % 2 ? await send(t.app, 'GET', ME, { key: wrong(i), address }) : await gqlSend(t.app, '{ me { id } }', {}, { key: wrong(i), address });
      expect(r.status, `attempt ${i + 1}`).toBe(401);
    }
    const blocked = await send(t.app, 'GET', ME, { key: wrong(99), address });
    expect(blocked.status).toBe(429);
    expect(blocked.body).toMatchObject({ status_code: 429, error: { code: 'RATE_LIMITED' }, data: null });
    expect(budget(blocked.headers).retryAfter).toBe(55);
    const gql = await gqlSend(t.app, '{ me { id } }', {}, { key: wrong(98), address });
    expect(gql.status).toBe(429);
    expect(gql.body.errors![0].extensions.code).toBe('RATE_LIMITED');
    // A valid key is checked first and proceeds on its account's budget (a 256-bit key is not
    // guessable in the attempts an address gets); other addresses are unaffected.
    expect((await send(t.app, 'GET', ME, { key: a.apiKey, address })).status).toBe(200);
    expect((await gqlSend(t.app, '{ me { id } }', {}, { key: a.apiKey, address })).body.data).toEqual({ me: { id: a.account.id } });
    expect((await send(t.app, 'GET', ME, { key: wrong(99), address: '203.0.113.11' })).status).toBe(401);

    t.clock.advance(55_000);
    expect((await send(t.app, 'GET', ME, { key: wrong(99), address })).status).toBe(401);
  });

  it('requests without a key are not failures (they spend the anonymous budget, see anonymous-tooling.test.ts)', async () => {
    t.clock.set(inWindow(0, '2031-03-04T07:00:00.000Z'));
    const address = '203.0.113.20';
    expect((await send(t.app, 'GET', ME, { address })).status).toBe(401);
    for (let i = 0; i < AUTH_FAILURES * 3; i++) {
      const r = await gqlSend(t.app, '{ __schema { queryType { name } } }', {}, { address });
      expect(r.status).toBe(200);
    }
    expect((await send(t.app, 'GET', ME, { key: wrong(1), address })).status).toBe(401);
  });

  it('IPv6 clients are counted per /64', async () => {
    t.clock.set(inWindow(0, '2031-03-04T06:00:00.000Z'));
    for (let i = 0; i < AUTH_FAILURES; i++) {
      expect((await send(t.app, 'GET', ME, { key: wrong(i), address: `2001:db8:1:2::${i + 1}` })).status).toBe(401);
    }
    expect((await send(t.app, 'GET', ME, { key: wrong(0), address: '2001:db8:1:2:ffff::9' })).status).toBe(429);
    expect((await send(t.app, 'GET', ME, { key: wrong(0), address: '2001:db8:1:3::1' })).status).toBe(401);
  });

  it('uses the socket peer address on a real listener, for HTTP and WebSocket alike', async () => {
    const other = await createTestApp({ config: { AUTH_FAILURES_PER_MINUTE: '3' } });
    try {
      const a = await other.seedAccount();
      const url = await other.app.listen();
      const get = (key: string) => fetch(`${url}${ME}`, { headers: { authorization: `Bearer ${key}` } });
      for (let i = 0; i < 2; i++) expect((await get(wrong(i))).status).toBe(401);
      const ws = wsClient(url, `Bearer ${wrong(7)}`);
      await expect(wsOnce(ws, '{ me { id } }')).rejects.toMatchObject({ code: 4401 });
      await ws.dispose();
      const blocked = await get(wrong(8));
      expect(blocked.status).toBe(429);
      expect(blocked.headers.get('retry-after')).toMatch(/^\d+$/);
      const wsBlocked = wsClient(url, `Bearer ${wrong(9)}`);
      await expect(wsOnce(wsBlocked, '{ me { id } }')).rejects.toMatchObject({ code: 4429 });
      await wsBlocked.dispose();
      expect((await get(a.apiKey)).status).toBe(200);
      const wsValid = wsClient(url, `Bearer ${a.apiKey}`);
      await expect(wsOnce(wsValid, '{ me { id } }')).resolves.toMatchObject({ data: { me: { id: a.account.id } } });
      await wsValid.dispose();
    } finally {
      await other.close();
    }
  });
});

describe('housekeeping', () => {
  it('prunes past windows (memory store on PGlite, rate_limit_windows on PostgreSQL)', async () => {
    const { store } = t.deps.rateLimiters.accounts;
    if (t.deps.db.kind === 'pglite') expect(store).toBeInstanceOf(MemoryRateLimitStore);
    else expect(store).toBeInstanceOf(DatabaseRateLimitStore);
    const count = async () =>
      store instanceof MemoryRateLimitStore
        ? store.size
        : Number((await t.deps.db.prisma.$queryRaw<Array<{ n: number }>>`SELECT count(*)::int AS n FROM rate_limit_windows`)[0].n);

    t.clock.set(inWindow(0, '2031-03-05T00:00:00.000Z'));
    const accounts = await Promise.all([seed(100), seed(100), seed(100)]);
    for (const a of accounts) expect((await send(t.app, 'GET', ME, { key: a.apiKey })).status).toBe(200);
    expect(await count()).toBeGreaterThanOrEqual(3);

    t.clock.advance(120_000);
    expect((await send(t.app, 'GET', ME, { key: accounts[0].apiKey })).status).toBe(200);
    expect(await count()).toBe(1);
  });

  it('the failed-attempt store forgets past windows too', async () => {
    const { store } = t.deps.rateLimiters.authFailures;
    expect(store).toBeInstanceOf(MemoryRateLimitStore);
    t.clock.set(inWindow(0, '2031-03-06T00:00:00.000Z'));
    for (let i = 0; i < 10; i++) await send(t.app, 'GET', ME, { key: 'sk_' + 'q'.repeat(43), address: `198.51.100.${i}` });
    expect((store as MemoryRateLimitStore).size).toBeGreaterThanOrEqual(10);
    t.clock.advance(60_000);
    await send(t.app, 'GET', ME, { key: 'sk_' + 'q'.repeat(43), address: '198.51.100.200' });
    expect((store as MemoryRateLimitStore).size).toBe(1);
  });

  it('a memory store flooded with distinct keys stays bounded', async () => {
    const store = new MemoryRateLimitStore(100);
    const start = new Date(0);
    for (let i = 0; i < 1000; i++) await store.take(`k${i}`, start, 5);
    expect(store.size).toBeLessThanOrEqual(100);
    expect(await store.take('k999', start, 5)).toBe(2);
  });
});
