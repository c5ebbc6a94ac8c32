// Security headers on every kind of response, a working CSP for GraphiQL, CORS for the dashboard's
// origin (preflight and actual requests, REST and GraphQL alike), and errors that never echo
// secrets or stack traces.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import pino from 'pino';
import { buildApp } from '../../src/app.ts';
import type { AppDeps } from '../../src/deps.ts';
import { createFrontDoor } from '../../src/http/front-door.ts';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { gqlSend, send } from '../helpers/abuse.ts';
import { createBodyBudget } from '../../src/http/body-budget.ts';

const ME = '/api/v1/public/me';
const DASHBOARD = 'https://dash.example.com';

let t: TestApp;
let a: SeededAccount;

beforeAll(async () => {
  t = await createTestApp({ config: { CORS_ORIGIN: `${DASHBOARD}, http://localhost:5173` } });
  a = await t.seedAccount();
});
afterAll(() => t.close());

function expectBaseline(h: Headers) {
  expect(h.get('x-content-type-options')).toBe('nosniff');
  expect(h.get('referrer-policy')).toBe('no-referrer');
  expect(h.get('x-frame-options')).toBe('DENY');
  expect(h.has('x-powered-by')).toBe(false);
  expect(h.get('content-security-policy')).toMatch(/frame-ancestors 'none'/);
}

describe('security headers', () => {
  it('are on API responses of every kind, with a CSP that allows nothing and no caching', async () => {
    const responses = [
      await send(t.app, 'GET', '/healthz'),
      await send(t.app, 'GET', ME, { key: a.apiKey }),
      await send(t.app, 'GET', ME),
      await send(t.app, 'GET', '/api/v1/public/nope', { key: a.apiKey }),
      await send(t.app, 'GET', '/nope'),
      await send(t.app, 'POST', ME, { key: a.apiKey, body: {} }),
      await gqlSend(t.app, '{ me { id } }', {}, { key: a.apiKey }),
      await gqlSend(t.app, '{ me { id } }'),
    ];
    for (const r of responses) {
      expectBaseline(r.headers);
      expect(r.headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'");
      expect(r.headers.get('cache-control')).toBe('no-store');
    }
  });

  it('GraphiQL gets a CSP that allows exactly its inline scripts (by hash) and this origin, no other host', async () => {
    const res = await t.app.fetch(new Request('http://test.local/graphql', { headers: { accept: 'text/html' } }));
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('renderYogaGraphiQL');
    expectBaseline(res.headers);
    const csp = res.headers.get('content-security-policy')!;
    const directives = Object.fromEntries(
      csp
        .split(';')
        .map((d) => d.trim().split(/\s+/))
        .map(([k, ...v]) => [k, v]),
    );
    const inline = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => crypto.createHash('sha256').update(m[1]).digest('base64'));
    expect(inline.length).toBeGreaterThan(0);
    for (const h of inline) expect(directives['script-src']).toContain(`'sha256-${h}'`);
    expect(directives['script-src']).toEqual(["'self'", ...inline.map((h) => `'sha256-${h}'`)]);
    expect(directives['script-src']).not.toContain("'unsafe-inline'");
    expect(directives['script-src']).not.toContain("'unsafe-eval'");
    expect(directives['connect-src']).toEqual(["'self'"]);
    expect(directives['worker-src']).toEqual(["'self'"]);
    expect(csp).not.toMatch(/https?:/);
    expect(directives['object-src']).toEqual(["'none'"]);
    expect(directives['frame-ancestors']).toEqual(["'none'"]);
  });
});

