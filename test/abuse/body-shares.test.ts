// Request bodies over real sockets, against parties that hold them: each sender has a share of the
// in-flight body budget (an account, an anonymous client address, anonymous clients together), bytes
// count as they arrive (a declared Content-Length reserves nothing), a body that stalls or trickles
// is cut with 408, headers that trickle are cut by the server's headers timeout, connections per
// address are capped at accept, /readyz reports a full budget, and a client that walks away mid-body
// is its own 4xx (499), logged at info. Other addresses are other loopback addresses (127.0.0.x).
import http from 'node:http';
import net from 'node:net';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type App } from '../../src/app.ts';
import type { AppDeps } from '../../src/deps.ts';
import { createMetrics, type Metrics } from '../../src/metrics.ts';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { batchBody, CALL_BATCHES } from '../helpers/batch-requests.ts';
import { waitFor } from '../helpers/wait.ts';

const KiB = 1024;
const MAX_BODY = 1024 * KiB;
const IN_FLIGHT = 2048 * KiB;
const ANONYMOUS = 512 * KiB;
const PER_ADDRESS = 256 * KiB;
const PER_ADDRESS_CONNECTIONS = 64;
/** The paced app's window and rate: each 500 ms must bring 2 KiB (or the rest of a declared body). */
const WINDOW_MS = 500;
const MIN_RATE = 4 * KiB;
const HEADERS_TIMEOUT_MS = 1_000;
/** What the paced app may take beyond its deadline on a busy 2-core machine. */
const SLACK_MS = 3_000;

const shares = {
  MAX_BODY_BYTES: String(MAX_BODY),
  MAX_BODY_BYTES_IN_FLIGHT: String(IN_FLIGHT),
  MAX_BODY_BYTES_IN_FLIGHT_ANONYMOUS: String(ANONYMOUS),
  MAX_BODY_BYTES_IN_FLIGHT_PER_ADDRESS: String(PER_ADDRESS),
  MAX_CONNECTIONS_PER_ADDRESS: String(PER_ADDRESS_CONNECTIONS),
};

let t: TestApp;
let a: SeededAccount;
let b: SeededAccount;
/** Shares app: bodies may sit still for a minute, so what they hold stays held while we look. */
let base: string;
/** Paced app: tight body pace and headers timeout, its own metrics and a log we read. */
let paced: { app: App; base: string; metrics: Metrics; logLines: () => Array<Record<string, any>> };

beforeAll(async () => {
  t = await createTestApp({ config: { ...shares, BODY_PACE_WINDOW_MS: '60000', BODY_MIN_BYTES_PER_SECOND: '1' } });
  a = await t.seedAccount({ limits: { rateLimitPerMinute: 100_000 } });
  b = await t.seedAccount({ limits: { rateLimitPerMinute: 100_000 } });
  base = await t.app.listen();

  const lines: string[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
  const metrics = createMetrics(t.deps.db);
  const config = {
    ...t.deps.config,
    BODY_PACE_WINDOW_MS: WINDOW_MS,
    BODY_MIN_BYTES_PER_SECOND: MIN_RATE,
    HTTP_HEADERS_TIMEOUT_MS: HEADERS_TIMEOUT_MS,
  };
  const app = buildApp({ ...t.deps, config, logger, metrics } as AppDeps);
  paced = { app, base: await app.listen(), metrics, logLines: () => lines.map((l) => JSON.parse(l)) };
});
afterAll(async () => {
  await paced?.app.stop();
  await t?.close();
});

// ------------------------------------------------------------------------------------------------
// Clients

interface Held {
  socket: net.Socket;
  /** Everything the server sent so far. */
  text(): string;
  /** The response's status once its head arrived, else 0. */
  status(): number;
  closed: Promise<void>;
  isClosed(): boolean;
  send(data: string | Buffer): void;
}

/** A request over its own socket from `from`: the head and `first` bytes of the body, then nothing until told. */
function holdRequest(
  url: string,
  o: { from: string; path: string; key?: string; declared: number; first: string | Buffer; method?: string; headers?: Record<string, string> },
): Promise<Held> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    let text = '';
    let closed = false;
    const socket = net.connect({ host: hostname, port: Number(port), localAddress: o.from });
    const closedP = new Promise<void>((r) => socket.once('close', () => ((closed = true), r())));
    socket.on('data', (d) => (text += d.toString('latin1')));
    socket.on('error', () => {}); // a reset after the server's answer is the point of most of these
    socket.once('connect', () => {
      const headers: Record<string, string> = {
        host: `${hostname}:${port}`,
        'content-type': 'application/json',
        'content-length': String(o.declared),
        ...o.headers,
      };
      if (o.key) headers.authorization = `Bearer ${o.key}`;
      const head = `${o.method ?? 'POST'} ${o.path} HTTP/1.1\r\n${Object.entries(headers)
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('')}\r\n`;
      socket.write(head);
      if (o.first.length) socket.write(o.first);
      resolve({
        socket,
        text: () => text,
        status: () => Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0),
        closed: closedP,
        isClosed: () => closed,
        send: (data) => void (socket.writable && socket.write(data)),
      });
    });
    socket.once('error', reject);
  });
}

