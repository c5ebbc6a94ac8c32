// Call records are read through their batches (src/services/calls/call-record-ranges.ts): every
// way of paging them (REST offset pages, the GraphQL offset page, the relay connection forwards
// and backwards) must give the order of batches newest first, a batch's calls by seq descending,
// with pages that meet exactly at batch boundaries.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { addAgent, insertBatch } from '../helpers/fixtures.ts';

let t: TestApp;
let a: SeededAccount;
let support: Awaited<ReturnType<typeof addAgent>>;
/** Every call id of the range, in the expected order. */
let expected: string[] = [];
/** The same for the support agent's batches only. */
let supportOnly: string[] = [];

const DAY = '2026-10-05';
const RANGE = `start_date=${DAY}&end_date=${DAY}`;
const FILTER = `{ startDate: "${DAY}", endDate: "${DAY}" }`;

beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount();
  support = await addAgent(t.deps, a, 'Support Agent');
  const other = await t.seedAccount();
  // Sizes 1..7 so that pages of any size cross batch edges; two pairs share a created_at, where
  // the later batch id comes first.
  const minutes = [10, 20, 20, 30, 40, 40, 50];
  const batches: { id: string; createdAt: Date; calls: string[]; support: boolean }[] = [];
  for (const [i, minute] of minutes.entries()) {
    const createdAt = new Date(`${DAY}T10:${minute}:00.000Z`);
    const onSupport = i % 3 === 1;
    const inserted = await insertBatch(t.deps, onSupport ? { ...a, ...support } : a, { contacts: i + 1, createdAt });
    batches.push({ id: inserted.batch.id, createdAt, calls: inserted.calls.map((c) => c.id), support: onSupport });
    await insertBatch(t.deps, other, { contacts: 2, createdAt });
  }
  // Outside the day on both sides.
  await insertBatch(t.deps, a, { contacts: 3, createdAt: new Date('2026-10-04T23:59:59.999Z') });
  await insertBatch(t.deps, a, { contacts: 3, createdAt: new Date('2026-10-06T00:00:00.000Z') });
  batches.sort((x, y) => y.createdAt.getTime() - x.createdAt.getTime() || (x.id < y.id ? 1 : -1));
  const newestFirst = (list: typeof batches) => list.flatMap((b) => [...b.calls].reverse());
  expected = newestFirst(batches);
  supportOnly = newestFirst(batches.filter((b) => b.support));
});
afterAll(() => t.close());

const restIds = async (query: string) => {
  const res = await t.request('GET', `/api/v1/public/call-records?${query}`, { key: a.apiKey });
  expect(res.status).toBe(200);
  return { ids: res.body.data.items.map((c: { call_id: string }) => c.call_id) as string[], pagination: res.body.data.pagination };
};

const connection = async (args: string) => {
  const res = await t.gql(
    `{ callRecordsConnection(filter: ${FILTER}, ${args}) { totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor } edges { node { id } } } }`,
    {},
    a.apiKey,
  );
  expect(res.body.errors).toBeUndefined();
  const c = res.body.data.callRecordsConnection;
  return { ids: c.edges.map((e: { node: { id: string } }) => e.node.id) as string[], pageInfo: c.pageInfo, total: c.totalCount as number };
};

describe('call records through their batches', () => {
  it('the order is batches newest first (later id first on a tie), each batch by seq descending', async () => {
    expect(expected).toHaveLength(28);
    const { ids, pagination } = await restIds(`${RANGE}&page_size=200`);
    expect(ids).toEqual(expected);
    expect(pagination).toEqual({ page: 1, limit: 200, total: 28, has_more: false });
  });

  it('REST offset pages of every size meet exactly and end where the records end', async () => {
    for (const size of [1, 2, 3, 5, 8, 13, 27, 28]) {
      const pages: string[] = [];
      for (let page = 1; ; page++) {
        const { ids, pagination } = await restIds(`${RANGE}&page_size=${size}&page=${page}`);
        expect(pagination.total).toBe(28);
        if (ids.length === 0) break;
        pages.push(...ids);
        expect(pagination.has_more).toBe(page * size < 28);
      }
      expect({ size, pages }).toEqual({ size, pages: expected });
    }
  });

  it('the agent filter keeps its batches only, in the same order', async () => {
    const { ids, pagination } = await restIds(`${RANGE}&agent_id=${support.agent.id}&page_size=4&page=2`);
    expect(ids).toEqual(supportOnly.slice(4, 8));
    expect(pagination.total).toBe(supportOnly.length);
  });

  it('the GraphQL offset page matches REST', async () => {
    const res = await t.gql(`{ callRecords(filter: ${FILTER}, page: 3, pageSize: 6) { items { id } pagination { total } } }`, {}, a.apiKey);
    expect(res.body.data.callRecords.items.map((c: { id: string }) => c.id)).toEqual(expected.slice(12, 18));
    expect(res.body.data.callRecords.pagination.total).toBe(28);
  });

  it('the relay connection walks forwards and backwards through every record', async () => {
    for (const size of [1, 4, 9]) {
      const forwards: string[] = [];
      let after: string | null = null;
      for (;;) {
        const page = await connection(`first: ${size}${after ? `, after: "${after}"` : ''}`);
        expect(page.total).toBe(28);
        forwards.push(...page.ids);
        if (!page.pageInfo.hasNextPage) break;
        after = page.pageInfo.endCursor;
      }
      expect({ size, forwards }).toEqual({ size, forwards: expected });

      const backwards: string[] = [];
      let before: string | null = null;
      for (;;) {
        const page = await connection(`last: ${size}${before ? `, before: "${before}"` : ''}`);
        backwards.unshift(...page.ids);
        if (!page.pageInfo.hasPreviousPage) break;
        before = page.pageInfo.startCursor;
      }
      expect({ size, backwards }).toEqual({ size, backwards: expected });
    }
  });

  it('a cursor inside a batch continues within it; a cursor not of the account gives nothing', async () => {
    const cursor = (await connection('first: 5')).pageInfo.endCursor;
    expect((await connection(`first: 3, after: "${cursor}"`)).ids).toEqual(expected.slice(5, 8));
    expect((await connection(`last: 3, before: "${cursor}"`)).ids).toEqual(expected.slice(1, 4));
    const elsewhere = await t.seedAccount();
    const theirs = await insertBatch(t.deps, elsewhere, { contacts: 1, createdAt: new Date(`${DAY}T12:00:00.000Z`) });
    const foreign = Buffer.from(`GPC:S:${theirs.calls[0].id}`).toString('base64');
    expect((await connection(`first: 3, after: "${foreign}"`)).ids).toEqual([]);
  });
});
