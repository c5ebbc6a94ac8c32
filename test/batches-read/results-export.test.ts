// GET /call-batches/{batch_id}/results.csv: headers, filters, errors before the stream, the export
// slots, the budget spent per page, reading only what the client takes, and a large batch whole.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { callInState, insertBatch, type CallFields, type InsertedBatch } from '../helpers/fixtures.ts';
import { waitFor } from '../helpers/wait.ts';
import { parseCsv } from '../../src/csv/csv.ts';
import { CALL_RECORD_FIELDS } from '../../src/services/representations.ts';
import { EXPORT_PAGE_ROWS, exportChunkRows } from '../../src/services/batches/export-batch-results.ts';
import { countQueries } from '../helpers/query-counter.ts';
import { routePatterns } from '../../src/rest/router.ts';
import { routes } from '../../src/rest/routes.ts';

const AT = new Date('2026-07-01T10:00:00.000Z');
const LARGE = 3_000;
const path = (batchId: string, query = '') => `/api/v1/public/call-batches/${batchId}/results.csv${query}`;

let t: TestApp;
let a: SeededAccount;
let other: SeededAccount;
let small: InsertedBatch;
let large: InsertedBatch;

const SMALL: CallFields[] = [
  callInState('completed', 0, AT, { interested: 'yes' }),
  {
    ...callInState('completed', 1, AT, { interested: 'no' }),
    summary: '=HYPERLINK("http://evil.example","click")',
    llmTranscript: 'bell\x07 and \x1b[2K',
  },
  callInState('no_answer', 2, AT),
  callInState('pending', 3, AT),
  callInState('completed', 4, AT, { interested: 'yes' }),
];

beforeAll(async () => {
  t = await createTestApp({ config: { EXPORTS_PER_ACCOUNT: '1', EXPORTS_PER_PROCESS: '2' } });
  // A frozen clock: budgets are counted per minute, and no window may end in the middle of a test.
  t.clock.set(new Date('2026-07-01T12:00:10.000Z'));
  a = await t.seedAccount({ limits: { rateLimitPerMinute: 10_000 } });
  other = await t.seedAccount();
  small = await insertBatch(t.deps, a, { contacts: SMALL.length, status: 'running', createdAt: AT, callOverrides: (i) => SMALL[i] });
  large = await insertBatch(t.deps, a, {
    contacts: LARGE,
    status: 'completed',
    createdAt: AT,
    callOverrides: (i) => callInState('completed', i, AT),
  });
}, 120_000);
afterAll(() => t.close());

const get = (p: string, key: string | null = a.apiKey, init: RequestInit = {}) =>
  t.app.fetch(new Request(`http://test.local${p}`, { ...init, headers: key ? { authorization: `Bearer ${key}` } : {} }));

/** Reads a body to its end, or to the error that cut it; the text read either way. */
async function readAll(res: Response): Promise<{ text: string; error: unknown }> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { text, error: null };
      text += decoder.decode(value, { stream: true });
    }
  } catch (error) {
    return { text, error };
  }
}

const remaining = async (key: string) => Number((await t.request('GET', '/api/v1/public/me', { key })).headers.get('ratelimit-remaining'));

