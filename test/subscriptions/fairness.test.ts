// One tenant's live subscriptions cost the process a bounded amount, so another tenant's requests
// keep going: subscriptions and sockets are capped per account (all its keys together) and per
// process, and an account's subscriptions receive at most SUBSCRIPTION_EVENTS_PER_ACCOUNT_PER_SECOND
// values in all (each value executed once for all its subscribers). With an account at its cap on
// batches that change all the time, another account's request rate stays at least half of what it
// is without it. Errors over a WebSocket carry no `extensions.http` (HTTP's status and headers).
import http from 'node:http';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { insertBatch } from '../helpers/fixtures.ts';
import { sseStream } from '../helpers/subscriptions.ts';
import { waitFor } from '../helpers/wait.ts';
import { issueApiKey } from '../../src/services/auth/api-keys.ts';
import { LatestByKeyQueue } from '../../src/events/queue.ts';
import { STREAM_MAX_PENDING } from '../../src/events/hub.ts';

const PER_ACCOUNT = 1_000;
/** Subscriptions per socket: with the socket itself, 10 sockets fill an account. */
const PER_SOCKET = 99;
const SOCKETS = PER_ACCOUNT / (PER_SOCKET + 1);
const BATCHES = 4;
const PROGRESS = 'subscription($id: ID!) { batchProgress(batchId: $id) { batchId status queued completed callbacks updatedAt } }';

interface LeanSocket {
  /** `next` messages received (values and errors alike). */
  nexts: number;
  /** Operation ids that received their first `next`. */
  started: Set<string>;
  /** Payloads of `next` messages with errors, and of `error` messages. */
  errors: unknown[];
  acked: Promise<void>;
  closed: Promise<{ code: number; reason: string }>;
  subscribe(id: string, query: string, variables?: Record<string, unknown>): void;
  close(): void;
}

