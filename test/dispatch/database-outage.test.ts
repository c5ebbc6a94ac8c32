// Riding out a database outage (docs/dispatch.md "Database outages"). A worker that cannot reach the
// database keeps its calls running, holds their writes and commits them when it is back: an outage
// shorter than a lease loses no result and ends no call as dispatcher_lost, and the batch moves on
// at once. Requests meanwhile get 503 with Retry-After, never 500. On PostgreSQL the worker and an
// app reach the shared server through a TCP proxy on loopback that the test cuts and restores (the
// server itself stays up for the other suites); the error mapping and the write queue's patience
// are checked on any database.
import net from 'node:net';
import type pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { buildApp, type App } from '../../src/app.ts';
import { openDatabase, type Database } from '../../src/db/client.ts';
import { withSqlTransaction } from '../../src/db/sql-transaction.ts';
import { isDatabaseUnreachable, unavailableFor } from '../../src/db/unreachable.ts';
import type { AppDeps } from '../../src/deps.ts';
import { DISPATCHER_LOST } from '../../src/dispatch/store/call-writes.ts';
import { WriteQueue } from '../../src/dispatch/store/write-queue.ts';
import { createSimulatorProvider } from '../../src/dispatch/voice/simulator.ts';
import type { DispatchWorker } from '../../src/dispatch/worker.ts';
import { createMetrics } from '../../src/metrics.ts';
import type { CallWrite } from '../../src/services/calls/call-transitions.ts';
import { internalError } from '../../src/http/responses.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { TEST_DATABASE_URL } from '../helpers/database.ts';
import { phoneEndingIn, registryOf, testWorker } from '../helpers/dispatch.ts';
import { insertBatch } from '../helpers/fixtures.ts';
import { waitFor } from '../helpers/wait.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const errno = (code: string, message = code) => Object.assign(new Error(message), { code, errno: -111, syscall: 'connect' });

describe('which errors mean the database is unreachable', () => {
  it('connection errors of pg, pg-pool, PostgreSQL and Prisma count; statement errors do not', () => {
    const unreachable: unknown[] = [
      errno('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'),
      errno('ECONNRESET', 'read ECONNRESET'),
      new Error('Connection terminated unexpectedly'),
      new Error('Connection terminated due to connection timeout'),
      new Error('timeout exceeded when trying to connect'),
      Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01', severity: 'FATAL' }),
      Object.assign(new Error('connection failure'), { code: '08006', severity: 'FATAL' }),
      Object.assign(new Error("Can't reach database server at 127.0.0.1:5432"), { code: 'P1001', clientVersion: '6' }),
      Object.assign(new Error('Server has closed the connection.'), { code: 'P1017' }),
      // Prisma's wrapper around the driver adapter's error, and GraphQL's around a resolver's.
      Object.assign(new Error('x'), { code: 'P2010', meta: { driverAdapterError: { cause: { kind: 'DatabaseNotReachable' } } } }),
      Object.assign(new Error('Unexpected error.'), { originalError: new Error('Connection terminated unexpectedly') }),
      new Error('outer', { cause: errno('ECONNREFUSED') }),
    ];
    const notUnreachable: unknown[] = [
      Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505', severity: 'ERROR' }),
      Object.assign(new Error('deadlock detected'), { code: '40P01' }),
      new Error('Cannot read properties of undefined'),
      'Connection terminated',
      null,
      undefined,
    ];
    for (const e of unreachable) expect(isDatabaseUnreachable(e), String((e as Error).message)).toBe(true);
    for (const e of notUnreachable) expect(isDatabaseUnreachable(e), String(e)).toBe(false);
    // A cycle of causes ends.
    const a: Record<string, unknown> = { message: 'a' };
    a.cause = { message: 'b', cause: a };
    expect(isDatabaseUnreachable(a)).toBe(false);
  });

  it('an unexpected error is a 503 with Retry-After while the database is unreachable, else a 500', async () => {
    const down = internalError(errno('ECONNREFUSED'));
    expect(down.status).toBe(503);
    expect(down.headers.get('retry-after')).toBe('5');
    expect((await down.json()).error.code).toBe('SERVICE_UNAVAILABLE');
    expect(internalError(new Error('bug')).status).toBe(500);
    expect(internalError().status).toBe(500);
    expect(unavailableFor(new Error('bug'))).toBeNull();
  });
});