/** The JSON body of a held request's answer. */
const answerBody = (h: Held) =>
  JSON.parse(
    h
      .text()
      .slice(h.text().indexOf('\r\n\r\n') + 4)
      .replace(/^[0-9a-f]+\r\n|\r\n0\r\n\r\n$|\r\n$/g, '') || 'null',
  );

/** A whole request over a fresh connection (from `from`, default 127.0.0.1). */
function post(
  url: string,
  path: string,
  body: string,
  o: { key?: string; from?: string; method?: string } = {},
): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
    if (o.key) headers.authorization = `Bearer ${o.key}`;
    const req = http.request(new URL(path, url), { method: o.method ?? 'POST', agent: false, localAddress: o.from, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : null }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const get = (url: string, path: string, from?: string) => post(url, path, '', { method: 'GET', from });

/** A GraphQL body of `size` bytes (the padding in a variable), whole: `{"query":…,"variables":{"pad":"ppp…"}}`. */
function graphqlBody(size: number): string {
  const shell = JSON.stringify({ query: '{ __typename }', variables: { pad: '' } });
  return shell.replace('"pad":""', `"pad":"${'p'.repeat(size - shell.length)}"`);
}

/** The first `n` bytes of a body that never finishes in time: `{"pad":"ppp…`. */
const bodyStart = (n: number) => '{"pad":"' + 'p'.repeat(n - 8);

async function gauge(metrics: Metrics, name: string): Promise<number> {
  const metric = metrics.registry.getSingleMetric(name);
  if (!metric) throw new Error(`no metric ${name}`);
  return (await metric.get()).values.reduce((sum, v) => sum + v.value, 0);
}

const bodyBytesHeld = (metrics: Metrics = t.deps.metrics) => gauge(metrics, 'callbatch_request_body_bytes_held');

async function counted(metrics: Metrics, name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = metrics.registry.getSingleMetric(name)!;
  const values = (await metric.get()).values.filter((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val));
  return values.reduce((sum, v) => sum + v.value, 0);
}

async function dropAll(held: Held[], metrics: Metrics = t.deps.metrics) {
  for (const h of held) h.socket.destroy();
  await Promise.all(held.map((h) => h.closed));
  await waitFor(async () => (await bodyBytesHeld(metrics)) === 0, { what: 'the dropped bodies to be released' });
}

/** Tenant b's ordinary writes: a create and a GraphQL POST of 900 KB (most of one MAX_BODY_BYTES body). */
async function otherTenantWrites(url: string) {
  const created = await post(url, CALL_BATCHES, JSON.stringify(batchBody(b, { start_mode: 'manual' })), { key: b.apiKey });
  const graphql = await post(url, '/graphql', graphqlBody(900_000), { key: b.apiKey });
  return { created, graphql };
}

// ------------------------------------------------------------------------------------------------

describe('shares of the in-flight body budget', () => {
  it('anonymous sockets declaring large bodies from one address, then from many, leave keyed tenants their POSTs', async () => {
    // 48 sockets from one address, each declaring an anonymous GraphQL body of 64 KiB and sending
    // 60,000 bytes of it: 2.9 MiB between them, past the whole budget (2 MiB).
    const one = await Promise.all(
      Array.from({ length: 48 }, () => holdRequest(base, { from: '127.0.0.2', path: '/graphql', declared: 64 * KiB, first: bodyStart(60_000) })),
    );
    // The address's share holds four; the rest are refused as they arrive, each with its connection closed.
    await waitFor(() => one.filter((h) => h.isClosed()).length >= 48 - 5, { what: 'the sockets past the address share to be refused' });
    const refused = one.filter((h) => h.isClosed());
    expect(new Set(refused.map((h) => h.status()))).toEqual(new Set([429]));
    expect(answerBody(refused[0]).errors[0].extensions.code).toBe('RATE_LIMITED');
    expect(await bodyBytesHeld()).toBeLessThanOrEqual(PER_ADDRESS);

    // Eight more addresses, three sockets each: within each address's share, but all anonymous
    // senders together hold at most their share (512 KiB); the rest get 503.
    const many = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        holdRequest(base, { from: `127.0.0.${10 + (i % 8)}`, path: '/graphql', declared: 64 * KiB, first: bodyStart(60_000) }),
      ),
    );
    await waitFor(() => many.filter((h) => h.isClosed()).length >= 24 - 5, { what: 'the sockets past the anonymous share to be refused' });
    expect(new Set(many.filter((h) => h.isClosed()).map((h) => h.status()))).toEqual(new Set([503]));
    const anonymousHeld = await bodyBytesHeld();
    expect(anonymousHeld).toBeGreaterThan(ANONYMOUS - 2 * 60_000);
    expect(anonymousHeld).toBeLessThanOrEqual(ANONYMOUS);

    // Meanwhile another tenant's keyed POSTs (a create, a GraphQL POST of 900 KB) go through.
    const { created, graphql } = await otherTenantWrites(base);
    expect(created.status).toBe(201);
    expect(graphql).toEqual({ status: 200, body: { data: { __typename: 'Query' } } });
    await dropAll([...one, ...many]);
  });

  it("an account past its share gets 429 while other tenants' POSTs go through", async () => {
    // Tenant a sends 900,000 bytes of a create and waits; a second body of a's passes its share (1 MiB).
    const first = await holdRequest(base, { from: '127.0.0.1', path: CALL_BATCHES, key: a.apiKey, declared: MAX_BODY, first: bodyStart(900_000) });
    await waitFor(async () => (await bodyBytesHeld()) === 900_000, { what: "a's first body to be read" });
    const second = await holdRequest(base, { from: '127.0.0.1', path: CALL_BATCHES, key: a.apiKey, declared: 200_000, first: bodyStart(200_000) });
    await second.closed;
    expect(second.status()).toBe(429);
    expect(answerBody(second)).toMatchObject({ status_code: 429, error: { code: 'RATE_LIMITED' }, data: null });
    expect(second.text()).toMatch(/\r\nretry-after: 1\r\n/i);

    const { created, graphql } = await otherTenantWrites(base);
    expect(created.status).toBe(201);
    expect(graphql.status).toBe(200);
    expect(first.isClosed()).toBe(false);
    await dropAll([first]);
  });

  it('/readyz says not ready while the budget is (nearly) full, and ready again once it drains', async () => {
    expect((await get(base, '/readyz')).status).toBe(200);
    // Two accounts, each within its share, hold 2,000,000 of 2 MiB.
    const held = await Promise.all(
      [a, b].map((who) =>
        holdRequest(base, { from: '127.0.0.1', path: CALL_BATCHES, key: who.apiKey, declared: MAX_BODY, first: bodyStart(1_000_000) }),
      ),
    );
    await waitFor(async () => (await bodyBytesHeld()) === 2_000_000, { what: 'both bodies to be read' });
    let ready = await get(base, '/readyz');
    await waitFor(async () => (ready = await get(base, '/readyz')).status === 503, { what: '/readyz to report the full budget' });
    expect(ready.body).toEqual({ status: 'unavailable', reasons: [expect.stringMatching(/^request bodies: 1\.9 of 2\.0 MiB held/)] });
    await dropAll(held);
    await waitFor(async () => (await get(base, '/readyz')).status === 200, { what: '/readyz to be ready again' });
  });
});

