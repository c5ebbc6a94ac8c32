// GraphQL query cost: over-deep, over-complex (nested pages), over-wide and hostile introspection
// operations are refused before any resolver runs, with a clear QUERY_TOO_COMPLEX error; the
// contract's own largest pages and the standard introspection query still pass.
import { execute, getIntrospectionQuery, parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { gqlSend, send } from '../helpers/abuse.ts';
import { insertBatch } from '../helpers/fixtures.ts';
import { wsClient, wsOnce } from '../helpers/ws-client.ts';
import { schema } from '../../src/graphql/schema.ts';
import { createContext } from '../../src/graphql/context.ts';
import { newRequestScope } from '../../src/http/request-scope.ts';

let t: TestApp;
let a: SeededAccount;

beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount({ limits: { rateLimitPerMinute: 100_000 } });
});
afterAll(() => t.close());

const gql = (query: string, variables: Record<string, unknown> = {}) => gqlSend(t.app, query, variables, { key: a.apiKey });

function expectRefused(r: Awaited<ReturnType<typeof gql>>, message: RegExp) {
  expect(r.status).toBe(400);
  expect(r.body.data ?? null).toBeNull();
  expect(r.body.errors).toHaveLength(1);
  expect(r.body.errors![0].extensions.code).toBe('QUERY_TOO_COMPLEX');
  expect(r.body.errors![0].message).toMatch(message);
}

/** agents { promptVersions { agent { promptVersions … { id } } } } nested `levels` times. */
function deepCatalogQuery(levels: number): string {
  let inner = 'id';
  // Built inside out; level 1 (right under `agents`) is promptVersions.
  for (let level = levels; level >= 1; level--) inner = level % 2 ? `promptVersions { ${inner} }` : `agent { ${inner} }`;
  return `{ agents { ${inner} } }`;
}

describe('depth', () => {
  it('refuses a query nested deeper than GRAPHQL_MAX_DEPTH (10) and names the numbers', async () => {
    const { batch } = await insertBatch(t.deps, a, { contacts: 1 });
    // batch → callsConnection → edges → node → batch …: one object per level, so only depth grows.
    const chain = (hops: number) => {
      let inner = 'id';
      for (let i = 0; i < hops; i++) inner = `callsConnection(first: 1) { edges { node { batch { ${inner} } } } }`;
      return `query($id: ID!) { batch(id: $id) { ${inner} } }`;
    };
    const ok = await gql(chain(2), { id: batch.id }); // depth 10
    expect(ok.body.errors).toBeUndefined();
    expect(ok.body.data.batch.callsConnection.edges[0].node.batch.callsConnection.edges[0].node.batch.id).toBe(batch.id);
    const tooDeep = await gql(deepCatalogQuery(9)); // depth 11
    expectRefused(tooDeep, /^Query is too deep: depth 11 exceeds the maximum of 10$/);
    expect(tooDeep.body.errors![0].extensions.details).toEqual(expect.arrayContaining(['depth: 11 (max 10)']));
    const tooDeepChain = await gql(chain(2).replace('batch { id }', 'batch { agent { id } }'), { id: batch.id }); // depth 11
    expectRefused(tooDeepChain, /depth 11 exceeds/);
  });

  it('a pathologically nested document is refused before parsing, never a crash', async () => {
    const levels = 2000;
    const query = '{ me ' + '{ limits '.repeat(levels) + '{ maxBatchSize }' + ' }'.repeat(levels) + ' }';
    const r = await gql(query);
    expect(r.status).toBeLessThan(500);
    expect(r.body.data ?? null).toBeNull();
    expect(r.body.errors![0]).toMatchObject({
      message: expect.stringMatching(/nests deeper than 64 levels/),
      extensions: { code: 'GRAPHQL_PARSE_FAILED' },
    });
    // Just under the bracket cap the document parses and validates, then the depth limit refuses it.
    expectRefused(await gql(deepCatalogQuery(60)), /depth 62 exceeds the maximum of 10/);
  });
});

