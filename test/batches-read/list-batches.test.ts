import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { addAgent, callInState, insertBatch } from '../helpers/fixtures.ts';
import type { BatchStatus } from '../../src/domain/batch-state.ts';

let t: TestApp;
let a: SeededAccount;
let other: SeededAccount;
let agent2: Awaited<ReturnType<typeof addAgent>>;
/** Account a's batches by name. */
const ids: Record<string, string> = {};
const T0 = Date.parse('2026-05-10T12:00:00.000Z');
const at = (minutes: number) => new Date(T0 + minutes * 60_000);

beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount();
  other = await t.seedAccount();
  agent2 = await addAgent(t.deps, a, 'Support Agent');
  const specs: [string, BatchStatus, number][] = [
    ['pending', 'pending', 0],
    ['paused', 'paused', 1],
    ['queued', 'queued', 2],
    ['dispatching', 'dispatching', 3],
    ['running', 'running', 4],
    ['completed', 'completed', 5],
    ['cancelled', 'cancelled', 6],
  ];
  for (const [name, status, minute] of specs) {
    const { batch } = await insertBatch(t.deps, a, {
      contacts: 2,
      status,
      createdAt: at(minute),
      callOverrides: (i) => callInState(status === 'completed' ? 'completed' : status === 'cancelled' ? 'cancelled' : 'pending', i, at(minute)),
    });
    ids[name] = batch.id;
  }
  const { batch: second } = await insertBatch(t.deps, { ...a, ...agent2 }, { contacts: 1, status: 'running', createdAt: at(7) });
  ids.agent2 = second.id;
  // Another account's batches, interleaved in time, must never show up.
  for (let m = 0; m < 8; m++) await insertBatch(t.deps, other, { contacts: 1, status: 'running', createdAt: at(m) });
});
afterAll(() => t.close());

const list = (query = '', key: string | null = a.apiKey) => t.request('GET', `/api/v1/public/call-batches${query}`, { key });
const idsOf = (res: { body: any }) => res.body.data.items.map((i: { batch_id: string }) => i.batch_id);
const NEWEST_FIRST = ['agent2', 'cancelled', 'completed', 'running', 'dispatching', 'queued', 'paused', 'pending'];