describe('CORS', () => {
  const preflight = (path: string, origin: string, method: string, headers = 'authorization, content-type') =>
    t.app.fetch(
      new Request(`http://test.local${path}`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers },
      }),
    );

  it('answers preflights for the configured origins on REST and GraphQL paths', async () => {
    for (const [path, method] of [
      ['/api/v1/public/call-batches', 'PUT'],
      ['/api/v1/public/call-batches/sched_x/results', 'GET'],
      ['/graphql', 'POST'],
    ]) {
      const r = await preflight(path, DASHBOARD, method);
      expect(r.status, path).toBe(204);
      expect(r.headers.get('access-control-allow-origin')).toBe(DASHBOARD);
      expect(r.headers.get('access-control-allow-methods')).toContain(method);
      expect(r.headers.get('access-control-allow-headers')).toMatch(/authorization/);
      expect(r.headers.get('access-control-allow-headers')).toMatch(/content-type/);
      expect(r.headers.get('access-control-max-age')).toBe('600');
      expect(r.headers.has('access-control-allow-credentials')).toBe(false);
      expect(r.headers.get('vary')).toMatch(/Origin/);
      expectBaseline(r.headers);
    }
    expect((await preflight(ME, 'http://localhost:5173', 'GET')).headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
  });

  it('gives other origins, other methods and unexpected headers nothing', async () => {
    for (const r of [
      await preflight(ME, 'https://evil.example', 'GET'),
      await preflight(ME, `${DASHBOARD}.evil.example`, 'GET'),
      await preflight(ME, DASHBOARD, 'PATCH'),
      await preflight(ME, DASHBOARD, 'GET', 'authorization, x-act-as-account'),
    ]) {
      expect(r.status).toBe(204);
      expect(r.headers.has('access-control-allow-origin')).toBe(false);
    }
  });

  it('lets the dashboard read responses and the budget headers; not other origins', async () => {
    const ok = await send(t.app, 'GET', ME, { key: a.apiKey, headers: { origin: DASHBOARD } });
    expect(ok.headers.get('access-control-allow-origin')).toBe(DASHBOARD);
    expect(ok.headers.get('access-control-expose-headers')).toMatch(/RateLimit-Remaining/);
    expect(ok.headers.get('access-control-expose-headers')).toMatch(/Retry-After/);
    expect(ok.headers.get('vary')).toMatch(/Origin/);
    const gql = await gqlSend(t.app, '{ me { id } }', {}, { key: a.apiKey, headers: { origin: DASHBOARD } });
    expect(gql.headers.get('access-control-allow-origin')).toBe(DASHBOARD);
    const evil = await send(t.app, 'GET', ME, { key: a.apiKey, headers: { origin: 'https://evil.example' } });
    expect(evil.status).toBe(200);
    expect(evil.headers.has('access-control-allow-origin')).toBe(false);
    const evilGql = await gqlSend(t.app, '{ me { id } }', {}, { key: a.apiKey, headers: { origin: 'https://evil.example' } });
    expect(evilGql.headers.has('access-control-allow-origin')).toBe(false);
  });

  it('is off without CORS_ORIGIN (GraphQL included) and open to any origin with *', async () => {
    const closed = buildApp({ ...t.deps, config: { ...t.deps.config, CORS_ORIGIN: undefined } });
    const open = buildApp({ ...t.deps, config: { ...t.deps.config, CORS_ORIGIN: '*' } });
    const pre = (app: typeof closed) =>
      app.fetch(
        new Request('http://test.local/graphql', { method: 'OPTIONS', headers: { origin: DASHBOARD, 'access-control-request-method': 'POST' } }),
      );
    expect((await pre(closed)).headers.has('access-control-allow-origin')).toBe(false);
    expect((await gqlSend(closed, '{ __typename }', {}, { headers: { origin: DASHBOARD } })).headers.has('access-control-allow-origin')).toBe(false);
    expect((await pre(open)).headers.get('access-control-allow-origin')).toBe('*');
    expect(
      (await send(open, 'GET', ME, { key: a.apiKey, headers: { origin: 'https://any.example' } })).headers.get('access-control-allow-origin'),
    ).toBe('*');
  });
});

describe('errors never echo secrets or stack traces', () => {
  const SECRET = 'postgres://admin:s3cr3t-pw@db.internal:5432/prod';

  function brokenApp() {
    const failure = new Error(`connect ECONNREFUSED ${SECRET}`);
    const prisma = new Proxy(t.deps.db.prisma, {
      get(target, prop, receiver) {
        if (prop === 'apiKey') return { findUnique: () => Promise.reject(failure) };
        return Reflect.get(target, prop, receiver);
      },
    });
    // The key lookup may also run on the raw driver (PGlite or the pg pool): it fails there too.
    const failingKeyLookup = <D extends object>(driver: D | undefined) =>
      driver &&
      new Proxy(driver, {
        get(target, prop, receiver) {
          const value = Reflect.get(target, prop, receiver);
          if (prop !== 'query' || typeof value !== 'function') return value;
          return (sql: unknown, ...rest: unknown[]) =>
            /\bapi_keys\b/.test(String((sql as { text?: string })?.text ?? sql)) ? Promise.reject(failure) : value.call(target, sql, ...rest);
        },
      });
    const logger = pino({ level: 'silent' });
    const db = { ...t.deps.db, prisma, pglite: failingKeyLookup(t.deps.db.pglite), pool: failingKeyLookup(t.deps.db.pool) };
    return buildApp({ ...t.deps, logger, db } as AppDeps);
  }

  it('an internal failure is a generic 500 on REST and a masked error on GraphQL', async () => {
    const app = brokenApp();
    const rest = await send(app, 'GET', ME, { key: a.apiKey });
    expect(rest.status).toBe(500);
    expect(rest.body).toEqual({
      status_code: 500,
      message: 'Internal server error',
      error: { code: 'INTERNAL_ERROR', details: [] },
      data: null,
    });
    const gql = await gqlSend(app, '{ me { id } }', {}, { key: a.apiKey });
    expect(gql.body.errors).toHaveLength(1);
    expect(gql.body.errors![0].message).toBe('Unexpected error.');
    for (const text of [JSON.stringify(rest.body), JSON.stringify(gql.body)]) {
      expect(text).not.toContain('s3cr3t');
      expect(text).not.toContain('ECONNREFUSED');
      expect(text).not.toMatch(/\bat .+:\d+:\d+/); // stack frames
      expect(text).not.toContain(a.apiKey);
    }
  });

  it('a handler that throws outside any error handling is still a generic 500, logged not echoed', async () => {
    const logger = pino({ level: 'silent' });
    const error = vi.spyOn(logger, 'error');
    const handle = createFrontDoor(
      { ...t.deps, logger },
      async () => {
        throw new Error(`boom ${SECRET}`);
      },
      createBodyBudget(1024 * 1024),
      () => '/test',
    );
    const res = await handle(new Request('http://test.local/anything'));
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(text).not.toContain('s3cr3t');
    expect(text).not.toContain('boom');
    expectBaseline(res.headers);
    expect(error).toHaveBeenCalledTimes(1);
  });

  it('authentication failures do not echo the presented key', async () => {
    const key = 'sk_' + 'S'.repeat(43);
    const rest = await send(t.app, 'GET', ME, { key });
    const gql = await gqlSend(t.app, '{ me { id } }', {}, { key });
    expect(JSON.stringify(rest.body)).not.toContain(key);
    expect(JSON.stringify(gql.body)).not.toContain(key);
  });
});