describe('an app whose database is unreachable', () => {
  it('answers REST and GraphQL with 503 and Retry-After, and 200 again once it is back, without a restart', async () => {
    const t = await createTestApp();
    cleanups.push(() => t.close());
    const a = await t.seedAccount();
    // Every statement fails the way a refused connection does (PGlite cannot be cut; PostgreSQL's
    // pool is cut for real below). Prisma's pool is spared: it holds the driver adapter's own.
    const rawQuery = t.deps.db.pglite ? vi.spyOn(t.deps.db.pglite, 'query') : vi.spyOn(t.deps.db.pool!, 'query');
    rawQuery.mockRejectedValue(errno('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'));
    const me = await t.request('GET', '/api/v1/public/me', { key: a.apiKey });
    expect(me.status).toBe(503);
    expect(me.headers.get('retry-after')).toBe('5');
    expect(me.body.error.code).toBe('SERVICE_UNAVAILABLE');
    const gql = await t.gql('{ me { id } }', {}, a.apiKey);
    expect(gql.status).toBe(503);
    expect(gql.headers.get('retry-after')).toBe('5');
    expect(gql.body.errors[0].extensions.code).toBe('UNAVAILABLE');
    rawQuery.mockRestore();
    expect((await t.request('GET', '/api/v1/public/me', { key: a.apiKey })).status).toBe(200);
  });
});

describe('the write queue while the database is unreachable', () => {
  const write = (callId: string): CallWrite => ({
    callId,
    batchId: 'b',
    accountId: 'a',
    owner: 'w',
    from: 'ringing',
    to: 'in_progress',
    events: [],
    set: {},
  });

  it('keeps a group through any number of refused connections and commits it when the database is back', async () => {
    let failures = 0;
    const q = new WriteQueue({
      apply: async (writes) => {
        // 30 refusals at ~200 ms: a 6 s outage, longer than the 6 tries a failing group gets.
        if (failures < 30) {
          failures++;
          throw errno('ECONNREFUSED');
        }
        return { applied: new Set(writes.map((w) => w.callId)), finishedBatches: [] };
      },
    });
    await expect(q.enqueue(write('c1'))).resolves.toBe(true);
    expect(failures).toBe(30);
  }, 30_000);

  it('still drops a group the database keeps refusing for another reason', async () => {
    let tries = 0;
    const q = new WriteQueue({
      apply: async () => {
        tries++;
        throw Object.assign(new Error('value too long'), { code: '22001', severity: 'ERROR' });
      },
    });
    await expect(q.enqueue(write('c1'))).resolves.toBe(false);
    expect(tries).toBe(6);
  });
});

