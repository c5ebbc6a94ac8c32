import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { addAgent, CALL_RECORD_KEYS, callInState, insertBatch } from '../helpers/fixtures.ts';

let t: TestApp;
let a: SeededAccount;
let other: SeededAccount;
let support: Awaited<ReturnType<typeof addAgent>>;
/** call_id by label, for account a. */
const ids: Record<string, string> = {};

// Around the UTC day 2026-08-02.
const MOMENTS = {
  dayBeforeLast: '2026-08-01T23:59:59.999Z',
  dayStart: '2026-08-02T00:00:00.000Z',
  midday: '2026-08-02T12:00:00.000Z',
  dayLast: '2026-08-02T23:59:59.999Z',
  nextDay: '2026-08-03T00:00:00.000Z',
} as const;

beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount();
  other = await t.seedAccount();
  support = await addAgent(t.deps, a, 'Support Agent');
  for (const [label, iso] of Object.entries(MOMENTS)) {
    const createdAt = new Date(iso);
    const seeded = label === 'midday' ? { ...a, ...support } : a;
    const { calls } = await insertBatch(t.deps, seeded, {
      contacts: 2,
      createdAt,
      status: 'completed',
      callOverrides: (i) => callInState(i ? 'completed' : 'busy', i, createdAt),
    });
    ids[`${label}.1`] = calls[0].id;
    ids[`${label}.2`] = calls[1].id;
    // The other account has calls at the same moments.
    await insertBatch(t.deps, other, { contacts: 1, createdAt });
  }
});
afterAll(() => t.close());

const records = (query: string, key: string | null = a.apiKey) => t.request('GET', `/api/v1/public/call-records${query}`, { key });
const callIds = (res: { body: any }) => res.body.data.items.map((c: { call_id: string }) => c.call_id);
const labels = (...names: string[]) => names.flatMap((n) => [ids[`${n}.2`], ids[`${n}.1`]]);