describe('GET /call-batches/{batch_id}/results.csv', () => {
  it('answers a CSV attachment, not cached, with the JSON results’ cells row for row', async () => {
    const res = await get(path(small.batch.id));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="${small.batch.id}-results.csv"`);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('ratelimit-limit')).toBe('10000');
    const [header, ...rows] = parseCsv(await res.text());
    expect(header.cells).toEqual([...CALL_RECORD_FIELDS]);
    const json = await t.request('GET', `/api/v1/public/call-batches/${small.batch.id}/results`, { key: a.apiKey });
    const guard = (s: string) => (/^[=+\-@\t\r]/.test(s) && !/^[+-]?\d/.test(s) ? `'${s}` : s);
    expect(rows.map((r) => r.cells)).toEqual(
      json.body.data.items.map((item: Record<string, unknown>) =>
        CALL_RECORD_FIELDS.map((k) =>
          item[k] === null
            ? ''
            : guard(
                typeof item[k] === 'object' ? JSON.stringify(item[k]) : String(item[k]).replaceAll('\x07', '\ufffd').replaceAll('\x1b', '\ufffd'),
              ),
        ),
      ),
    );
  });

  it('guards formula-like cells and replaces control characters', async () => {
    const [, , second] = parseCsv(await (await get(path(small.batch.id))).text());
    const cell = (k: (typeof CALL_RECORD_FIELDS)[number]) => second.cells[CALL_RECORD_FIELDS.indexOf(k)];
    expect(cell('summary')).toBe(`'=HYPERLINK("http://evil.example","click")`);
    expect(cell('llm_transcript')).toBe('bell\ufffd and \ufffd[2K');
    expect(cell('phone_number')).toMatch(/^\+1415/);
  });

  it('takes the results route’s filters, and refuses paging and unknown values in the envelope', async () => {
    const ids = async (q: string) =>
      parseCsv(await (await get(path(small.batch.id, q))).text())
        .slice(1)
        .map((r) => r.cells[2]);
    expect(await ids('?outcome=yes')).toEqual(['contact-1', 'contact-5']);
    expect(await ids('?status=no_answer')).toEqual(['contact-3']);
    expect(await ids('?transcript_status=ready&outcome=no')).toEqual(['contact-2']);
    expect(await ids('?outcome=nobody-said-this')).toEqual([]);
    const bad = await t.request('GET', path(small.batch.id, '?status=bogus&page=2'), { key: a.apiKey });
    expect(bad.status).toBe(422);
    expect(bad.body.error.code).toBe('MISSING_PARAMETER');
    expect(t.deps.exports.held()).toBe(0);
  });

  it('404 in the detail form for an unknown or foreign batch, 401 without a key, before any stream', async () => {
    for (const [id, key] of [
      ['sched_0123456789abcdef0123456789abcdef', a.apiKey],
      [small.batch.id, other.apiKey],
    ] as const) {
      const res = await t.request('GET', path(id), { key });
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(res.body).toEqual({ detail: 'Call batch not found' });
    }
    expect((await t.request('GET', path(small.batch.id), { key: null })).status).toBe(401);
    expect(t.deps.exports.held()).toBe(0);
  });

  it('is logged under its route pattern', () => {
    expect(routePatterns(routes)(path(small.batch.id))).toBe('/api/v1/public/call-batches/:batch_id/results.csv');
    expect(routePatterns(routes)(`/api/v1/public/call-batches/${small.batch.id}/results`)).toBe('/api/v1/public/call-batches/:batch_id/results');
  });

  it('holds a slot per export: beyond the account’s or the process’s, 429 before streaming; a cancelled export frees its slot', async () => {
    const third = await t.seedAccount();
    const theirs = await insertBatch(t.deps, other, { contacts: 1, status: 'running' });
    const first = await get(path(large.batch.id));
    expect(first.status).toBe(200);
    const busy = await t.request('GET', path(small.batch.id), { key: a.apiKey });
    expect(busy.status).toBe(429);
    expect(busy.body).toMatchObject({ status_code: 429, error: { code: 'RATE_LIMITED' }, data: null });
    expect(busy.body.error.details[0]).toMatch(/At most 1 exports at once per account/);
    expect(busy.headers.get('retry-after')).toBe('10');
    const second = await get(path(theirs.batch.id), other.apiKey);
    expect(second.status).toBe(200);
    // Two held: the process is full for a third account too.
    const full = await t.request('GET', path('sched_0123456789abcdef0123456789abcdef'), { key: third.apiKey });
    expect(full.status).toBe(404); // the batch check comes first and takes no slot
    const thirdsBatch = await insertBatch(t.deps, third, { contacts: 1, status: 'running' });
    const refused = await t.request('GET', path(thirdsBatch.batch.id), { key: third.apiKey });
    expect(refused.status).toBe(429);
    expect(refused.body.error.details[0]).toMatch(/running its 2 exports at once/);
    await first.body!.cancel();
    await second.text();
    expect(t.deps.exports.held()).toBe(0);
    const after = await get(path(thirdsBatch.batch.id), third.apiKey);
    expect(after.status).toBe(200);
    expect(parseCsv(await after.text())).toHaveLength(2);
    expect(t.deps.exports.held()).toBe(0);
  });

  it('streams a large batch whole, in order, spending one unit of budget per page after the first', async () => {
    {
      const before = await remaining(a.apiKey);
      const { text, error } = await readAll(await get(path(large.batch.id)));
      expect(error).toBeNull();
      const [, ...rows] = parseCsv(text);
      expect(rows).toHaveLength(LARGE);
      expect(rows.map((r) => r.cells[2])).toEqual(large.calls.map((c) => c.externalId));
      // 3000 rows: 15 full pages and an empty one that says there are no more; the request paid the first.
      const pages = Math.floor(LARGE / EXPORT_PAGE_ROWS) + 1;
      expect(before - (await remaining(a.apiKey))).toBe(1 + (pages - 1) + 1);
    }
  });

  it('reads a page only when the client took the previous one, and nothing after the client leaves', async () => {
    // The export's reads of calls, counted in pages (each a few chunks on PGlite).
    const counter = countQueries(t.deps.db);
    const pagesRead = () =>
      counter.statements.filter((s) => /FROM calls c WHERE .* c\.seq > /s.test(s)).length / (EXPORT_PAGE_ROWS / exportChunkRows(t.deps));
    try {
      const res = await get(path(large.batch.id));
      expect(pagesRead()).toBe(0); // nothing read before the client asks
      const reader = res.body!.getReader();
      const first = await reader.read();
      expect(new TextDecoder().decode(first.value).split('\r\n')).toHaveLength(EXPORT_PAGE_ROWS + 2);
      expect(pagesRead()).toBe(1);
      await reader.cancel();
      expect(t.deps.exports.held()).toBe(0);
      expect(pagesRead()).toBe(1);

      // A disconnect (the request's signal) ends it as well, between two reads.
      const abort = new AbortController();
      const res2 = await get(path(large.batch.id), a.apiKey, { signal: abort.signal });
      const reader2 = res2.body!.getReader();
      await reader2.read();
      await reader2.read();
      expect(t.deps.exports.held()).toBe(1);
      abort.abort();
      await waitFor(() => t.deps.exports.held() === 0, { what: 'the slot to be freed' });
      expect(pagesRead()).toBe(3);
    } finally {
      counter.stop();
    }
  });

  it('cuts the stream when the account’s budget runs out mid-export', async () => {
    const tight = await t.seedAccount({ limits: { rateLimitPerMinute: 4 } });
    const batch = await insertBatch(t.deps, tight, {
      contacts: 6 * EXPORT_PAGE_ROWS,
      status: 'completed',
      createdAt: AT,
      callOverrides: (i) => callInState('completed', i, AT),
    });
    const res = await get(path(batch.batch.id), tight.apiKey);
    expect(res.status).toBe(200);
    const { text, error } = await readAll(res);
    expect(error).toMatchObject({ code: 'RATE_LIMITED' });
    // The request's unit and three more pages: four pages of rows, then the refusal.
    expect(parseCsv(text).length - 1).toBe(4 * EXPORT_PAGE_ROWS);
    expect(t.deps.exports.held()).toBe(0);
  });
  it('stops at the next page once its key is revoked', async () => {
    const acct = await t.seedAccount({ limits: { rateLimitPerMinute: 10_000 } });
    const batch = await insertBatch(t.deps, acct, {
      contacts: 3 * EXPORT_PAGE_ROWS,
      status: 'completed',
      createdAt: AT,
      callOverrides: (i) => callInState('completed', i, AT),
    });
    const res = await get(path(batch.batch.id), acct.apiKey);
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value).split('\r\n')).toHaveLength(EXPORT_PAGE_ROWS + 2);
    expect(await t.deps.metrics.registry.getSingleMetricAsString('callbatch_exports_in_progress')).toMatch(/^callbatch_exports_in_progress 1$/m);
    await t.deps.db.prisma.apiKey.updateMany({ where: { accountId: acct.account.id }, data: { revokedAt: new Date() } });
    await expect(reader.read()).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    expect(t.deps.exports.held()).toBe(0);
  });
});

