import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { addAgent, callInState, insertBatch, type InsertedBatch } from '../helpers/fixtures.ts';
import { statementsDuring } from '../helpers/query-counter.ts';

let t: TestApp;
let a: SeededAccount;
let other: SeededAccount;
let big: InsertedBatch;
const batchIds: string[] = []; // newest first
const AT = new Date('2026-09-01T00:00:00.000Z');

beforeAll(async () => {
  // The statement counts below include the key lookup of every request: no key cache.
  t = await createTestApp({ config: { API_KEY_CACHE_MS: '0' } });
  a = await t.seedAccount();
  other = await t.seedAccount();
  const support = await addAgent(t.deps, a, 'Support Agent');
  big = await insertBatch(t.deps, a, {
    contacts: 120,
    status: 'running',
    createdAt: AT,
    batch: { voice: 'verse' },
    callOverrides: (i) => callInState(i % 3 === 0 ? 'completed' : 'queued', i, AT),
  });
  batchIds.push(big.batch.id);
  // The small batches alternate between two agents, so a page of call records spans both and
  // relation loading is not trivially one row.
  for (let m = 1; m <= 5; m++) {
    const { batch } = await insertBatch(t.deps, a, {
      contacts: 1,
      status: m % 2 ? 'completed' : 'running',
      createdAt: new Date(AT.getTime() + m * 60_000),
      ...(m % 2 ? { agent: support } : {}),
    });
    batchIds.unshift(batch.id);
  }
  await insertBatch(t.deps, other, { contacts: 3, createdAt: AT });
});
afterAll(() => t.close());

const gql = async (query: string, variables: Record<string, unknown> = {}, key = a.apiKey) => {
  const res = await t.gql(query, variables, key);
  return res.body;
};

describe('GraphQL offset pages', () => {
  it('batches(filter, page, limit) matches the REST list', async () => {
    const body = await gql(`{ batches(filter: { status: completed }, limit: 2) { items { id status } pagination { page limit total hasMore } } }`);
    expect(body.data.batches).toEqual({
      items: [
        { id: batchIds[0], status: 'completed' },
        { id: batchIds[2], status: 'completed' },
      ],
      pagination: { page: 1, limit: 2, total: 3, hasMore: true },
    });
    const rest = await t.request('GET', '/api/v1/public/call-batches?status=completed&limit=2', { key: a.apiKey });
    expect(rest.body.data.items.map((i: { batch_id: string }) => i.batch_id)).toEqual([batchIds[0], batchIds[2]]);
  });

  it('calls, results and callRecords with their filters', async () => {
    const calls = await gql(
      `query($id: ID!) { calls(batchId: $id, filter: { status: completed }, limit: 3, page: 2) { items { seq agentName voice } pagination { total hasMore } } }`,
      { id: big.batch.id },
    );
    expect(calls.data.calls.items).toEqual([
      { seq: 10, agentName: 'Sales Agent', voice: 'verse' },
      { seq: 13, agentName: 'Sales Agent', voice: 'verse' },
      { seq: 16, agentName: 'Sales Agent', voice: 'verse' },
    ]);
    expect(calls.data.calls.pagination).toEqual({ total: 40, hasMore: true });
    const ready = await gql(
      `query($id: ID!) { calls(batchId: $id, filter: { transcriptStatus: ready, externalId: "contact-4" }) { items { seq transcriptStatus } } }`,
      {
        id: big.batch.id,
      },
    );
    expect(ready.data.calls.items).toEqual([{ seq: 4, transcriptStatus: 'ready' }]);

    const results = await gql(
      `query($id: ID!) { results(batchId: $id, filter: { outcome: "yes", transcriptStatus: ready }, limit: 2) { status items { seq outcomes } pagination { total } } }`,
      { id: big.batch.id },
    );
    // Completed calls are every 3rd (i = 0, 3, 6, …); outcome yes when i is even: i = 0, 6, 12, …
    expect(results.data.results).toEqual({
      status: 'pending',
      items: [
        { seq: 1, outcomes: { interested: 'yes' } },
        { seq: 7, outcomes: { interested: 'yes' } },
      ],
      pagination: { total: 20 },
    });

    const records = await gql(
      `{ callRecords(filter: { startDate: "2026-09-01", endDate: "2026-09-01" }, pageSize: 1) { items { batchId } pagination { limit total } } }`,
    );
    expect(records.data.callRecords).toEqual({ items: [{ batchId: batchIds[0] }], pagination: { limit: 1, total: 125 } });
  });

  it('errors carry the same codes and details as REST', async () => {
    const tooBig = await gql(`{ batches(limit: 500, page: 0) { pagination { total } } }`);
    expect(tooBig.errors?.[0].extensions).toMatchObject({
      code: 'MISSING_PARAMETER',
      details: ['page: Input should be greater than or equal to 1', 'limit: Input should be less than or equal to 200'],
    });
    const pageSize = await gql(`{ callRecords(filter: { startDate: "2026-09-01", endDate: "2026-09-01" }, pageSize: 201) { pagination { total } } }`);
    expect(pageSize.errors?.[0]).toMatchObject({ message: 'page_size must be less than or equal to 200', extensions: { code: 'UNPROCESSABLE' } });
    const order = await gql(`{ callRecords(filter: { startDate: "2026-09-02", endDate: "2026-09-01" }) { pagination { total } } }`);
    expect(order.errors?.[0]).toMatchObject({ message: 'start_date must be on or before end_date', extensions: { code: 'UNPROCESSABLE' } });
    const badDate = await gql(`{ callRecords(filter: { startDate: "01/09/2026", endDate: "2026-09-01" }) { pagination { total } } }`);
    expect(badDate.errors?.[0].extensions).toMatchObject({
      code: 'MISSING_PARAMETER',
      details: ['startDate: Input should be a valid date in the format YYYY-MM-DD, invalid character in year'],
    });
    const foreign = await gql(`query($id: ID!) { results(batchId: $id) { status } }`, { id: big.batch.id }, other.apiKey);
    expect(foreign.errors?.[0]).toMatchObject({ message: 'Call batch not found', extensions: { code: 'NOT_FOUND' } });
  });

  it("call(id) answers one of the account's calls; another account's or none is NOT_FOUND", async () => {
    const mine = big.calls[3];
    const CALL = `query($id: ID!) { call(id: $id) { id batchId status attemptCount attempts { number } } }`;
    expect((await gql(CALL, { id: mine.id })).data).toEqual({
      call: { id: mine.id, batchId: big.batch.id, status: 'completed', attemptCount: 1, attempts: [] },
    });
    for (const [id, key] of [
      [mine.id, other.apiKey],
      ['call_00000000000000000000000000000000', a.apiKey],
    ]) {
      const res = await gql(CALL, { id }, key);
      expect(res.errors?.[0]).toMatchObject({ message: 'Call not found', extensions: { code: 'NOT_FOUND' } });
    }
  });
});