describe('complexity (estimated objects fetched)', () => {
  it('refuses nested pages that could pull tens of thousands of rows', async () => {
    const connections = await gql(`{
      batchesConnection(first: 200) { edges { node { callsConnection(first: 200) { edges { node { id status } } } } } }
    }`);
    expectRefused(connections, /^Query is too complex: estimated cost \d+ exceeds the maximum of 5000/);
    const pages = await gql(`{ batches(limit: 200) { items { callsConnection(first: 100) { edges { node { id } } } } } }`);
    expectRefused(pages, /too complex/);
    // Page sizes given as variables are read too.
    const viaVariables = await gql(
      `query($n: Int) { batchesConnection(first: $n) { edges { node { callsConnection(first: $n) { edges { node { id } } } } } } }`,
      { n: 150 },
    );
    expectRefused(viaVariables, /too complex/);
    // Without a page size a connection is assumed to return its largest default page.
    const unsized = await gql(`{ batchesConnection { edges { node { callsConnection { edges { node { id } } } } } } }`);
    expectRefused(unsized, /too complex/);
  });

  it("a refusal for one request's page sizes or operation does not refuse the next request carrying the same document text", async () => {
    // Yoga caches validation results per document text, and measures are reused per document and
    // page-size values (query-cost.ts): neither may carry one request's refusal over to another's.
    const doc = `query($n: Int, $m: Int) { batchesConnection(first: $n) { edges { node { callsConnection(first: $m) { edges { node { id } } } } } } }`;
    const tooComplex = /^Query is too complex/;
    const tooManyLookups = /^Query needs too many database lookups: 151/;
    for (const [n, m, refusal] of [
      [150, 150, tooComplex],
      [10, 10, null],
      [150, 150, tooComplex],
      [10, 150, null],
      [150, 10, tooManyLookups],
      [20, 150, tooComplex],
      [10, 10, null],
    ] as const) {
      const r = await gql(doc, { n, m });
      if (refusal) expectRefused(r, refusal);
      else expect(r.body.errors, `${n} × ${m}`).toBeUndefined();
    }
    // Absent, the default page (100) applies to both: refused again.
    expectRefused(await gql(doc, {}), /too complex/);
    const twoOperations = `query Big { batchesConnection(first: 150) { edges { node { callsConnection(first: 150) { edges { node { id } } } } } } } query Small { me { id } }`;
    for (let i = 0; i < 2; i++) {
      const run = (operationName: string) => send(t.app, 'POST', '/graphql', { key: a.apiKey, body: { query: twoOperations, operationName } });
      expectRefused(await run('Big'), tooComplex);
      const small = await run('Small');
      expect(small.body.errors).toBeUndefined();
      expect(small.body.data.me.id).toBe(a.account.id);
    }
  });

  it('prices a transcript like 20 objects: one page of them per query, not 25', async () => {
    const page = (alias: string) =>
      `${alias}: callRecordsConnection(filter: { startDate: "2000-01-01", endDate: "2100-01-01" }, first: 200) { edges { node { id llmTranscript } } }`;
    const one = await gql(`{ ${page('a')} }`);
    expect(one.status).toBe(200);
    expect(one.body.errors).toBeUndefined();
    expectRefused(await gql(`{ ${page('a')} ${page('b')} }`), /too complex/);
    // Without transcripts the same two pages are cheap.
    const ids = await gql(`{ ${page('a').replace(' llmTranscript', '')} ${page('b').replace(' llmTranscript', '')} }`);
    expect(ids.body.errors).toBeUndefined();
  });

  it('counts database lookups: many aliases of a one-row field, or a paged list inside a page, are refused', async () => {
    const aliases = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: batches(limit: 1) { items { id } }`).join(' ')} }`;
    const allowed = await gql(aliases(25));
    expect(allowed.body.errors).toBeUndefined();
    const refused = await gql(aliases(26));
    expectRefused(refused, /^Query needs too many database lookups: 26 exceeds the maximum of 25/);
    expect(refused.body.errors![0].extensions.details).toEqual(['lookups: 26 (max 25)']);
    // One lookup for the page, one per batch in it for its calls: 1 + 200.
    expectRefused(await gql(`{ batches(limit: 200) { items { callsConnection(first: 1) { totalCount } } } }`), /lookups: 201 exceeds/);
    // __typename and introspection are not lookups.
    const free = await gql(`{ ${Array.from({ length: 40 }, (_, i) => `t${i}: __typename`).join(' ')} me { id } }`);
    expect(free.body.errors).toBeUndefined();
  });

  it('passes a dashboard-sized nested query', async () => {
    const r = await gql(`{
      batchesConnection(first: 20) { edges { node { id callsConnection(first: 50) { edges { node { id status agent { name } } } } } } }
    }`);
    expect(r.status).toBe(200);
    expect(r.body.errors).toBeUndefined();
  });

  it("passes the contract's largest pages with every field (REST facade and GraphQL)", async () => {
    const { batch } = await insertBatch(t.deps, a, { contacts: 200 });
    for (const path of [
      '/api/v1/public/call-batches?limit=200',
      `/api/v1/public/call-batches/${batch.id}/calls?limit=200`,
      `/api/v1/public/call-batches/${batch.id}/results?limit=200`,
      '/api/v1/public/call-records?start_date=2000-01-01&end_date=2100-01-01&page_size=200',
    ]) {
      const r = await send(t.app, 'GET', path, { key: a.apiKey });
      expect(r.status, path).toBe(200);
    }
    const calls = await send(t.app, 'GET', `/api/v1/public/call-batches/${batch.id}/calls?limit=200`, { key: a.apiKey });
    expect(calls.body.data.items).toHaveLength(200);
    // A page size above 200 is still the contract's own 422, not a complexity refusal.
    const big = await send(t.app, 'GET', '/api/v1/public/call-records?start_date=2000-01-01&end_date=2100-01-01&page_size=100000', { key: a.apiKey });
    expect(big.status).toBe(422);
    expect(big.body).toHaveProperty('detail');
  });

  it('the same limits guard resolvers when the document is executed outside the HTTP pipeline', async () => {
    const document = parse(`{ batchesConnection(first: 200) { edges { node { callsConnection(first: 200) { edges { node { id } } } } } } }`);
    const request = new Request('http://internal.local/graphql', { headers: { authorization: `Bearer ${a.apiKey}` } });
    const result = await execute({ schema, document, contextValue: createContext(t.deps, request, newRequestScope(undefined)) });
    expect(result.errors?.[0].extensions.code).toBe('QUERY_TOO_COMPLEX');
    expect(result.errors?.[0].message).toMatch(/too complex/);
  });
});