describe('deadlines', () => {
  it('a keyed party declaring huge lengths and sending a byte is cut with 408 within the pace window; others write meanwhile', async () => {
    // The original attack's shape: two bodies of one key declaring 1 MiB and 512 KiB, one byte sent.
    const startedAt = Date.now();
    const huge = await Promise.all(
      [MAX_BODY, MAX_BODY / 2].map((declared) =>
        holdRequest(paced.base, { from: '127.0.0.1', path: CALL_BATCHES, key: a.apiKey, declared, first: '{' }),
      ),
    );
    const { created, graphql } = await otherTenantWrites(paced.base);
    expect(created.status).toBe(201);
    expect(graphql.status).toBe(200);
    await Promise.all(huge.map((h) => h.closed));
    const cutAfter = Date.now() - startedAt;
    expect(cutAfter).toBeLessThan(2 * WINDOW_MS + SLACK_MS);
    for (const h of huge) {
      expect(h.status()).toBe(408);
      expect(answerBody(h)).toMatchObject({ status_code: 408, error: { code: 'REQUEST_TIMEOUT' }, data: null });
      expect(h.text()).toMatch(/\r\nconnection: close\r\n/i);
    }
  });

  it('a body that trickles is cut with 408 within seconds and counted', async () => {
    const before = await counted(paced.metrics, 'callbatch_http_slow_clients_total', { phase: 'body' });
    const startedAt = Date.now();
    const trickle = await holdRequest(paced.base, { from: '127.0.0.3', path: '/graphql', key: b.apiKey, declared: 10_000, first: '{' });
    // 20 bytes a second, each byte on time: well under 4 KiB/s.
    const dripping = setInterval(() => trickle.send(' '), 50);
    try {
      await trickle.closed;
    } finally {
      clearInterval(dripping);
    }
    expect(Date.now() - startedAt).toBeLessThan(2 * WINDOW_MS + SLACK_MS);
    expect(trickle.status()).toBe(408);
    expect(answerBody(trickle).errors[0].extensions.code).toBe('REQUEST_TIMEOUT');
    expect(await counted(paced.metrics, 'callbatch_http_slow_clients_total', { phase: 'body' })).toBe(before + 1);
  });

  it('headers that trickle are cut by the headers timeout (408) and counted', async () => {
    const { hostname, port } = new URL(paced.base);
    const before = await counted(paced.metrics, 'callbatch_http_slow_clients_total', { phase: 'headers' });
    const startedAt = Date.now();
    const socket = net.connect({ host: hostname, port: Number(port), localAddress: '127.0.0.4' });
    let text = '';
    socket.on('data', (d) => (text += d));
    socket.on('error', () => {});
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    socket.write(`GET /healthz HTTP/1.1\r\nHost: ${hostname}\r\n`);
    const dripping = setInterval(() => socket.writable && socket.write('x-a: b\r\n'), 100);
    try {
      await closed;
    } finally {
      clearInterval(dripping);
    }
    // Node checks its timeouts once a second: cut between one and two seconds in.
    expect(Date.now() - startedAt).toBeLessThan(2 * HEADERS_TIMEOUT_MS + SLACK_MS);
    expect(text).toMatch(/^HTTP\/1\.1 408/);
    expect(await counted(paced.metrics, 'callbatch_http_slow_clients_total', { phase: 'headers' })).toBe(before + 1);
  });

  it('other client errors keep the answers Node gives them (431 for headers over 16 KiB), uncounted as slow', async () => {
    const before = await counted(paced.metrics, 'callbatch_http_slow_clients_total');
    const big = await holdRequest(paced.base, {
      from: '127.0.0.4',
      path: '/healthz',
      declared: 0,
      first: '',
      method: 'GET',
      headers: { 'x-pad': 'p'.repeat(20 * KiB) },
    });
    await big.closed;
    expect(big.text()).toMatch(/^HTTP\/1\.1 431 /);
    expect(await counted(paced.metrics, 'callbatch_http_slow_clients_total')).toBe(before);
  });
});