describe('GraphQL connections', () => {
  it('batchesConnection pages forward with cursors, newest first, with totalCount and filters', async () => {
    const q = `query($after: String, $filter: CallBatchFilter) {
      batchesConnection(first: 2, after: $after, filter: $filter) { totalCount edges { cursor node { id } } pageInfo { hasNextPage endCursor } } }`;
    const seen: string[] = [];
    let after: string | null = null;
    for (let i = 0; i < 5; i++) {
      const body = await gql(q, { after });
      const conn = body.data.batchesConnection;
      expect(conn.totalCount).toBe(6);
      seen.push(...conn.edges.map((e: { node: { id: string } }) => e.node.id));
      if (!conn.pageInfo.hasNextPage) break;
      after = conn.pageInfo.endCursor;
    }
    expect(seen).toEqual(batchIds);
    const running = await gql(q, { after: null, filter: { status: 'active' } });
    expect(running.data.batchesConnection.totalCount).toBe(3);
    expect(running.data.batchesConnection.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual([batchIds[1], batchIds[3]]);
    const last = await gql(`{ batchesConnection(last: 2) { edges { node { id } } pageInfo { hasPreviousPage } } }`);
    expect(last.data.batchesConnection.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual(batchIds.slice(4));
    expect(last.data.batchesConnection.pageInfo.hasPreviousPage).toBe(true);
  });

  it('CallBatch.callsConnection pages in submission order with filter and totalCount', async () => {
    const q = `query($id: ID!, $after: String) { batch(id: $id) {
      callsConnection(first: 50, after: $after, filter: { status: queued }) { totalCount edges { node { seq status } } pageInfo { hasNextPage endCursor } } } }`;
    const seqs: number[] = [];
    let after: string | null = null;
    for (;;) {
      const body = await gql(q, { id: big.batch.id, after });
      const conn = body.data.batch.callsConnection;
      expect(conn.totalCount).toBe(80);
      seqs.push(...conn.edges.map((e: { node: { seq: number } }) => e.node.seq));
      if (!conn.pageInfo.hasNextPage) break;
      after = conn.pageInfo.endCursor;
    }
    expect(seqs).toEqual(Array.from({ length: 120 }, (_, i) => i + 1).filter((s) => (s - 1) % 3 !== 0));
  });

  it('callRecordsConnection stays inside the account', async () => {
    const body = await gql(
      `{ callRecordsConnection(first: 200, filter: { startDate: "2026-09-01", endDate: "2026-09-30" }) { totalCount edges { node { batchId } } } }`,
    );
    expect(body.data.callRecordsConnection.totalCount).toBe(125);
    expect(new Set(body.data.callRecordsConnection.edges.map((e: { node: { batchId: string } }) => e.node.batchId))).toEqual(new Set(batchIds));
    const theirs = await gql(
      `{ callRecordsConnection(filter: { startDate: "2026-09-01", endDate: "2026-09-30" }) { totalCount } }`,
      {},
      other.apiKey,
    );
    expect(theirs.data.callRecordsConnection.totalCount).toBe(3);
  });
});

describe('no N+1', () => {
  const NESTED = `items { id agentName versionName voice agent { id name } promptVersion { id name agent { name } } batch { id voice status } }`;

  const statementsFor = async (run: () => Promise<unknown>) => (await statementsDuring(t.deps.db, run)).length;

  it('a page of calls with agent, version and batch voice costs the same queries for 5 or 100 calls', async () => {
    const page = (limit: number) => async () => {
      const body = await gql(`query($id: ID!, $limit: Int) { calls(batchId: $id, limit: $limit) { ${NESTED} pagination { total } } }`, {
        id: big.batch.id,
        limit,
      });
      expect(body.errors).toBeUndefined();
      expect(body.data.calls.items).toHaveLength(limit);
      expect(body.data.calls.items[1]).toMatchObject({ agentName: 'Sales Agent', agent: { name: 'Sales Agent' }, batch: { voice: 'verse' } });
    };
    const five = await statementsFor(page(5));
    const hundred = await statementsFor(page(100));
    expect(hundred).toBe(five);
    // auth + batch scope (with the labels agentName/versionName/voice) + calls + the plan's batches,
    // agents, versions and version agents for agent { } / promptVersion { }; the total comes from the counters.
    expect(hundred).toBeLessThanOrEqual(9);
    expect(hundred).toBeGreaterThanOrEqual(6);
  });

  it('the same holds for results with an outcome filter, call records, connections and the REST facade', async () => {
    const cases: [string, (n: number) => () => Promise<unknown>][] = [
      [
        'results',
        (n) => () =>
          gql(`query($id: ID!, $n: Int) { results(batchId: $id, filter: { outcome: "yes" }, limit: $n) { ${NESTED} } }`, { id: big.batch.id, n }),
      ],
      [
        'callRecords',
        (n) => () =>
          gql(`query($n: Int) { callRecords(filter: { startDate: "2026-09-01", endDate: "2026-09-01" }, pageSize: $n) { ${NESTED} } }`, { n }),
      ],
      [
        'callsConnection',
        (n) => () =>
          gql(
            `query($id: ID!, $n: Int) { batch(id: $id) { callsConnection(first: $n) { edges { node { agentName voice agent { name } promptVersion { name } } } } } }`,
            { id: big.batch.id, n },
          ),
      ],
      [
        'batches with nested calls',
        (n) => () =>
          gql(
            `query($n: Int) { batchesConnection(first: $n) { edges { node { id agent { name } callsConnection(first: 3) { edges { node { agentName voice } } } } } } }`,
            { n },
          ),
      ],
      ['REST calls', (n) => () => t.request('GET', `/api/v1/public/call-batches/${big.batch.id}/calls?limit=${n}`, { key: a.apiKey })],
      [
        'REST records',
        (n) => () => t.request('GET', `/api/v1/public/call-records?start_date=2026-09-01&end_date=2026-09-01&page_size=${n}`, { key: a.apiKey }),
      ],
    ];
    for (const [name, run] of cases) {
      const small = await statementsFor(run(2));
      const large = await statementsFor(run(name === 'batches with nested calls' ? 6 : 100));
      // At least key, batch or calls, and a relation or the labels (statement-counts.test.ts has the exact lists).
      expect(small).toBeGreaterThanOrEqual(3);
      expect({ name, large }).toEqual({ name, large: small });
    }
  });
});