describe('breadth', () => {
  it('refuses an operation selecting more than GRAPHQL_MAX_BREADTH (200) fields, e.g. through aliases', async () => {
    const aliases = Array.from({ length: 101 }, (_, i) => `a${i}: me { id }`).join(' ');
    expectRefused(await gql(`{ ${aliases} }`), /^Query selects too many fields: 202 exceeds the maximum of 200$/);
  });
});

describe('introspection', () => {
  it('allows the standard introspection query (GraphiQL, codegen)', async () => {
    const r = await gqlSend(t.app, getIntrospectionQuery({ descriptions: true, inputValueDeprecation: true }));
    expect(r.status).toBe(200);
    expect(r.body.data.__schema.types.length).toBeGreaterThan(10);
  });

  it('refuses multiplying introspection lists and many introspection roots', async () => {
    // The classic fields-of-fields nesting (graphql-js has a rule for it too, which now never runs on it)…
    const nested = await gqlSend(t.app, '{ __schema { types { fields { type { fields { type { fields { name } } } } } } } }');
    expectRefused(nested, /Introspection lists nested more than 3 deep/);
    // …and the other list fields and the number of roots.
    const lists = await gqlSend(t.app, '{ __schema { types { interfaces { possibleTypes { enumValues { name } } } } } }');
    expectRefused(lists, /Introspection lists nested more than 3 deep/);
    const roots = Array.from({ length: 11 }, (_, i) => `s${i}: __schema { types { name } }`).join(' ');
    expectRefused(await gqlSend(t.app, `{ ${roots} }`), /at most 10 __schema\/__type fields/);
    const viaFragment = await gqlSend(
      t.app,
      '{ __schema { directives { ...D } } } fragment D on __Directive { args { type { inputFields { type { enumValues { name } } } } } }',
    );
    expectRefused(viaFragment, /Introspection lists nested/);
  });
});

describe('parser', () => {
  it('refuses documents above GRAPHQL_MAX_TOKENS (5000) before building them', async () => {
    const fields = Array.from({ length: 5_000 }, () => '__typename').join(' ');
    const r = await gql(`{ ${fields} }`);
    expect(r.status).toBeLessThan(500);
    expect(r.body.data ?? null).toBeNull();
    expect(r.body.errors![0]).toMatchObject({
      message: expect.stringMatching(/more tha[nt] 5000 tokens/),
      extensions: { code: 'GRAPHQL_PARSE_FAILED' },
    });
    const fits = Array.from({ length: 150 }, () => '__typename').join(' ');
    expect((await gql(`{ ${fits} }`)).status).toBe(200);
  });
});

describe('over WebSocket', () => {
  it('refuses an over-complex operation with the same error, before validation', async () => {
    const url = await t.app.listen();
    const client = wsClient(url, `Bearer ${a.apiKey}`);
    try {
      // Refused at validation: the protocol's `error` message for that one operation.
      const errors = await wsOnce(client, deepCatalogQuery(9)).then(
        () => [],
        (e: unknown) => e as { extensions?: { code?: string } }[],
      );
      expect(errors[0]).toMatchObject({ extensions: { code: 'QUERY_TOO_COMPLEX' } });
    } finally {
      await client.dispose();
    }
  });
});
