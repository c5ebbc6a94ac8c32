// The per-account budget is one budget per account across API processes: counters live in
// rate_limit_windows. On PostgreSQL (TEST_DATABASE_URL) two app instances with their own
// connection pools, and a real second server process, share it. On PGlite (one process by
// construction) the in-process variant: two app instances with their own limiters on one database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type App } from '../../src/app.ts';
import { openDatabase, type Database } from '../../src/db/client.ts';
import type { AppDeps } from '../../src/deps.ts';
import { DatabaseRateLimitStore } from '../../src/services/auth/rate-limit-store-postgres.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { budget, inWindow, send } from '../helpers/abuse.ts';
import { TEST_DATABASE_URL } from '../helpers/database.ts';
import { startSiblingApi, type ServerProcess } from '../helpers/server-process.ts';

const ME = '/api/v1/public/me';

let t: TestApp;
let secondDb: Database | undefined;
let second: App;

beforeAll(async () => {
  // RATE_LIMIT_STORE=database is the default on PostgreSQL; stated so PGlite runs the same store.
  t = await createTestApp({ config: { RATE_LIMIT_STORE: 'database' } });
  // Another "process": its own deps (so its own limiter objects) and, on PostgreSQL, its own pool.
  if (t.testDb.url) secondDb = await openDatabase({ databaseUrl: t.testDb.url, poolSize: 2 });
  const deps2: AppDeps = { ...t.deps, db: secondDb ?? t.deps.db };
  second = buildApp(deps2);
});
afterAll(async () => {
  await second?.stop();
  await secondDb?.close();
  await t.close();
});

describe('shared per-account budget', () => {
  it('two app instances on one database spend one budget and reset together', async () => {
    expect(t.deps.rateLimiters.accounts.store).toBeInstanceOf(DatabaseRateLimitStore);
    expect(second.deps.rateLimiters.accounts).not.toBe(t.deps.rateLimiters.accounts);
    t.clock.set(inWindow(20_000));
    const a = await t.seedAccount({ limits: { rateLimitPerMinute: 4 } });
    const apps = [t.app, second, t.app, second];
    const remaining: number[] = [];
    for (const app of apps) {
      const r = await send(app, 'GET', ME, { key: a.apiKey });
      expect(r.status).toBe(200);
      remaining.push(budget(r.headers).remaining);
    }
    expect(remaining).toEqual([3, 2, 1, 0]);
    for (const app of [t.app, second]) {
      const r = await send(app, 'GET', ME, { key: a.apiKey });
      expect(r.status).toBe(429);
      expect(budget(r.headers)).toEqual({ limit: 4, remaining: 0, reset: 40, retryAfter: 40 });
    }
    t.clock.advance(40_000);
    expect((await send(second, 'GET', ME, { key: a.apiKey })).status).toBe(200);
    expect(budget((await send(t.app, 'GET', ME, { key: a.apiKey })).headers).remaining).toBe(2);
  });

  it('concurrent requests through both instances never admit more than the limit', async () => {
    t.clock.set(inWindow(0, '2031-04-01T00:00:00.000Z'));
    const a = await t.seedAccount({ limits: { rateLimitPerMinute: 10 } });
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => send(i % 2 ? second : t.app, 'GET', ME, { key: a.apiKey })));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(20);
  });
});

/** The same database, its statements counted (the store runs them on the raw driver). */
function counted(db: Database): { db: Database; statements: () => number } {
  let n = 0;
  const count = <F extends (...args: never[]) => unknown>(f: F) => ((...args: Parameters<F>) => (n++, f(...args))) as F;
  const wrapped: Database = db.pglite
    ? { ...db, pglite: Object.assign(Object.create(db.pglite), { query: count(db.pglite.query.bind(db.pglite)) }) }
    : { ...db, pool: Object.assign(Object.create(db.pool!), { query: count(db.pool!.query.bind(db.pool!)) }) };
  return { db: wrapped, statements: () => n };
}

describe('the database store under a burst', () => {
  const window = new Date('2031-05-01T00:00:00.000Z');

  it('counts a burst of one key in a few statements, every request its own count', async () => {
    const { db, statements } = counted(t.deps.db);
    const store = new DatabaseRateLimitStore(db);
    const counts = await Promise.all(Array.from({ length: 40 }, () => store.take('burst:a', window, 1000)));
    expect([...counts].sort((x, y) => x! - y!)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    // The first take runs alone; the rest, arriving while it runs, are counted by one more statement.
    expect(statements()).toBeLessThanOrEqual(3);
  });

  it('two stores (two processes) bursting at once admit exactly the limit, each admitted request a distinct count', async () => {
    const one = counted(t.deps.db);
    const other = counted(secondDb ?? t.deps.db);
    const stores = [new DatabaseRateLimitStore(one.db), new DatabaseRateLimitStore(other.db)];
    const counts = await Promise.all(Array.from({ length: 60 }, (_, i) => stores[i % 2].take('burst:b', window, 25)));
    const admitted = counts.filter((c): c is number => c !== null).sort((x, y) => x - y);
    expect(admitted).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
    expect(await stores[0].peek('burst:b', window)).toBe(25);
    // Refused requests leave the window as it is.
    expect(await stores[1].take('burst:b', window, 25)).toBeNull();
    expect(await stores[1].peek('burst:b', window)).toBe(25);
  });
});

describe.skipIf(!TEST_DATABASE_URL)('a real second server process on the same PostgreSQL database', () => {
  let child: ServerProcess | undefined;
  afterAll(async () => {
    child?.child.kill('SIGTERM');
    await child?.waitForExit();
  });

  it('shares the budget with this process', async () => {
    child = await startSiblingApi(t);
    // Both processes must count in the same minute, and the child runs on the system clock: a run
    // that crossed the end of a minute is done again (in the next one, with a fresh account)
    // rather than waiting for a minute to begin.
    const minute = () => Math.floor(Date.now() / 60_000);
    for (let run = 1; ; run++) {
      const began = minute();
      t.clock.set(new Date());
      const a = await t.seedAccount({ limits: { rateLimitPerMinute: 4 } });
      const viaChild = () => fetch(`${child!.url}${ME}`, { headers: { authorization: `Bearer ${a.apiKey}` } });
      const statuses = [(await viaChild()).status, (await send(t.app, 'GET', ME, { key: a.apiKey })).status, (await viaChild()).status];
      const fourth = await send(second, 'GET', ME, { key: a.apiKey });
      const refused = await viaChild();
      const code = ((await refused.json()) as { error?: { code: string } }).error?.code;
      if (minute() !== began && run < 3) continue;
      expect(statuses).toEqual([200, 200, 200]);
      expect(budget(fourth.headers).remaining).toBe(0);
      expect(refused.status).toBe(429);
      expect(refused.headers.get('ratelimit-remaining')).toBe('0');
      expect(code).toBe('RATE_LIMITED');
      break;
    }
  });
});
