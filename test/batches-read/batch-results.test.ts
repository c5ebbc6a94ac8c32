import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { CALL_RECORD_KEYS, callInState, insertBatch, moveCall, type CallFields, type InsertedBatch } from '../helpers/fixtures.ts';

let t: TestApp;
let a: SeededAccount;
let other: SeededAccount;
let batch: InsertedBatch;
const AT = new Date('2026-07-01T10:00:00.000Z');

// seq: status / transcript / outcomes
const CALLS: CallFields[] = [
  /* 1 */ { ...callInState('completed', 0, AT, { interested: 'yes', callback_requested: 'no' }) },
  /* 2 */ { ...callInState('completed', 1, AT, { interested: 'no', callback_requested: 'yes' }) },
  /* 3 */ { ...callInState('completed', 2, AT, { interested: 'no', callback_requested: 'no' }), transcriptStatus: 'processing' },
  /* 4 */ { ...callInState('completed', 3, AT, { interested: 'yes', callback_requested: 'yes' }), transcriptStatus: 'failed' },
  /* 5 */ { ...callInState('no_answer', 4, AT) },
  /* 6 */ { ...callInState('pending', 5, AT) },
  /* 7 */ { ...callInState('completed', 6, AT, { interested: 'Yes', callback_requested: 'no' }) },
  /* 8 */ { ...callInState('completed', 7, AT, { interested: 'maybe' }), outcomes: ['yes'] },
  /* 9 */ { ...callInState('completed', 8, AT, { interested: 'maybe' }), outcomes: 'yes' },
  /* 10 */ { ...callInState('in_progress', 9, AT), transcriptStatus: 'pending' },
  /* 11 */ { ...callInState('completed', 10, AT, { interested: 'maybe' }), outcomes: { tags: ['vip', 'yes'] } },
];

beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount();
  other = await t.seedAccount();
  batch = await insertBatch(t.deps, a, { contacts: CALLS.length, status: 'running', createdAt: AT, callOverrides: (i) => CALLS[i] });
});
afterAll(() => t.close());

const results = (batchId: string, query = '', key: string | null = a.apiKey) =>
  t.request('GET', `/api/v1/public/call-batches/${batchId}/results${query}`, { key });
const seqs = (res: { body: any }) => res.body.data.items.map((c: { contact_id: string }) => Number(c.contact_id.split('-')[1]));

