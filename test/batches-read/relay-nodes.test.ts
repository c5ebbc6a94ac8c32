import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { insertBatch, type InsertedBatch } from '../helpers/fixtures.ts';
import { statementsDuring } from '../helpers/query-counter.ts';

let t: TestApp;
let a: SeededAccount;
let other: SeededAccount;
let mine: InsertedBatch;
let theirs: InsertedBatch;
const AT = new Date('2026-09-01T00:00:00.000Z');

beforeAll(async () => {
  // The statement counts below include the key lookup of every request: no key cache.
  t = await createTestApp({ config: { API_KEY_CACHE_MS: '0' } });
  a = await t.seedAccount();
  other = await t.seedAccount();
  mine = await insertBatch(t.deps, a, { contacts: 60, status: 'running', createdAt: AT, batch: { voice: 'verse' } });
  theirs = await insertBatch(t.deps, other, { contacts: 2, createdAt: AT });
});
afterAll(() => t.close());

const gql = async (query: string, variables: Record<string, unknown> = {}, key = a.apiKey) => (await t.gql(query, variables, key)).body;

const statementsFor = async (run: () => Promise<unknown>): Promise<number> => (await statementsDuring(t.deps.db, run)).length;

const NODE_FIELDS = `__typename id ... on CallBatch { status agent { name } } ... on Call { seq batchId } ... on Agent { name } ... on PromptVersion { name agent { id } }`;

describe('node(id:)', () => {
  it('answers each kind by the id it already has', async () => {
    const ids = [mine.batch.id, mine.calls[0].id, a.agent.id, a.version.id];
    const body = await gql(`query($ids: [ID!]!) { nodes(ids: $ids) { ${NODE_FIELDS} } }`, { ids });
    expect(body.errors).toBeUndefined();
    expect(body.data.nodes).toEqual([
      { __typename: 'CallBatch', id: mine.batch.id, status: 'running', agent: { name: a.agent.name } },
      { __typename: 'Call', id: mine.calls[0].id, seq: 1, batchId: mine.batch.id },
      { __typename: 'Agent', id: a.agent.id, name: a.agent.name },
      { __typename: 'PromptVersion', id: a.version.id, name: a.version.name, agent: { id: a.agent.id } },
    ]);
    for (const id of ids) {
      const one = await gql(`query($id: ID!) { node(id: $id) { __typename id } }`, { id });
      expect(one.data.node.id).toBe(id);
    }
  });

  it("answers null, without an error, for another account's, missing and malformed ids", async () => {
    const nulls = [
      theirs.batch.id,
      theirs.calls[0].id,
      other.agent.id,
      other.version.id,
      'sched_0000000000000000000000000000dead',
      a.account.id, // an account is not a node
      a.did.id,
      'Q2FsbEJhdGNoOjE=', // a base64 "Type:id" global id of other servers
      'sched_',
      `sched_${'a'.repeat(200)}`,
      'call_ drop table',
      '',
    ];
    const body = await gql(`query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, { ids: nulls });
    expect(body.errors).toBeUndefined();
    expect(body.data.nodes).toEqual(nulls.map(() => null));
    const one = await gql(`query($id: ID!) { node(id: $id) { id } }`, { id: theirs.batch.id });
    expect(one).toEqual({ data: { node: null } });
  });

  it('needs an API key', async () => {
    const res = await t.gql(`{ node(id: "${mine.batch.id}") { id } }`, {}, null as never);
    expect(res.body.errors?.[0].extensions.code).toBe('UNAUTHENTICATED');
  });
});

describe('nodes(ids:) limits', () => {
  it('refuses more than 100 ids with a clear 4xx', async () => {
    const ids = Array.from({ length: 101 }, () => mine.calls[0].id);
    const res = await t.gql(`query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, { ids }, a.apiKey);
    expect(res.body.errors[0].extensions.code).toBe('BAD_REQUEST');
    expect(res.body.errors[0].message).toMatch(/at most 100 ids/);
  });

  it('is costed per id, so aliases cannot multiply it unseen', async () => {
    const ids = mine.calls.slice(0, 50).map((c) => c.id);
    // 1 + 50 ids × (agent 1 + promptVersions 1 + 10 × agent 1) = 601 a field; ten aliases pass 5,000.
    const sel = `nodes(ids: $ids) { ... on Call { agent { promptVersions { agent { id } } } } }`;
    const once = await t.gql(`query($ids: [ID!]!) { ${sel} }`, { ids }, a.apiKey);
    expect(once.body.errors).toBeUndefined();
    const aliased = await t.gql(`query($ids: [ID!]!) { ${Array.from({ length: 10 }, (_, i) => `n${i}: ${sel}`).join(' ')} }`, { ids }, a.apiKey);
    expect(aliased.status).toBe(400);
    expect(aliased.body.errors[0].extensions.code).toBe('QUERY_TOO_COMPLEX');
  });
});