describe(`connections per address (MAX_CONNECTIONS_PER_ADDRESS ${PER_ADDRESS_CONNECTIONS})`, () => {
  it('past the cap a connection is closed at accept; other addresses are served, and a freed slot serves again', async () => {
    const { hostname, port } = new URL(base);
    const refusedBefore = await counted(t.deps.metrics, 'callbatch_http_connections_refused_total');
    const connect = () =>
      new Promise<net.Socket>((resolve, reject) => {
        const s = net.connect({ host: hostname, port: Number(port), localAddress: '127.0.0.20' }, () => resolve(s));
        s.once('error', reject);
      });
    const open: net.Socket[] = [];
    for (let i = 0; i < PER_ADDRESS_CONNECTIONS; i++) open.push(await connect());
    // Each of those is idle; one more gets no answer to its request, only a closed connection.
    const extra = await connect().catch(() => null);
    if (extra) {
      let text = '';
      extra.on('data', (d) => (text += d));
      extra.on('error', () => {});
      extra.write(`GET /healthz HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`);
      await new Promise<void>((r) => extra.once('close', () => r()));
      expect(text).toBe('');
    }
    expect(await counted(t.deps.metrics, 'callbatch_http_connections_refused_total')).toBeGreaterThan(refusedBefore);
    expect((await get(base, '/healthz', '127.0.0.21')).status).toBe(200);
    // One closes: that address is served again.
    open.pop()!.destroy();
    await waitFor(async () => (await get(base, '/healthz', '127.0.0.20').catch(() => ({ status: 0 }))).status === 200, {
      what: 'a freed connection slot',
    });
    for (const s of open) s.destroy();
  });
});

