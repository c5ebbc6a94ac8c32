// One structured line per request: id (echoed as X-Request-Id), method, route pattern, status,
// duration, account id; never a key, a raw path with ids or tokens, or a body.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { buildApp, type App } from '../../src/app.ts';
import type { AppDeps } from '../../src/deps.ts';
import { batchBody, CALL_BATCHES } from '../helpers/batch-requests.ts';
import { recordingUrl } from '../../src/services/recording-url.ts';
import { callInState, insertBatch } from '../helpers/fixtures.ts';
import { EXPORT_PAGE_ROWS } from '../../src/services/batches/export-batch-results.ts';

let t: TestApp;
let a: SeededAccount;
let app: App;
const lines: string[] = [];

beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount();
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
  app = buildApp({ ...t.deps, logger } as AppDeps);
});
afterAll(() => t.close());

/** Sends the request and returns its response with the request's log line. */
async function sent(path: string, init: RequestInit & { key?: string } = {}) {
  const headers = new Headers(init.headers);
  if (init.key) headers.set('authorization', `Bearer ${init.key}`);
  lines.length = 0;
  const res = await app.fetch(new Request(`http://test.local${path}`, { ...init, headers }));
  await res.arrayBuffer();
  const logged = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');
  expect(logged).toHaveLength(1);
  return { res, line: logged[0], raw: lines.join('\n') };
}

describe('request log', () => {
  it('logs a REST call under its route pattern with the account, status, duration and the id it echoes', async () => {
    const created = await t.request('POST', CALL_BATCHES, { key: a.apiKey, body: batchBody(a) });
    const batchId = created.body.data.batch_id;
    const { res, line, raw } = await sent(`${CALL_BATCHES}/${batchId}`, { key: a.apiKey });
    expect(res.status).toBe(200);
    expect(line).toMatchObject({ method: 'GET', route: '/api/v1/public/call-batches/:batch_id', status: 200, accountId: a.account.id });
    expect(line.requestId).toBe(res.headers.get('x-request-id'));
    expect(line.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(line.ms).toEqual(expect.any(Number));
    expect(raw).not.toContain(batchId);
    expect(raw).not.toContain(a.apiKey);
  });

  it("keeps a client's sane X-Request-Id and replaces one that is not", async () => {
    const kept = await sent('/healthz', { headers: { 'x-request-id': 'trace-42.a:b_c' } });
    expect([kept.res.headers.get('x-request-id'), kept.line.requestId]).toEqual(['trace-42.a:b_c', 'trace-42.a:b_c']);
    for (const bad of ['x'.repeat(65), 'two words', 'a"b', '']) {
      const { res, line } = await sent('/healthz', { headers: { 'x-request-id': bad } });
      expect(line.requestId).not.toBe(bad);
      expect(res.headers.get('x-request-id')).toBe(line.requestId);
    }
  });

  it('names the account of a GraphQL request (its body is re-read before Yoga) and none for a refused key', async () => {
    const ok = await sent('/graphql', {
      method: 'POST',
      key: a.apiKey,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ me { id } }' }),
    });
    expect(ok.line).toMatchObject({ method: 'POST', route: '/graphql', status: 200, accountId: a.account.id });
    const refused = await sent(`${CALL_BATCHES}`, { key: 'sk_not_a_key' });
    expect(refused.line).toMatchObject({ route: '/api/v1/public/call-batches', status: 401 });
    expect(refused.line.accountId).toBeUndefined();
    expect(refused.raw).not.toContain('sk_not_a_key');
  });

  it('logs a signed recording link without its call id or signature, and unknown paths as unmatched', async () => {
    const url = new URL(recordingUrl(t.deps, 'call_abcdef'));
    const { line, raw } = await sent(url.pathname + url.search);
    expect(line).toMatchObject({ route: '/recordings/:file', status: 404 });
    expect(raw).not.toContain('call_abcdef');
    expect(raw).not.toContain(url.searchParams.get('signature')!);
    expect((await sent('/wp-admin/../etc/passwd')).line).toMatchObject({ route: '(unmatched)', status: 404 });
  });

  it('ties a CSV export cut short to its request: the warning carries the request id and account', async () => {
    const tight = await t.seedAccount({ limits: { rateLimitPerMinute: 2 } });
    const batch = await insertBatch(t.deps, tight, {
      contacts: 3 * EXPORT_PAGE_ROWS,
      status: 'completed',
      callOverrides: (i) => callInState('completed', i, new Date()),
    });
    lines.length = 0;
    const res = await app.fetch(
      new Request(`http://test.local/api/v1/public/call-batches/${batch.batch.id}/results.csv`, {
        headers: { authorization: `Bearer ${tight.apiKey}`, 'x-request-id': 'export-7' },
      }),
    );
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow();
    const logged = lines.map((l) => JSON.parse(l));
    expect(logged.find((l) => l.msg === 'request')).toMatchObject({ requestId: 'export-7', status: 200 });
    expect(logged.find((l) => l.msg === 'CSV export cut short')).toMatchObject({ requestId: 'export-7', accountId: tight.account.id, pages: 2 });
    expect(lines.join('\n')).not.toContain(batch.batch.id);
  });
});
