// The SQL statements each common request runs, by what they read, so a table read twice for the
// same rows in one request cannot come back unnoticed (docs/architecture.md, "Per-request loaders").
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { addAgent, callInState, insertBatch, type InsertedBatch } from '../helpers/fixtures.ts';
import { countQueries } from '../helpers/query-counter.ts';
import { TEST_DATABASE_URL } from '../helpers/database.ts';
import { trustedDocuments } from '../../src/http/trusted-documents.ts';
import { buildApp } from '../../src/app.ts';
import { send } from '../helpers/abuse.ts';

let t: TestApp;
let a: SeededAccount;
let big: InsertedBatch;
let waiting: InsertedBatch;
const AT = new Date('2026-09-01T00:00:00.000Z');
const ids = trustedDocuments().idsByOperation;

beforeAll(async () => {
  // Every request looks its key up here (at most once), so each list below shows it; the key
  // cache, which spares the lookup altogether for a key seen within API_KEY_CACHE_MS, has its own case.
  t = await createTestApp({ config: { API_KEY_CACHE_MS: '0' } });
  a = await t.seedAccount();
  const support = await addAgent(t.deps, a, 'Support Agent');
  big = await insertBatch(t.deps, a, {
    contacts: 30,
    status: 'running',
    createdAt: AT,
    callOverrides: (i) => callInState(i % 3 === 0 ? 'completed' : 'queued', i, AT),
  });
  // Batches of two agents, so a page of call records needs the labels of several batches.
  for (let m = 1; m <= 3; m++)
    await insertBatch(t.deps, a, { contacts: 1, createdAt: new Date(AT.getTime() + m * 60_000), ...(m % 2 ? { agent: support } : {}) });
  // Calls waiting for a retry, each put back in line by a retry_scheduled entry of its history.
  const next = new Date(AT.getTime() + 3_600_000);
  waiting = await insertBatch(t.deps, a, {
    contacts: 4,
    status: 'running',
    createdAt: AT,
    callOverrides: () => ({ status: 'queued', attempts: 1, nextAttemptAt: next }),
  });
  await t.deps.db.prisma.callEvent.createMany({
    data: waiting.calls.map(({ id: callId }) => ({
      accountId: a.account.id,
      callId,
      fromStatus: 'ringing',
      toStatus: 'queued',
      detail: { event: 'retry_scheduled', attempt: 1, status: 'busy', disconnect_reason: 'busy', next_attempt_at: next.toISOString() },
      at: AT,
    })),
  });
  await t.deps.db.prisma.suppression.createMany({
    data: [1, 2, 3].map((i) => ({ accountId: a.account.id, phoneNumber: `+1415555010${i}`, source: 'api' })),
  });
});
afterAll(() => t.close());