describe('a client that walks away mid-body', () => {
  it('is a 499 logged at info without a stack, never a 5xx', async () => {
    const bodies = [
      { id: 'walks-away-rest', path: CALL_BATCHES, key: a.apiKey },
      { id: 'walks-away-graphql', path: '/graphql', key: b.apiKey },
      { id: 'walks-away-anonymous', path: '/graphql', key: undefined },
    ];
    for (const body of bodies) {
      const h = await holdRequest(paced.base, {
        from: '127.0.0.5',
        path: body.path,
        key: body.key,
        declared: 50_000,
        first: bodyStart(20_000),
        headers: { 'x-request-id': body.id },
      });
      await waitFor(async () => (await bodyBytesHeld(paced.metrics)) === 20_000, { what: `${body.id}: the body's start to be read` });
      h.socket.destroy();
      await waitFor(async () => (await bodyBytesHeld(paced.metrics)) === 0, { what: `${body.id}: its body to be released` });
    }
    const line = (id: string) => paced.logLines().find((l) => l.requestId === id);
    await waitFor(() => bodies.every((x) => line(x.id)), { what: 'the request log lines' });
    for (const x of bodies) expect(line(x.id)).toMatchObject({ level: 30, msg: 'request', status: 499 });
    const logs = paced.logLines();
    expect(logs.filter((l) => l.level >= 40)).toEqual([]);
    expect(JSON.stringify(logs)).not.toMatch(/"stack"|\bat .+:\d+:\d+/);
    expect(await counted(paced.metrics, 'callbatch_http_requests_total', { status: '499' })).toBe(3);
    const requests = (await paced.metrics.registry.getSingleMetric('callbatch_http_requests_total')!.get()).values;
    expect(requests.filter((v) => String(v.labels.status).startsWith('5'))).toEqual([]);
    expect(await bodyBytesHeld(paced.metrics)).toBe(0);
  });
});