describe('GET /call-records', () => {
  it('one UTC day, inclusive of both edges, newest first', async () => {
    const res = await records('?start_date=2026-08-02&end_date=2026-08-02');
    expect(res.status).toBe(200);
    expect(res.body.message).toBe('Call records fetched successfully');
    // Calls created together tie on created_at; the later id (higher seq) comes first.
    expect(callIds(res)).toEqual(labels('dayLast', 'midday', 'dayStart'));
    expect(res.body.data.pagination).toEqual({ page: 1, limit: 50, total: 6, has_more: false });
    const item = res.body.data.items.find((c: { call_id: string }) => c.call_id === ids['midday.2']);
    expect(item).toMatchObject({ agent_id: support.agent.id, agent_name: 'Support Agent', version_name: 'v1', voice: 'verse', status: 'completed' });
    // Every item has the call record's keys, in the spec's order (busy and completed calls alike).
    for (const it of res.body.data.items) expect(Object.keys(it)).toEqual(CALL_RECORD_KEYS);
    expect(res.body.data.items.map((c: { status: string }) => c.status)).toContain('busy');
  });

  it('a range of days spans every batch of the account and no other account', async () => {
    const res = await records('?start_date=2026-08-01&end_date=2026-08-03');
    expect(callIds(res)).toEqual(labels('nextDay', 'dayLast', 'midday', 'dayStart', 'dayBeforeLast'));
    expect(new Set(res.body.data.items.map((c: { batch_id: string }) => c.batch_id)).size).toBe(5);
    const theirs = await records('?start_date=2026-08-01&end_date=2026-08-03', other.apiKey);
    expect(theirs.body.data.pagination.total).toBe(5);
    expect(callIds(theirs).some((id: string) => Object.values(ids).includes(id))).toBe(false);
    expect((await records('?start_date=2026-07-01&end_date=2026-07-31')).body.data).toEqual({
      items: [],
      pagination: { page: 1, limit: 50, total: 0, has_more: false },
    });
  });

  it('repeated agent_id matches any of them', async () => {
    const range = '?start_date=2026-08-01&end_date=2026-08-03';
    expect(callIds(await records(`${range}&agent_id=${support.agent.id}`))).toEqual(labels('midday'));
    expect(callIds(await records(`${range}&agent_id=${a.agent.id}`))).toEqual(labels('nextDay', 'dayLast', 'dayStart', 'dayBeforeLast'));
    expect((await records(`${range}&agent_id=${a.agent.id}&agent_id=${support.agent.id}`)).body.data.pagination.total).toBe(10);
    expect(callIds(await records(`${range}&agent_id=agt-nobody&agent_id=${support.agent.id}`))).toEqual(labels('midday'));
    // Another account's agent id finds nothing here.
    expect(callIds(await records(`${range}&agent_id=${other.agent.id}`))).toEqual([]);
  });

  it('page and page_size; pagination reports page_size as limit; past the end is empty', async () => {
    const range = '?start_date=2026-08-01&end_date=2026-08-03';
    const all = labels('nextDay', 'dayLast', 'midday', 'dayStart', 'dayBeforeLast');
    const p1 = await records(`${range}&page_size=4`);
    expect(callIds(p1)).toEqual(all.slice(0, 4));
    expect(p1.body.data.pagination).toEqual({ page: 1, limit: 4, total: 10, has_more: true });
    const p3 = await records(`${range}&page_size=4&page=3`);
    expect(callIds(p3)).toEqual(all.slice(8));
    expect(p3.body.data.pagination).toEqual({ page: 3, limit: 4, total: 10, has_more: false });
    const p4 = await records(`${range}&page_size=4&page=4`);
    expect(p4.body.data).toEqual({ items: [], pagination: { page: 4, limit: 4, total: 10, has_more: false } });
    expect((await records(`${range}&page_size=200`)).body.data.pagination).toEqual({ page: 1, limit: 200, total: 10, has_more: false });
  });

  it('the widest range, 0001-01-01 to 9999-12-31, is served', async () => {
    const res = await records('?start_date=0001-01-01&end_date=9999-12-31');
    expect(res.status).toBe(200);
    expect(res.body.data.pagination.total).toBe(10);
  });

  it('start_date after end_date: 422 detail', async () => {
    const res = await records('?start_date=2026-08-03&end_date=2026-08-02');
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ detail: 'start_date must be on or before end_date' });
  });

  it('page_size above 200: 422 detail', async () => {
    for (const size of ['201', '5000', '2147483648', '99999999999999999999']) {
      const res = await records(`?start_date=2026-08-01&end_date=2026-08-02&page_size=${size}`);
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ detail: 'page_size must be less than or equal to 200' });
    }
  });

  it('missing or malformed parameters: 422 envelope', async () => {
    const cases: [string, string[]][] = [
      ['', ['query.start_date: Field required', 'query.end_date: Field required']],
      ['?end_date=2026-08-02', ['query.start_date: Field required']],
      ['?start_date=2026-08-02', ['query.end_date: Field required']],
      ['?start_date=2026-8-2&end_date=2026-08-02', ['query.start_date: Input should be a valid date in the format YYYY-MM-DD, input is too short']],
      [
        '?start_date=2026-08-02&end_date=2026/08/02',
        ['query.end_date: Input should be a valid date in the format YYYY-MM-DD, invalid date separator, expected `-`'],
      ],
      [
        '?start_date=2026-13-02&end_date=2026-08-02',
        ['query.start_date: Input should be a valid date in the format YYYY-MM-DD, month value is outside expected range of 1-12'],
      ],
      [
        '?start_date=0000-01-01&end_date=2026-08-02',
        ['query.start_date: Input should be a valid date in the format YYYY-MM-DD, year value is outside expected range of 1-9999'],
      ],
      [
        '?start_date=2026-02-29&end_date=2026-08-02',
        ['query.start_date: Input should be a valid date in the format YYYY-MM-DD, day value is outside expected range'],
      ],
      [
        '?start_date=2026-08-02T00:00&end_date=2026-08-02',
        ['query.start_date: Input should be a valid date in the format YYYY-MM-DD, unexpected extra characters at the end of the input'],
      ],
      ['?start_date=2026-08-01&end_date=2026-08-02&page_size=0', ['query.page_size: Input should be greater than or equal to 1']],
      [
        '?start_date=2026-08-01&end_date=2026-08-02&page_size=big',
        ['query.page_size: Input should be a valid integer, unable to parse string as an integer'],
      ],
      ['?start_date=2026-08-01&end_date=2026-08-02&page=0', ['query.page: Input should be greater than or equal to 1']],
      // Envelope problems come before the detail-form rules.
      ['?start_date=2026-08-03&end_date=2026-08-02&page=-1&page_size=500', ['query.page: Input should be greater than or equal to 1']],
    ];
    for (const [query, details] of cases) {
      const res = await records(query);
      expect({ query, status: res.status, body: res.body }).toEqual({
        query,
        status: 422,
        body: { status_code: 422, message: 'Missing required parameter', error: { code: 'MISSING_PARAMETER', details }, data: null },
      });
    }
  });

  it('401 without a valid key', async () => {
    const res = await records('?start_date=2026-08-01&end_date=2026-08-02', null);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ detail: 'Invalid API key' });
  });
});