/** What a statement reads: its first table (FROM …), the key lookup by name. */
function readOf(sql: string): string {
  if (/FROM api_keys/.test(sql)) return 'api key';
  // A page whose total rides on its rows (src/services/page-rows.ts): one statement, one round trip.
  if (/AS "pageTotal"/.test(sql)) return `${/FROM (?:"public"\.)?"?(\w+)"? \w\b/.exec(sql)?.[1]}+count`;
  if (/SELECT COUNT\(\*\)/i.test(sql)) return `count ${/FROM (?:"public"\.)?"?(\w+)"? c\b|FROM "public"\."(\w+)"/.exec(sql)?.slice(1).find(Boolean)}`;
  if (/JOIN prompt_versions pv/.test(sql)) return 'batches+labels';
  // Call records: ranges of seq, one per batch (src/services/calls/call-record-ranges.ts).
  if (/LATERAL \(\s*SELECT \* FROM calls/.test(sql)) return 'calls by ranges';
  return /FROM (?:"public"\.)?"?(\w+)"?/.exec(sql)?.[1] ?? sql.slice(0, 40);
}

async function readsOf(run: () => Promise<{ status: number; body: any }>): Promise<string[]> {
  const counter = countQueries(t.deps.db);
  try {
    const res = await run();
    expect(res.status).toBe(200);
    expect(res.body.errors).toBeUndefined();
    // With RATE_LIMIT_STORE=postgres (the PostgreSQL runs) the account budget is a write per
    // request (and now and then a sweep of old windows): not a read, so not listed.
    return counter.statements.filter((sql) => !/rate_limit_windows/.test(sql)).map(readOf);
  } finally {
    counter.stop();
  }
}

const rest = (path: string) => () => t.request('GET', path, { key: a.apiKey });
// The dashboard sends its documents by hash; the test harness sends no Content-Length, so the
// front door's early key check (for bodies of unknown size) runs too and must not look the key up again.
const dashboard =
  (op: string, variables: Record<string, unknown> = {}) =>
  () =>
    t.request('POST', '/graphql', { key: a.apiKey, body: { variables, extensions: { persistedQuery: { version: 1, sha256Hash: ids[op] } } } });

describe('statements per request: each row read once', () => {
  const id = () => big.batch.id;
  const cases: [string, () => () => Promise<{ status: number; body: any }>, string[]][] = [
    ['REST batch details', () => rest(`/api/v1/public/call-batches/${id()}`), ['api key', 'batches']],
    // The batch read (ownership, counters) carries the labels its calls show: no second batch read.
    ['REST calls page', () => rest(`/api/v1/public/call-batches/${id()}/calls?limit=20`), ['api key', 'batches+labels', 'calls']],
    ['REST results page', () => rest(`/api/v1/public/call-batches/${id()}/results?limit=20`), ['api key', 'batches+labels', 'calls']],
    // The outcome filter is the page's own conditions (a jsonpath on outcomes); its total is the
    // batch's outcome counter rows (migration outcome_counts), not a count of its calls.
    [
      'REST results page by outcome',
      () => rest(`/api/v1/public/call-batches/${id()}/results?outcome=yes&limit=20`),
      ['api key', 'batches+labels', 'call_outcome_counts', 'calls'],
    ],
    [
      'REST call records page',
      () => rest(`/api/v1/public/call-records?start_date=2026-09-01&end_date=2026-09-01&page_size=20`),
      // The batches' sizes place the page, the day counters give the total; then the page's calls; then labels;
      // and, the page holding calls that wait for a retry, their retry reasons in one read of their history.
      ['api key', 'batches', 'call_record_counts', 'calls by ranges', 'batches+labels', 'call_events'],
    ],
    // The total is the account's counter rows (migration batch_counts), not a count of the list.
    ['REST batch list', () => rest(`/api/v1/public/call-batches?limit=20`), ['api key', 'batch_counts', 'batches']],
    ['DashboardMe', () => dashboard('DashboardMe'), ['api key']],
    ['DashboardCatalog', () => dashboard('DashboardCatalog'), ['api key', 'agents', 'prompt_versions']],
    ['DashboardBatches', () => dashboard('DashboardBatches', { page: 1, limit: 20 }), ['api key', 'batch_counts', 'batches', 'agents']],
    ['DashboardBatch', () => dashboard('DashboardBatch', { id: id() }), ['api key', 'batches', 'agents']],
    ['DashboardCalls', () => dashboard('DashboardCalls', { batchId: id(), page: 1, limit: 20 }), ['api key', 'batches+labels', 'calls']],
    ['DashboardOutcomes', () => dashboard('DashboardOutcomes', { id: id() }), ['api key', 'batches']],
    // Why the waiting calls wait: their history, once for the page (none when no call waits, above).
    [
      'DashboardCalls with calls waiting for a retry',
      () => dashboard('DashboardCalls', { batchId: waiting.batch.id, page: 1, limit: 20 }),
      ['api key', 'batches+labels', 'calls', 'call_events'],
    ],
    ['DashboardCallAttempts', () => dashboard('DashboardCallAttempts', { id: waiting.calls[0].id }), ['api key', 'calls', 'call_events']],
    // The total is a counter row; on PGlite the page runs in a transaction of its own (services/suppressions/list-suppressions.ts), not counted here.
    [
      'DashboardSuppressions',
      () => dashboard('DashboardSuppressions', { page: 1, limit: 50 }),
      ['api key', 'suppression_counts', ...(TEST_DATABASE_URL ? ['suppressions'] : [])],
    ],
  ];
  for (const [name, run, expected] of cases) {
    it(`${name}: ${expected.join(', ')}`, async () => {
      // Parallel reads (a page and its count) may reach the driver in either order.
      expect((await readsOf(run())).sort()).toEqual([...expected].sort());
    });
  }
});

describe('with the key cache (API_KEY_CACHE_MS, default 1 s)', () => {
  it('a key that authenticated a moment ago is not looked up again', async () => {
    const cached = buildApp({ ...t.deps, config: { ...t.deps.config, API_KEY_CACHE_MS: 1000 } });
    try {
      const details = () => send(cached, 'GET', `/api/v1/public/call-batches/${big.batch.id}`, { key: a.apiKey });
      expect(await readsOf(details)).toEqual(['api key', 'batches']);
      expect(await readsOf(details)).toEqual(['batches']);
    } finally {
      await cached.stop();
    }
  });
});