describe('nodes(ids:) cost of the rows read', () => {
  it('costs each id a whole row: the loaders read calls and prompt versions with their transcript or prompt, asked or not', async () => {
    const ids = Array.from({ length: 100 }, (_, i) => `call_${i.toString(16).padStart(32, '0')}`);
    // 25 aliases (the lookup cap) × 100 ids = 2,500 rows of up to ~130 KB each, for a selection of ids alone.
    const many = await t.gql(
      `query($ids: [ID!]!) { ${Array.from({ length: 25 }, (_, i) => `n${i}: nodes(ids: $ids) { id }`).join(' ')} }`,
      { ids },
      a.apiKey,
    );
    expect(many.status).toBe(400);
    expect(many.body.errors[0].extensions.code).toBe('QUERY_TOO_COMPLEX');
    // About a page of heavy rows per query, as for transcripts elsewhere: two full nodes fields pass.
    const two = await t.gql(`query($ids: [ID!]!) { x: nodes(ids: $ids) { id } y: nodes(ids: $ids) { id } }`, { ids }, a.apiKey);
    expect(two.body.errors).toBeUndefined();
  });
});

describe('loaders', () => {
  const PAGE = `query($ids: [ID!]!) { nodes(ids: $ids) { ... on Call { id agent { name } promptVersion { name agent { name } } batch { id voice } } } }`;

  it('a page of 50 calls with agent, prompt version and batch costs the same statements as 5', async () => {
    const page = (n: number) => async () => {
      const ids = mine.calls.slice(0, n).map((c) => c.id);
      const body = await gql(PAGE, { ids });
      expect(body.errors).toBeUndefined();
      expect(body.data.nodes).toHaveLength(n);
      expect(body.data.nodes[n - 1]).toMatchObject({
        id: ids[n - 1],
        agent: { name: a.agent.name },
        promptVersion: { name: a.version.name },
        batch: { voice: 'verse' },
      });
    };
    const five = await statementsFor(page(5));
    const fifty = await statementsFor(page(50));
    expect(fifty).toBe(five);
    // PGlite 8: key lookup (2) + the calls by id (1, the loader) + their relations, one per kind
    // and level (5); PostgreSQL counts one more, and the same for 5 and 50 calls.
    expect(fifty).toBeLessThanOrEqual(9);
  });

  it('ids asked twice in one request, or across aliases, are loaded once', async () => {
    const ids = mine.calls.slice(0, 10).map((c) => c.id);
    const once = await statementsFor(() => gql(`query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, { ids }));
    const thrice = await statementsFor(async () => {
      const body = await gql(`query($ids: [ID!]!, $id: ID!) { x: nodes(ids: $ids) { id } y: nodes(ids: $ids) { id } z: node(id: $id) { id } }`, {
        ids,
        id: ids[3],
      });
      expect(body.data.y).toEqual(ids.map((id) => ({ id })));
      expect(body.data.z).toEqual({ id: ids[3] });
    });
    expect(thrice).toBe(once);
  });
});