describe('secrets never reach the logs', () => {
  // A logger with no redaction at the most verbose level: what it records is everything the app
  // hands to its logger, so a key that never shows up here was never logged at all.
  function capturedLogger() {
    const lines: string[] = [];
    const logger = pino({ level: 'trace' }, { write: (line: string) => void lines.push(line) });
    return { logger, text: () => lines.join('') };
  }

  it('not through a good request, a bad-key request or a forced 500', async () => {
    const { logger, text } = capturedLogger();
    const app = buildApp({ ...t.deps, logger } as AppDeps);
    const badKey = 'sk_' + crypto.randomBytes(32).toString('base64url');

    // Good requests: REST read, REST create, GraphQL.
    expect((await send(app, 'GET', ME, { key: a.apiKey })).status).toBe(200);
    const created = await send(app, 'POST', '/api/v1/public/call-batches', {
      key: a.apiKey,
      body: {
        agent_id: a.agent.id,
        version_id: a.version.id,
        interruption: false,
        use_alternate_number: false,
        start_mode: 'manual',
        schedule_date: '2030-01-01',
        schedule_time: '10:00',
        schedule_timezone: 'UTC',
        contacts: [{ contact_id: 'c1', phone_number: '+14155550123' }],
      },
    });
    expect(created.status).toBe(201);
    // An operation that logs what it did.
    expect((await send(app, 'POST', `/api/v1/public/call-batches/${created.body.data.batch_id}/start`, { key: a.apiKey })).status).toBe(200);
    expect((await gqlSend(app, '{ me { id } }', {}, { key: a.apiKey })).status).toBe(200);

    // Bad key, on both surfaces.
    expect((await send(app, 'GET', ME, { key: badKey })).status).toBe(401);
    expect((await gqlSend(app, '{ me { id } }', {}, { key: badKey })).body.errors![0].extensions.code).toBe('UNAUTHENTICATED');

    // Forced 500s, past authentication, on both surfaces.
    // Not a connection error: an unreachable database is a 503 (database-outage.test.ts).
    const failure = new Error('batches read failed unexpectedly');
    const prisma = new Proxy(t.deps.db.prisma, {
      get(target, prop, receiver) {
        if (prop === 'batch') return new Proxy({}, { get: () => () => Promise.reject(failure) });
        return Reflect.get(target, prop, receiver);
      },
    });
    // List pages read batches through the raw driver: its statements on batches fail too.
    const failBatchReads = <D extends object>(driver: D | undefined): D | undefined =>
      driver &&
      new Proxy(driver, {
        get(target, prop) {
          const v = Reflect.get(target, prop, target);
          if (typeof v !== 'function') return v;
          if (prop !== 'query') return v.bind(target);
          // A statement is a string, or a config object for a prepared one (db/sql-statement.ts).
          return (sql: unknown, ...rest: unknown[]) =>
            /\bbatches\b/.test(typeof sql === 'string' ? sql : String((sql as { text?: unknown })?.text ?? ''))
              ? Promise.reject(failure)
              : v.call(target, sql, ...rest);
        },
      });
    const db = { ...t.deps.db, prisma, pglite: failBatchReads(t.deps.db.pglite), pool: failBatchReads(t.deps.db.pool) };
    const broken = buildApp({ ...t.deps, logger, db } as AppDeps);
    const crashed = await send(broken, 'GET', '/api/v1/public/call-batches', { key: a.apiKey });
    expect(crashed.status).toBe(500);
    const gqlCrash = await gqlSend(broken, '{ batches { items { id } } }', {}, { key: a.apiKey });
    expect(gqlCrash.body.errors![0].message).toBe('Unexpected error.');

    const logs = text();
    // The capture works: the failures were logged, with what an operator needs.
    expect(logs).toContain('batches read failed unexpectedly');
    expect(logs).toMatch(/"level":50/);
    for (const key of [a.apiKey, badKey]) {
      expect(logs).not.toContain(key);
      // Not even the part after the prefix (a log line might cut or re-encode it).
      expect(logs).not.toContain(key.slice(3, 24));
    }
  });
});