describe('GET /call-batches', () => {
  it('lists the account’s batches newest first with list-item fields and pagination', async () => {
    const res = await list();
    expect(res.status).toBe(200);
    expect(res.body.message).toBe('Call batches fetched successfully');
    expect(res.body.error).toBeNull();
    expect(idsOf(res)).toEqual(NEWEST_FIRST.map((n) => ids[n]));
    expect(res.body.data.pagination).toEqual({ page: 1, limit: 50, total: 8, has_more: false });
    const completed = res.body.data.items[2];
    expect(completed).toEqual({
      batch_id: ids.completed,
      agent_id: a.agent.id,
      version_id: a.version.id,
      status: 'completed',
      total_contacts: 2,
      queued: 0,
      in_progress: 0,
      completed: 2,
      failed: 0,
      cancelled: 0,
      created_at: '2026-05-10T12:05:00.000Z',
    });
    expect(Object.keys(completed)).toEqual([
      'batch_id',
      'agent_id',
      'version_id',
      'status',
      'total_contacts',
      'queued',
      'in_progress',
      'completed',
      'failed',
      'cancelled',
      'created_at',
    ]);
  });

  it('status filter: pending, active (every in-flight state), completed, cancelled', async () => {
    expect(idsOf(await list('?status=pending'))).toEqual([ids.pending]);
    expect(idsOf(await list('?status=completed'))).toEqual([ids.completed]);
    expect(idsOf(await list('?status=cancelled'))).toEqual([ids.cancelled]);
    const active = await list('?status=active');
    expect(idsOf(active)).toEqual(['agent2', 'running', 'dispatching', 'queued', 'paused', 'pending'].map((n) => ids[n]));
    expect(active.body.data.pagination.total).toBe(6);
  });

  it('agent_id filter, alone and with status', async () => {
    expect(idsOf(await list(`?agent_id=${agent2.agent.id}`))).toEqual([ids.agent2]);
    expect(idsOf(await list(`?agent_id=${a.agent.id}&status=active`))).toEqual(
      ['running', 'dispatching', 'queued', 'paused', 'pending'].map((n) => ids[n]),
    );
    expect(idsOf(await list(`?agent_id=${other.agent.id}`))).toEqual([]);
    expect(idsOf(await list('?agent_id=agt-unknown'))).toEqual([]);
  });

  it('created_at_from / created_at_to are inclusive and honour offsets', async () => {
    // Exactly the created_at of 'queued' (12:02Z) and 'running' (12:04Z), written in other offsets.
    const res = await list(
      `?created_at_from=${encodeURIComponent('2026-05-10T14:02:00.000+02:00')}&created_at_to=${encodeURIComponent('2026-05-10T07:04:00-05:00')}`,
    );
    expect(idsOf(res)).toEqual(['running', 'dispatching', 'queued'].map((n) => ids[n]));
    expect(idsOf(await list('?created_at_from=2026-05-10T12:06:00Z'))).toEqual([ids.agent2, ids.cancelled]);
    expect(idsOf(await list('?created_at_to=2026-05-10T12:00:59.999Z'))).toEqual([ids.pending]);
    // One millisecond past a bound excludes it.
    expect(idsOf(await list('?created_at_from=2026-05-10T12:07:00.001Z'))).toEqual([]);
    // A bound without an offset is UTC; a bare date is its midnight.
    expect(idsOf(await list('?created_at_from=2026-05-10T12:07:00'))).toEqual([ids.agent2]);
    expect(idsOf(await list('?created_at_to=2026-05-10'))).toEqual([]);
    expect(idsOf(await list('?created_at_from=2026-05-10&status=completed'))).toEqual([ids.completed]);
    // Bounds at the ends of the calendar (years 0 and 10000 in UTC) still work.
    const widest = await list(
      `?created_at_from=${encodeURIComponent('0001-01-01T00:00:00+05:00')}&created_at_to=${encodeURIComponent('9999-12-31T23:00:00-05:00')}`,
    );
    expect(widest.status).toBe(200);
    expect(widest.body.data.pagination.total).toBe(8);
    // from after to: nothing, not an error.
    expect((await list('?created_at_from=2026-05-11T00:00:00Z&created_at_to=2026-05-10T00:00:00Z')).body.data).toEqual({
      items: [],
      pagination: { page: 1, limit: 50, total: 0, has_more: false },
    });
  });

  it('pages with limit and page; a page past the end is empty with has_more false', async () => {
    const p1 = await list('?limit=3');
    expect(idsOf(p1)).toEqual(NEWEST_FIRST.slice(0, 3).map((n) => ids[n]));
    expect(p1.body.data.pagination).toEqual({ page: 1, limit: 3, total: 8, has_more: true });
    const p2 = await list('?limit=3&page=2');
    expect(idsOf(p2)).toEqual(NEWEST_FIRST.slice(3, 6).map((n) => ids[n]));
    expect(p2.body.data.pagination).toEqual({ page: 2, limit: 3, total: 8, has_more: true });
    const p3 = await list('?limit=3&page=3');
    expect(idsOf(p3)).toEqual(NEWEST_FIRST.slice(6).map((n) => ids[n]));
    expect(p3.body.data.pagination).toEqual({ page: 3, limit: 3, total: 8, has_more: false });
    const past = await list('?limit=3&page=4');
    expect(past.status).toBe(200);
    expect(past.body.data).toEqual({ items: [], pagination: { page: 4, limit: 3, total: 8, has_more: false } });
    const farPast = await list('?page=2147483647&limit=200');
    expect(farPast.body.data).toEqual({ items: [], pagination: { page: 2147483647, limit: 200, total: 8, has_more: false } });
    // Exactly full last page.
    expect((await list('?limit=4&page=2')).body.data.pagination).toEqual({ page: 2, limit: 4, total: 8, has_more: false });
    expect((await list('?limit=200')).body.data.pagination.limit).toBe(200);
    // Repeated scalar parameters: the last one wins.
    expect((await list('?limit=1&limit=2')).body.data.pagination.limit).toBe(2);
  });

  it('default page size is 50 and ties on created_at fall back to id, newest first', async () => {
    const c = await t.seedAccount();
    const same = at(100);
    const made: string[] = [];
    for (let i = 0; i < 53; i++) made.push((await insertBatch(t.deps, c, { contacts: 1, createdAt: same })).batch.id);
    const p1 = await list('', c.apiKey);
    expect(p1.body.data.items).toHaveLength(50);
    expect(p1.body.data.pagination).toEqual({ page: 1, limit: 50, total: 53, has_more: true });
    const p2 = await list('?page=2', c.apiKey);
    expect([...idsOf(p1), ...idsOf(p2)]).toEqual([...made].reverse());
  });

  it('isolation: another account sees only its own batches', async () => {
    const res = await list('', other.apiKey);
    expect(res.body.data.pagination.total).toBe(8);
    expect(idsOf(res).some((id: string) => Object.values(ids).includes(id))).toBe(false);
  });

  it('bad query values are the 422 envelope with pydantic-worded details', async () => {
    const cases: [string, string[]][] = [
      ['?limit=0', ['query.limit: Input should be greater than or equal to 1']],
      ['?limit=201', ['query.limit: Input should be less than or equal to 200']],
      ['?limit=-5', ['query.limit: Input should be greater than or equal to 1']],
      ['?limit=abc', ['query.limit: Input should be a valid integer, unable to parse string as an integer']],
      ['?limit=1.5', ['query.limit: Input should be a valid integer, unable to parse string as an integer']],
      ['?limit=', ['query.limit: Input should be a valid integer, unable to parse string as an integer']],
      ['?page=0', ['query.page: Input should be greater than or equal to 1']],
      ['?page=x', ['query.page: Input should be a valid integer, unable to parse string as an integer']],
      ['?page=99999999999', ['query.page: Input should be less than or equal to 2147483647']],
      ['?status=running', ["query.status: Input should be 'pending', 'active', 'completed' or 'cancelled'"]],
      ['?status=', ["query.status: Input should be 'pending', 'active', 'completed' or 'cancelled'"]],
      ['?created_at_from=not-a-date-at-all', ['query.created_at_from: Input should be a valid datetime, invalid character in year']],
      ['?created_at_to=2026-02-30T00:00:00Z', ['query.created_at_to: Input should be a valid datetime, day value is outside expected range']],
      [
        '?created_at_to=2026-02-03T25:00:00Z',
        ['query.created_at_to: Input should be a valid datetime, hour value is outside expected range of 0-23'],
      ],
      ['?created_at_from=2026-02-03T10:00:00+0x', ['query.created_at_from: Input should be a valid datetime, invalid timezone sign']],
      [
        '?created_at_from=2026-01-01T00:00:00%2B99:99',
        ['query.created_at_from: Input should be a valid datetime, timezone offset must be less than 24 hours'],
      ],
      [
        '?created_at_to=2026-01-01T00:00:00-05:60',
        ['query.created_at_to: Input should be a valid datetime, timezone offset minute value is outside expected range of 0-59'],
      ],
      [
        '?status=nope&created_at_from=bad&limit=500&page=0',
        [
          "query.status: Input should be 'pending', 'active', 'completed' or 'cancelled'",
          'query.created_at_from: Input should be a valid datetime, input is too short',
          'query.limit: Input should be less than or equal to 200',
          'query.page: Input should be greater than or equal to 1',
        ],
      ],
    ];
    for (const [query, details] of cases) {
      const res = await list(query);
      expect({ query, status: res.status, body: res.body }).toEqual({
        query,
        status: 422,
        body: { status_code: 422, message: 'Missing required parameter', error: { code: 'MISSING_PARAMETER', details }, data: null },
      });
    }
  });

  it('401 without a key, before any query-string problem', async () => {
    for (const query of ['', '?limit=0&status=nope']) {
      const res = await list(query, null);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ detail: 'Invalid API key' });
    }
  });
});