describe('GET /call-batches/{batch_id}/results', () => {
  it('all calls with results, status and pagination', async () => {
    const res = await results(batch.batch.id);
    expect(res.status).toBe(200);
    expect(res.body.message).toBe('Batch results fetched successfully');
    expect(Object.keys(res.body.data)).toEqual(['status', 'items', 'pagination']);
    expect(res.body.data.status).toBe('pending');
    expect(seqs(res)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(res.body.data.pagination).toEqual({ page: 1, limit: 100, total: 11, has_more: false });
    // Every item has the call record's keys, in the spec's order (finished and not-yet-made calls alike).
    for (const item of res.body.data.items) expect(Object.keys(item)).toEqual(CALL_RECORD_KEYS);
    expect(res.body.data.items[5]).toMatchObject({ status: 'pending', transcript_status: null, summary: null, recording_url: null });
    expect(res.body.data.items[0]).toMatchObject({
      status: 'completed',
      outcomes: { interested: 'yes', callback_requested: 'no' },
      transcript_status: 'ready',
      hangup_by: 'user',
      recording_available: true,
    });
  });

  it('outcome matches any value of the outcomes object, exactly', async () => {
    expect(seqs(await results(batch.batch.id, '?outcome=yes'))).toEqual([1, 2, 4, 11]);
    expect(seqs(await results(batch.batch.id, '?outcome=maybe'))).toEqual([]);
    expect(seqs(await results(batch.batch.id, '?outcome=Yes'))).toEqual([7]);
    expect(seqs(await results(batch.batch.id, '?outcome=ye'))).toEqual([]);
    expect(seqs(await results(batch.batch.id, '?outcome=interested'))).toEqual([]);
    expect(seqs(await results(batch.batch.id, `?outcome=${encodeURIComponent('it\'s "quoted"')}`))).toEqual([]);
  });

  it('outcome values with quotes, backslashes and unicode match literally', async () => {
    const odd = ['say "hi" \\ now', "it's $.* ? (@ == 1)", 'naïve 🙂'];
    const { batch: b } = await insertBatch(t.deps, a, {
      contacts: 4,
      callOverrides: (i) => callInState('completed', i, AT, { note: odd[i] ?? 'plain' }),
    });
    for (const [i, value] of odd.entries()) {
      const res = await results(b.id, `?outcome=${encodeURIComponent(value)}`);
      expect({ value, seqs: seqs(res) }).toEqual({ value, seqs: [i + 1] });
    }
    const gql = await t.gql(
      `query($id: ID!, $o: String) { results(batchId: $id, filter: { outcome: $o }) { items { seq } } }`,
      { id: b.id, o: odd[0] },
      a.apiKey,
    );
    expect(gql.body.data.results.items).toEqual([{ seq: 1 }]);
  });

  it('outcome combines with status and transcript_status, and pages', async () => {
    expect(seqs(await results(batch.batch.id, '?outcome=yes&transcript_status=ready'))).toEqual([1, 2, 11]);
    expect(seqs(await results(batch.batch.id, '?outcome=no&transcript_status=processing&status=completed'))).toEqual([3]);
    expect(seqs(await results(batch.batch.id, '?outcome=no&status=no_answer'))).toEqual([]);
    const p2 = await results(batch.batch.id, '?outcome=yes&limit=3&page=2');
    expect(seqs(p2)).toEqual([11]);
    expect(p2.body.data.pagination).toEqual({ page: 2, limit: 3, total: 4, has_more: false });
    const p1 = await results(batch.batch.id, '?outcome=yes&limit=3');
    expect(seqs(p1)).toEqual([1, 2, 4]);
    expect(p1.body.data.pagination).toEqual({ page: 1, limit: 3, total: 4, has_more: true });
    const past = await results(batch.batch.id, '?outcome=yes&limit=3&page=3');
    expect(past.body.data).toEqual({ status: 'pending', items: [], pagination: { page: 3, limit: 3, total: 4, has_more: false } });
  });

  it("outcome-filtered reads hold a slot each: beyond the account's, 429 before anything is read; unfiltered pages need none", async () => {
    // Two held by this account (the default per-account limit), as two slow reads would.
    const held = [t.deps.outcomeReads.acquire(a.account.id), t.deps.outcomeReads.acquire(a.account.id)];
    try {
      const busy = await results(batch.batch.id, '?outcome=yes');
      expect(busy.status).toBe(429);
      expect(busy.headers.get('retry-after')).toBe('2');
      expect(busy.body).toMatchObject({ status_code: 429, error: { code: 'RATE_LIMITED' }, data: null });
      expect(JSON.stringify(busy.body)).toContain('At most 2 outcome-filtered reads at once per account');
      const gql = await t.gql(
        `query($id: ID!) { results(batchId: $id, filter: { outcome: "yes" }) { items { id } } }`,
        { id: batch.batch.id },
        a.apiKey,
      );
      expect(gql.body.errors?.[0]).toMatchObject({ extensions: { code: 'RATE_LIMITED' } });
      // Without the filter, and for another account, nothing waits.
      expect((await results(batch.batch.id, '?status=completed')).status).toBe(200);
      const theirs = await insertBatch(t.deps, other, { contacts: 1, status: 'running', createdAt: AT, callOverrides: () => CALLS[0] });
      expect(seqs(await results(theirs.batch.id, '?outcome=yes', other.apiKey))).toEqual([1]);
    } finally {
      for (const release of held) release();
    }
    expect(t.deps.outcomeReads.held()).toBe(0);
    expect(seqs(await results(batch.batch.id, '?outcome=yes'))).toEqual([1, 2, 4, 11]);
    // One document's outcome-filtered fields share its one slot: aliases run at once, and are not refused by each other.
    const field = (alias: string, outcome: string) => `${alias}: results(batchId: $id, filter: { outcome: "${outcome}" }) { pagination { total } }`;
    const three = await t.gql(`query($id: ID!) { ${field('y', 'yes')} ${field('n', 'no')} ${field('m', 'Yes')} }`, { id: batch.batch.id }, a.apiKey);
    expect(three.body).toEqual({ data: { y: { pagination: { total: 4 } }, n: { pagination: { total: 4 } }, m: { pagination: { total: 1 } } } });
    expect(t.deps.outcomeReads.held()).toBe(0);
    // A refused or failed read gives its slot back.
    expect((await results('sched_missing', '?outcome=yes')).status).toBe(404);
    expect(t.deps.outcomeReads.held()).toBe(0);
  });

  it('status and transcript_status filters', async () => {
    expect(seqs(await results(batch.batch.id, '?status=completed'))).toEqual([1, 2, 3, 4, 7, 8, 9, 11]);
    expect(seqs(await results(batch.batch.id, '?status=no_answer'))).toEqual([5]);
    expect(seqs(await results(batch.batch.id, '?transcript_status=ready'))).toEqual([1, 2, 7, 8, 9, 11]);
    expect(seqs(await results(batch.batch.id, '?transcript_status=processing'))).toEqual([3]);
    expect(seqs(await results(batch.batch.id, '?transcript_status=failed'))).toEqual([4]);
    expect(seqs(await results(batch.batch.id, '?transcript_status=pending'))).toEqual([10]);
    // `completed` (one sample's spelling) reads as `ready`.
    expect(seqs(await results(batch.batch.id, '?transcript_status=completed'))).toEqual([1, 2, 7, 8, 9, 11]);
    const both = await results(batch.batch.id, '?transcript_status=ready&status=completed&limit=2&page=3');
    expect(seqs(both)).toEqual([9, 11]);
    expect(both.body.data.pagination).toEqual({ page: 3, limit: 2, total: 6, has_more: false });
  });

  it('data.status: pending while any call is not terminal, completed when all are, cancelled for a cancelled batch', async () => {
    const { batch: b, calls } = await insertBatch(t.deps, a, { contacts: 3, status: 'running', callOverrides: (i) => callInState('ringing', i, AT) });
    expect((await results(b.id)).body.data.status).toBe('pending');
    await moveCall(t.deps, calls[0].id, 'no_answer');
    await moveCall(t.deps, calls[1].id, 'busy');
    expect((await results(b.id)).body.data.status).toBe('pending');
    await moveCall(t.deps, calls[2].id, 'answered');
    await moveCall(t.deps, calls[2].id, 'completed');
    expect((await results(b.id)).body.data.status).toBe('completed');

    const { batch: c } = await insertBatch(t.deps, a, { contacts: 2, status: 'cancelled', callOverrides: () => ({ status: 'cancelled' }) });
    expect((await results(c.id)).body.data.status).toBe('cancelled');
    // Cancelled wins even while an in-flight call is still finishing.
    const { batch: d } = await insertBatch(t.deps, a, {
      contacts: 2,
      status: 'cancelled',
      callOverrides: (i) => ({ status: i ? 'cancelled' : 'in_progress' }),
    });
    expect((await results(d.id)).body.data.status).toBe('cancelled');
    // A batch with nothing left to call is completed even before the worker marks it.
    const { batch: e } = await insertBatch(t.deps, a, { contacts: 0, status: 'paused' });
    expect((await results(e.id)).body.data).toEqual({
      status: 'completed',
      items: [],
      pagination: { page: 1, limit: 100, total: 0, has_more: false },
    });
  });

  it('404 for absent and foreign batches', async () => {
    for (const [id, key] of [
      [batch.batch.id, other.apiKey],
      ['sched_nope', a.apiKey],
    ]) {
      const res = await results(id, '?outcome=yes', key);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ detail: 'Call batch not found' });
    }
  });

  it('401 detail without a valid key', async () => {
    for (const key of [null, 'sk_wrongwrongwrongwrongwrongwrongwrongwrong', 'Bearer']) {
      const res = await results(batch.batch.id, '?outcome=yes', key);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ detail: 'Invalid API key' });
    }
  });

  it('bad query values: 422 envelope', async () => {
    const res = await results(batch.batch.id, '?transcript_status=done&status=ok&limit=300');
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      status_code: 422,
      message: 'Missing required parameter',
      error: {
        code: 'MISSING_PARAMETER',
        details: [
          "query.status: Input should be 'pending', 'queued', 'ringing', 'answered', 'in_progress', 'completed', 'failed', 'no_answer', 'busy' or 'cancelled'",
          "query.transcript_status: Input should be 'pending', 'processing', 'ready', 'failed' or 'completed'",
          'query.limit: Input should be less than or equal to 200',
        ],
      },
      data: null,
    });
  });
});
