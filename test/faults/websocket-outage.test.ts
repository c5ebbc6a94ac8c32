// GraphQL over WebSocket while the database is unreachable (docs/dispatch.md "Database outages"):
// as HTTP answers 503 with Retry-After, a socket is told the service is unavailable, never
// "Unexpected error." nor "Invalid API key": connection_init closes the socket with 1013 (Try Again
// Later), an operation on an open socket gets an error with extensions.code UNAVAILABLE, and once
// the database is back the same socket works. The database's failure is the refused connection
// database-outage.test.ts uses (any database: PGlite and PostgreSQL).
import { afterAll, beforeAll, describe, expect, it, vi, type MockInstance } from 'vitest';
import type { Client } from 'graphql-ws';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { wsClient, wsOnce } from '../helpers/ws-client.ts';

let t: TestApp;
let a: SeededAccount;
let url: string;
const clients: Client[] = [];

beforeAll(async () => {
  // No key cache: every operation's context checks its key in the database, as it does once the cache's second is up.
  t = await createTestApp({ config: { RUN_WORKER: 'false', API_KEY_CACHE_MS: '0' } });
  a = await t.seedAccount();
  url = await t.app.listen();
});
afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.dispose()));
  await t.close();
});

const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED', errno: -111, syscall: 'connect' });

/** Every statement fails as a refused connection does, until restored. */
function cutDatabase(): MockInstance {
  const spy = t.deps.db.pglite ? vi.spyOn(t.deps.db.pglite, 'query') : vi.spyOn(t.deps.db.pool!, 'query');
  spy.mockRejectedValue(refused());
  return spy;
}

function client(): Client {
  const c = wsClient(url, `Bearer ${a.apiKey}`);
  clients.push(c);
  return c;
}

describe('GraphQL over WebSocket while the database is unreachable', () => {
  it('an operation on an open socket gets UNAVAILABLE (not "Unexpected error."), and the socket works again once the database is back', async () => {
    const c = client();
    expect((await wsOnce(c, '{ me { id } }')).data).toEqual({ me: { id: a.account.id } });
    const cut = cutDatabase();
    let failure: unknown;
    try {
      const r = await wsOnce(c, '{ me { id } }');
      failure = r.errors;
    } catch (e) {
      failure = e;
    } finally {
      cut.mockRestore();
    }
    expect(Array.isArray(failure), `expected GraphQL errors, got ${JSON.stringify(failure)}`).toBe(true);
    const [err] = failure as { message: string; extensions?: { code?: string } }[];
    expect(err!.message).toMatch(/temporarily unavailable/i);
    expect(err!.message).not.toMatch(/Unexpected error/);
    expect(err!.extensions?.code).toBe('UNAVAILABLE');
    expect((await wsOnce(c, '{ me { id } }')).data).toEqual({ me: { id: a.account.id } });
  });

  it('a subscription opened meanwhile gets UNAVAILABLE, not "Unexpected error."', async () => {
    const c = client();
    expect((await wsOnce(c, '{ me { id } }')).data).toEqual({ me: { id: a.account.id } });
    const cut = cutDatabase();
    let failure: unknown;
    try {
      failure = (await wsOnce(c, 'subscription { batchProgress(batchId: "sched_missing") { status } }')).errors;
    } catch (e) {
      failure = e;
    } finally {
      cut.mockRestore();
    }
    expect(Array.isArray(failure), `expected GraphQL errors, got ${JSON.stringify(failure)}`).toBe(true);
    const [err] = failure as { message: string; extensions?: { code?: string } }[];
    expect(err!.message).not.toMatch(/Unexpected error/);
    expect(err!.extensions?.code).toBe('UNAVAILABLE');
  });

  it('connection_init closes the socket with 1013 Try Again Later, not 4401 Invalid API key', async () => {
    // A key this process has not seen yet, so its check must read the database.
    const fresh = await t.seedAccount();
    const c = wsClient(url, `Bearer ${fresh.apiKey}`);
    clients.push(c);
    const cut = cutDatabase();
    let closed: { code?: number; reason?: string } | undefined;
    try {
      await wsOnce(c, '{ me { id } }');
    } catch (e) {
      closed = e as { code?: number; reason?: string };
    } finally {
      cut.mockRestore();
    }
    expect({ code: closed?.code, reason: closed?.reason }).toEqual({ code: 1013, reason: 'Service temporarily unavailable' });
  });
});