/** A TCP proxy on loopback to PostgreSQL that the test can cut (every connection destroyed, new ones reset) and restore. */
async function cuttableProxy(target: URL) {
  const sockets = new Set<net.Socket>();
  let cut = false;
  const server = net.createServer({ noDelay: true }, (client) => {
    client.on('error', () => {});
    if (cut) {
      client.resetAndDestroy();
      return;
    }
    const upstream = net.connect({ host: target.hostname, port: Number(target.port || 5432), noDelay: true });
    sockets.add(client).add(upstream);
    const close = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as net.AddressInfo).port);
  return {
    url: url.toString(),
    cut() {
      cut = true;
      for (const s of sockets) s.resetAndDestroy();
      sockets.clear();
    },
    restore() {
      cut = false;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

// Scaled down from the measured case (a 10 s outage under the default 30 s lease): same ratio.
const OUTAGE_MS = Number(process.env.OUTAGE_TEST_MS ?? 5_000);
const LEASE_MS = OUTAGE_MS * 3;
/** Calls end during the outage: answered before it, ended inside it (room either side for a slow machine). */
const CALL_MS = OUTAGE_MS * 0.6;
const IN_FLIGHT = 20;

describe.skipIf(!TEST_DATABASE_URL)('a connection dropped under a transaction (PostgreSQL)', () => {
  it('fails the transaction and discards the connection instead of throwing an uncaught exception', async () => {
    const t: TestApp = await createTestApp();
    cleanups.push(() => t.close());
    const proxy = await cuttableProxy(new URL(t.testDb.url!));
    cleanups.push(() => proxy.close());
    const db = await openDatabase({ databaseUrl: proxy.url, poolSize: 2, connectTimeoutMs: 1_000 });
    cleanups.push(() => db.close());
    const uncaught: unknown[] = [];
    const onUncaught = (e: unknown) => uncaught.push(e);
    process.prependListener('uncaughtException', onUncaught);
    cleanups.push(() => void process.off('uncaughtException', onUncaught));
    // The transaction's client, to see when it has noticed the cut.
    let client: pg.PoolClient | undefined;
    db.pool!.once('acquire', (c: pg.PoolClient) => (client = c));
    const failed = withSqlTransaction(db, async (tx) => {
      await tx.query('SELECT 1');
      let ended = false;
      client!.once('end', () => (ended = true));
      // Cut between two statements: the client is checked out and has no query running.
      proxy.cut();
      await waitFor(() => ended, { what: 'the checked-out client to see its connection end' });
      return tx.query('SELECT 2');
    });
    await expect(failed).rejects.toSatisfy(isDatabaseUnreachable);
    expect(uncaught).toEqual([]);
    proxy.restore();
    await expect(withSqlTransaction(db, (tx) => tx.query<{ n: number }>('SELECT 3 AS n'))).resolves.toEqual([{ n: 3 }]);
  });
});

describe.skipIf(!TEST_DATABASE_URL)('a 20-call batch through a database outage (PostgreSQL)', () => {
  it('loses no result, ends no call as dispatcher_lost, and moves again as soon as the database is back', async () => {
    const t: TestApp = await createTestApp();
    cleanups.push(() => t.close());
    const proxy = await cuttableProxy(new URL(t.testDb.url!));
    cleanups.push(() => proxy.close());
    const db: Database = await openDatabase({ databaseUrl: proxy.url, poolSize: 10, connectTimeoutMs: 1_000 });
    cleanups.push(() => db.close());
    const deps: AppDeps = {
      config: t.deps.config,
      db,
      logger: t.deps.logger,
      clock: t.clock,
      appSecret: t.deps.appSecret,
      metrics: createMetrics(db),
    };
    const app: App = buildApp(deps);
    cleanups.push(() => app.stop());

    const a = await t.seedAccount({ limits: { maxConcurrentCalls: 100 } });
    const { batch } = await insertBatch(t.deps, a, {
      contacts: IN_FLIGHT * 2,
      batch: { concurrency: IN_FLIGHT, recordingEnabled: false },
      // Answered and ended by the agent (4) or by the contact (3).
      callOverrides: (i) => ({ status: 'queued', phoneNumber: phoneEndingIn(i % 2 ? 4 : 3, i) }),
    });
    const sim = createSimulatorProvider({ callMs: CALL_MS, ringMs: 100 });
    let placed = 0;
    const provider = { ...sim, placeCall: async (...args: Parameters<typeof sim.placeCall>) => ((placed += 1), sim.placeCall(...args)) };
    const worker: DispatchWorker = testWorker(deps, { providers: registryOf(provider), leaseMs: LEASE_MS, pollMs: 50 });
    cleanups.push(() => worker.stop({ graceMs: 0 }));
    worker.start();

    const calls = () => t.deps.db.prisma.call.findMany({ where: { batchId: batch.id } });
    // Every call of the first round answered (and that recorded) before the cut.
    await waitFor(async () => (await calls()).filter((c) => c.status === 'in_progress').length === IN_FLIGHT, {
      what: `${IN_FLIGHT} calls in progress`,
    });
    const firstRound = new Set((await calls()).filter((c) => c.status === 'in_progress').map((c) => c.id));
    expect(placed).toBe(IN_FLIGHT);

    proxy.cut();
    const cutAt = Date.now();
    const me = await app.fetch(new Request('http://test.local/api/v1/public/me', { headers: { authorization: `Bearer ${a.apiKey}` } }));
    expect(me.status).toBe(503);
    expect(me.headers.get('retry-after')).toBe('5');
    // The calls end at the provider while the database is away.
    await waitFor(() => worker.stats().inFlight === 0, { what: 'the first round to end at the provider' });
    expect(Date.now() - cutAt, 'the calls ended within the outage').toBeLessThan(OUTAGE_MS);
    expect(placed, 'nothing dialled while the database is away').toBe(IN_FLIGHT);
    await waitFor(() => Date.now() - cutAt >= OUTAGE_MS, { intervalMs: 50 });
    proxy.restore();
    const restoredAt = Date.now();

    await waitFor(() => placed > IN_FLIGHT, { what: 'the next dial after the database came back', timeoutMs: LEASE_MS * 2 });
    const movedAfterMs = Date.now() - restoredAt;
    await waitFor(async () => (await t.deps.db.prisma.batch.findUniqueOrThrow({ where: { id: batch.id } })).status === 'completed', {
      what: 'the batch to complete',
      timeoutMs: LEASE_MS * 4,
    });
    const ended = await calls();
    const lost = ended.filter(
      (c) => firstRound.has(c.id) && (c.status !== 'completed' || !c.llmTranscript || c.disconnectReason === DISPATCHER_LOST),
    );
    console.info(
      `database outage of ${OUTAGE_MS} ms (lease ${LEASE_MS} ms), ${IN_FLIGHT} calls in flight: ${lost.length} results lost, moved again ${movedAfterMs} ms after the database came back`,
    );
    expect(lost.map((c) => `${c.status} ${c.disconnectReason}`)).toEqual([]);
    expect(ended.filter((c) => c.disconnectReason === DISPATCHER_LOST)).toEqual([]);
    // The next round started at once, well within a lease: it did not wait for leases to lapse.
    expect(movedAfterMs).toBeLessThan(Math.max(2_000, LEASE_MS / 3));
    await waitFor(async () => (await calls()).every((c) => c.transcriptStatus === 'ready'), { what: 'every analysis' });
    expect((await calls()).every((c) => c.status === 'completed' && c.llmTranscript && c.summary)).toBe(true);

    await waitFor(
      async () =>
        (await app.fetch(new Request('http://test.local/api/v1/public/me', { headers: { authorization: `Bearer ${a.apiKey}` } }))).status === 200,
      {
        what: '/me to answer 200 again',
      },
    );
  }, 120_000);
});