describe('limits that cut an export', () => {
  let u: TestApp;
  let base: string;
  beforeAll(async () => {
    u = await createTestApp({ config: { EXPORT_MAX_SECONDS: '1' } });
    u.clock.set(new Date('2026-07-01T12:00:10.000Z'));
    base = await u.app.listen();
  }, 60_000);
  afterAll(() => u.close());

  it('over a real connection, a budget spent mid-export breaks the transfer instead of ending it cleanly', async () => {
    const acct = await u.seedAccount({ limits: { rateLimitPerMinute: 2 } });
    const batch = await insertBatch(u.deps, acct, {
      contacts: 3 * EXPORT_PAGE_ROWS,
      status: 'completed',
      createdAt: AT,
      callOverrides: (i) => callInState('completed', i, AT),
    });
    const res = await fetch(`${base}${path(batch.batch.id)}`, { headers: { authorization: `Bearer ${acct.apiKey}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('transfer-encoding')).toBe('chunked');
    await expect(res.text()).rejects.toThrow();
    await waitFor(() => u.deps.exports.held() === 0, { what: 'the slot to be freed' });
  });

  it('a client that stops reading is cut off at the time limit and its slot freed', async () => {
    const acct = await u.seedAccount();
    const batch = await insertBatch(u.deps, acct, { contacts: 2 * EXPORT_PAGE_ROWS, status: 'completed' });
    const res = await u.app.fetch(new Request(`http://test.local${path(batch.batch.id)}`, { headers: { authorization: `Bearer ${acct.apiKey}` } }));
    const reader = res.body!.getReader();
    await reader.read();
    expect(u.deps.exports.held()).toBe(1);
    await waitFor(() => u.deps.exports.held() === 0, { what: 'the time limit to end the export' });
    await expect(reader.read()).rejects.toThrow(/time limit of 1 s/);
  });
});

describe('a client that stops taking the file', () => {
  let u: TestApp;
  beforeAll(async () => {
    // The time limit stays far off: only the idle limit can end these exports.
    u = await createTestApp({ config: { EXPORT_IDLE_SECONDS: '1', EXPORT_MAX_SECONDS: '3600' } });
  }, 60_000);
  afterAll(() => u.close());

  const open = async (acct: SeededAccount, batchId: string) =>
    u.app.fetch(new Request(`http://test.local${path(batchId)}`, { headers: { authorization: `Bearer ${acct.apiKey}` } }));

  it('is cut off once it has taken nothing for EXPORT_IDLE_SECONDS, long before the time limit, and frees its slot', async () => {
    const acct = await u.seedAccount();
    const batch = await insertBatch(u.deps, acct, { contacts: 2 * EXPORT_PAGE_ROWS, status: 'completed' });
    const res = await open(acct, batch.batch.id);
    const reader = res.body!.getReader();
    await reader.read();
    expect(u.deps.exports.held()).toBe(1);
    await waitFor(() => u.deps.exports.held() === 0, { what: 'the idle limit to end the export', timeoutMs: 15_000 });
    await expect(reader.read()).rejects.toThrow(/took nothing for 1 s/);
  });

  it('that never takes the first page is cut off too', async () => {
    const acct = await u.seedAccount();
    const batch = await insertBatch(u.deps, acct, { contacts: 1, status: 'completed' });
    const res = await open(acct, batch.batch.id);
    expect(res.status).toBe(200);
    expect(u.deps.exports.held()).toBe(1);
    await waitFor(() => u.deps.exports.held() === 0, { what: 'the idle limit to end the export', timeoutMs: 15_000 });
    await expect(res.text()).rejects.toThrow(/took nothing for 1 s/);
  });
});