/** graphql-transport-ws by hand: a client this cheap measures the server, not itself. */
function leanSocket(baseUrl: string, key: string): LeanSocket {
  const ws = new WebSocket(baseUrl.replace(/^http/, 'ws') + '/graphql', 'graphql-transport-ws');
  let ack!: () => void;
  const s: LeanSocket = {
    nexts: 0,
    started: new Set(),
    errors: [],
    acked: new Promise<void>((r) => (ack = r)),
    closed: new Promise((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: String(reason) }))),
    subscribe: (id, query, variables) => ws.send(JSON.stringify({ id, type: 'subscribe', payload: { query, variables } })),
    close: () => ws.close(1000),
  };
  ws.on('open', () => ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${key}` } })));
  ws.on('message', (raw) => {
    const msg = JSON.parse(String(raw));
    if (msg.type === 'connection_ack') ack();
    else if (msg.type === 'next') {
      s.nexts++;
      s.started.add(msg.id);
      if (msg.payload.errors) s.errors.push(msg.payload);
    } else if (msg.type === 'error') s.errors.push(msg.payload);
    else if (msg.type === 'ping') ws.send('{"type":"pong"}');
  });
  ws.on('error', () => {});
  return s;
}

let t: TestApp;
let url: string;
let a: SeededAccount;
let b: SeededAccount;
let aBatches: string[];
let writing = true;
let writer: Promise<void>;

beforeAll(async () => {
  t = await createTestApp({ config: { MAX_SUBSCRIPTIONS_PER_ACCOUNT: String(PER_ACCOUNT), WS_MAX_CONNECTIONS_PER_ADDRESS: '1000' } });
  url = await t.app.listen();
  a = await t.seedAccount({ limits: { rateLimitPerMinute: 1_000_000 } });
  b = await t.seedAccount({ limits: { rateLimitPerMinute: 1_000_000 } });
  aBatches = [];
  for (let i = 0; i < BATCHES; i++) aBatches.push((await insertBatch(t.deps, a, { contacts: 1, status: 'running' })).batch.id);
  // A's batches change all the time (a webhook delivered: the callbacks counter), whoever watches.
  writer = (async () => {
    while (writing) {
      await t.deps.db.prisma.$executeRawUnsafe(
        `UPDATE batches SET callbacks = callbacks + 1, updated_at = now() WHERE id = ANY($1::text[])`,
        aBatches,
      );
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
});
afterAll(async () => {
  writing = false;
  await writer;
  await t.close();
});

/** Fills A's cap: SOCKETS sockets of PER_SOCKET batchProgress subscriptions each, every one with its first value. */
async function fillAccount(): Promise<LeanSocket[]> {
  const sockets = Array.from({ length: SOCKETS }, () => leanSocket(url, a.apiKey));
  await Promise.all(sockets.map((s) => s.acked));
  sockets.forEach((s, i) => {
    for (let j = 1; j <= PER_SOCKET; j++) s.subscribe(String(j), PROGRESS, { id: aBatches[(i * PER_SOCKET + j) % BATCHES] });
  });
  await waitFor(() => sockets.every((s) => s.started.size === PER_SOCKET), { what: 'every subscription of A to start' });
  expect(sockets.flatMap((s) => s.errors)).toEqual([]);
  return sockets;
}

async function emptyAccount(sockets: LeanSocket[]): Promise<void> {
  for (const s of sockets) s.close();
  await Promise.all(sockets.map((s) => s.closed));
  await waitFor(() => (t.deps.events.started()?.stats().progressSubscribers ?? 0) === 0, { what: "A's subscriptions to end" });
}

describe('subscription caps', () => {
  it('refuses the subscription and the socket past the per-account cap, whichever of its keys asks, with a clear error', async () => {
    const second = (await issueApiKey(t.deps.db, a.account.id)).apiKey;
    const sockets = await fillAccount();
    try {
      const message = `At most ${PER_ACCOUNT} subscriptions and sockets at once per account`;
      // One more operation on a socket that has room: refused on its own, over WebSocket.
      sockets[0].subscribe('extra', PROGRESS, { id: aBatches[0] });
      await waitFor(() => sockets[0].errors.length > 0, { what: 'the refusal' });
      expect(sockets[0].errors[0]).toEqual({ errors: [{ message, extensions: { code: 'RATE_LIMITED' } }] });
      // Another key of the same account, over SSE.
      const sse = sseStream(fetch, url, PROGRESS, { id: aBatches[0] }, second);
      const errors = await sse.firstError();
      sse.close();
      expect(errors[0]).toMatchObject({ message, extensions: { code: 'RATE_LIMITED' } });
      expect(errors[0].extensions.http).toBeUndefined();
      // A new socket from that key: closed once it authenticates.
      expect(await leanSocket(url, second).closed).toEqual({ code: 4429, reason: 'Too many sockets and subscriptions for this account' });

      // Another account is not affected.
      const other = leanSocket(url, b.apiKey);
      await other.acked;
      other.close();
    } finally {
      await emptyAccount(sockets);
    }
    // Room again once A's subscriptions ended.
    const again = leanSocket(url, second);
    await again.acked;
    again.subscribe('1', PROGRESS, { id: aBatches[0] });
    await waitFor(() => again.started.has('1'));
    expect(again.errors).toEqual([]);
    again.close();
    await again.closed;
  });

  it('refuses subscriptions and sockets past the per-process cap, for every account', async () => {
    const small = await createTestApp({ config: { MAX_SUBSCRIPTIONS_PER_PROCESS: '2' } });
    try {
      const base = await small.app.listen();
      const [x, y] = [await small.seedAccount(), await small.seedAccount()];
      const first = leanSocket(base, x.apiKey);
      await first.acked;
      const { batch } = await insertBatch(small.deps, y, { contacts: 1, status: 'running' });
      const held = sseStream(fetch, base, PROGRESS, { id: batch.id }, y.apiKey);
      await held.until(() => true);
      const refused = sseStream(fetch, base, PROGRESS, { id: batch.id }, y.apiKey);
      expect((await refused.firstError())[0]).toMatchObject({
        message: 'This server holds its 2 subscriptions and sockets; retry later or on another server',
        extensions: { code: 'RATE_LIMITED' },
      });
      refused.close();
      expect(await leanSocket(base, y.apiKey).closed).toEqual({ code: 4429, reason: 'Too many sockets and subscriptions on this server' });
      held.close();
      first.close();
    } finally {
      await small.close();
    }
  });
});

describe('errors over a WebSocket', () => {
  it('carry no extensions.http', async () => {
    const s = leanSocket(url, b.apiKey);
    await s.acked;
    // A query past the cost limits (refused with HTTP 400 over HTTP) and a subscription to a foreign batch.
    s.subscribe('costly', `{ ${Array.from({ length: 30 }, (_, i) => `a${i}: me { id }`).join(' ')} }`);
    s.subscribe('foreign', PROGRESS, { id: aBatches[0] });
    await waitFor(() => s.errors.length >= 2, { what: 'both errors' });
    s.close();
    // A `next` message carries a result ({ errors }), an `error` message the errors themselves.
    type Err = { message: string; extensions?: Record<string, unknown> };
    const errors = (s.errors as ({ errors: Err[] } | Err[])[]).flatMap((p) => (Array.isArray(p) ? p : p.errors));
    expect(errors.map((e) => e.extensions?.code).sort(), JSON.stringify(errors)).toEqual(['NOT_FOUND', 'QUERY_TOO_COMPLEX']);
    for (const e of errors) expect(e.extensions).not.toHaveProperty('http');
  });
});

/** B's GET /api/v1/public/me over keep-alive HTTP, `inFlight` at once, for `ms`: requests per second. */
async function bRate(ms: number, inFlight = 4): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: inFlight });
  const { port } = new URL(url);
  const get = () =>
    new Promise<number>((resolve, reject) => {
      const req = http.get({ host: '127.0.0.1', port, path: '/api/v1/public/me', agent, headers: { authorization: `Bearer ${b.apiKey}` } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      });
      req.on('error', reject);
    });
  let done = 0;
  const started = performance.now();
  const end = started + ms;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (performance.now() < end) {
        expect(await get()).toBe(200);
        done++;
      }
    }),
  );
  agent.destroy();
  return done / ((performance.now() - started) / 1000);
}

describe("another tenant's requests", () => {
  it('keep at least half their rate while an account holds its cap of subscriptions on changing batches', { timeout: 180_000 }, async () => {
    const WINDOW_MS = 2_500;
    const budget = t.deps.config.SUBSCRIPTION_EVENTS_PER_ACCOUNT_PER_SECOND;
    await bRate(1_000);
    let calm = 0;
    let loaded = 0;
    let mostValues = 0;
    const figures: string[] = [];
    // Alternated, so whatever else the machine does weighs on both alike.
    for (let round = 0; round < 3; round++) {
      const c = await bRate(WINDOW_MS);
      const sockets = await fillAccount();
      const before = sockets.reduce((n, s) => n + s.nexts, 0);
      const l = await bRate(WINDOW_MS);
      const valuesPerSecond = ((sockets.reduce((n, s) => n + s.nexts, 0) - before) * 1000) / WINDOW_MS;
      await emptyAccount(sockets);
      mostValues = Math.max(mostValues, valuesPerSecond);
      calm += c;
      loaded += l;
      figures.push(`calm ${c.toFixed(0)}, loaded ${l.toFixed(0)} req/s (A ${valuesPerSecond.toFixed(0)} values/s)`);
    }
    console.log(`fairness: ${figures.join('; ')}; loaded/calm ${(loaded / calm).toFixed(2)}`);
    expect(loaded / calm).toBeGreaterThanOrEqual(0.5);
    // A's values stay within its budget (plus at most one burst of a second's worth).
    expect(mostValues).toBeLessThanOrEqual(budget + (budget * 1000) / WINDOW_MS);
  });
});

describe('what one subscription holds', () => {
  it('a call stream keeps at most STREAM_MAX_PENDING calls for a consumer that does not read, the latest ones', async () => {
    const q = new LatestByKeyQueue<{ id: string; v: number }>(
      (c) => c.id,
      () => {},
      { maxPending: STREAM_MAX_PENDING },
    );
    for (let v = 0; v < 3; v++) for (let i = 0; i < 5 * STREAM_MAX_PENDING; i++) q.push({ id: `call${i}`, v });
    expect(q.size).toBe(STREAM_MAX_PENDING);
    // The calls that changed last, each in its latest state.
    expect((await q.next()).value).toEqual({ id: `call${4 * STREAM_MAX_PENDING}`, v: 2 });
    q.close();
  });
});
