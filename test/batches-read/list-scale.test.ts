// The batch list at scale: a relay cursor starts a range of (account_id, created_at DESC, id DESC)
// at the cursor (no walk from the newest batch, no sort), and the REST/GraphQL totals come from the
// counters the triggers of migration batch_counts keep (no count of the list) while staying exact
// through creates, status changes, a create rolled back, and retention's deletes. Call records:
// page 1 reads one page of batches, the total the per-day counters of migration call_record_counts.
//
// 20,000 batches: seeded in one statement, enough that a sort or a count of the list shows in the
// plans checked below; the figures at 100,000 and 1,000,000 are in docs/indexes.md.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planOf, statementsOf } from '../helpers/statement-plans.ts';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { batchBody, CALL_BATCHES } from '../helpers/batch-requests.ts';
import { insertBatch } from '../helpers/fixtures.ts';
import { runStatement } from '../../src/db/sql-statement.ts';
import { ACTIVE_FILTER_STATUSES } from '../../src/domain/batch-state.ts';
import { pruneFinishedBatches } from '../../src/services/retention/prune-batches.ts';
import { SEEK_STEP } from '../../src/services/page-rows.ts';

const ROWS = 20_000;
/** Batches sharing one created_at: the cursor must order them by id and lose none. */
const TIE = 4;
const START_MS = Date.parse('2026-01-01T00:00:00.000Z');
const STATUSES = ['completed', 'cancelled', 'running', 'pending'] as const;
const INDEX = 'batches_account_id_created_at_id_idx';

let t: TestApp;
let a: SeededAccount;
let other: SeededAccount;
/** Account a's batch ids newest first (BATCH_ORDER), read from the table. */
let order: string[];

async function seedClones(template: string, accountId: string, n: number, prefix = 'sched_scale_') {
  const cols = (
    await runStatement<{ c: string }>(
      t.deps.db,
      `SELECT column_name AS c FROM information_schema.columns WHERE table_name = 'batches' AND table_schema = current_schema() ORDER BY ordinal_position`,
    )
  ).map((r) => r.c);
  const replaced: Record<string, string> = {
    id: `'${prefix}' || lpad(g::text, 7, '0')`,
    created_at: `$2::timestamptz + (g / ${TIE}) * interval '1 second'`,
    idempotency_key: 'NULL',
    status: `(ARRAY['${STATUSES.join("','")}'])[1 + g % ${STATUSES.length}]`,
    completed_at: 'NULL',
    account_id: '$3',
  };
  const select = cols.map((c) => replaced[c] ?? `b."${c}"`).join(', ');
  await runStatement(
    t.deps.db,
    `INSERT INTO batches (${cols.map((c) => `"${c}"`).join(', ')})
     SELECT ${select} FROM batches b, generate_series(0, $4::int - 1) g WHERE b.id = $1`,
    [template, new Date(START_MS).toISOString(), accountId, n],
  );
}

const RECORDS = '/api/v1/public/call-records';
/** Call-record ranges whose totals are checked: whole UTC days, with and without an agent. */
const RECORD_RANGES: Record<string, (s: SeededAccount) => string> = {
  recordsAll: () => 'start_date=2025-12-31&end_date=2099-12-31',
  recordsSeedDay: () => 'start_date=2026-01-01&end_date=2026-01-01',
  recordsDayBefore: () => 'start_date=2025-12-31&end_date=2025-12-31',
  recordsAgent: (s) => `start_date=2026-01-01&end_date=2099-12-31&agent_id=${s.agent.id}&agent_id=agt-none`,
};
/** The same totals summed over the batches, as the list did before its counters. */
async function recordsTruth(accountId: string): Promise<Record<string, number>> {
  const sum = async (from: string, to: string, agent?: string) =>
    Number(
      (
        await runStatement<{ n: unknown }>(
          t.deps.db,
          `SELECT COALESCE(sum(accepted_contacts), 0)::bigint AS n FROM batches WHERE account_id = $1 AND created_at >= $2::timestamptz AND created_at < $3::timestamptz AND ($4::text IS NULL OR agent_id = $4)`,
          [accountId, from, to, agent ?? null],
        )
      )[0].n,
    );
  const agent = accountId === a.account.id ? a.agent.id : other.agent.id;
  return {
    recordsAll: await sum('2025-12-31', '2100-01-01'),
    recordsSeedDay: await sum('2026-01-01', '2026-01-02'),
    recordsDayBefore: await sum('2025-12-31', '2026-01-01'),
    recordsAgent: await sum('2026-01-01', '2100-01-01', agent),
  };
}

const trueCount = async (accountId: string, statuses?: string[]) =>
  (
    await runStatement<{ n: number }>(
      t.deps.db,
      'SELECT count(*)::int AS n FROM batches WHERE account_id = $1 AND ($2::text[] IS NULL OR status = ANY($2::text[]))',
      [accountId, statuses ?? null],
    )
  )[0].n;

beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount();
  other = await t.seedAccount();
  const { batch } = await insertBatch(t.deps, a, { contacts: 1, status: 'completed', createdAt: new Date(START_MS - 1000) });
  await seedClones(batch.id, a.account.id, ROWS);
  // Another account's batches, at the same instants, must never show up nor count.
  await seedClones(batch.id, other.account.id, 10, 'sched_other_');
  // PostgreSQL's autovacuum would analyse the table; PGlite's worker does later, and plans must hold without statistics.
  if (t.deps.db.kind === 'postgres') await runStatement(t.deps.db, 'ANALYZE batches');
  order = (
    await runStatement<{ id: string }>(t.deps.db, 'SELECT id FROM batches WHERE account_id = $1 ORDER BY created_at DESC, id DESC', [a.account.id])
  ).map((r) => r.id);
}, 180_000);
afterAll(() => t.close());

/** The connection's cursor of a batch id, in the plugin's own encoding (taken from a real cursor). */
async function cursorOf(id: string): Promise<string> {
  const r = await t.gql('{ batchesConnection(first: 1) { edges { cursor node { id } } } }', {}, a.apiKey);
  const [edge] = r.body.data.batchesConnection.edges;
  const raw = Buffer.from(edge.cursor, 'base64').toString('utf8');
  expect(raw).toContain(edge.node.id);
  return Buffer.from(raw.replace(edge.node.id, id), 'utf8').toString('base64');
}

const CONNECTION = `query($first: Int, $after: String, $last: Int, $before: String, $filter: CallBatchFilter) {
  batchesConnection(first: $first, after: $after, last: $last, before: $before, filter: $filter) {
    totalCount edges { node { id status } } pageInfo { hasNextPage hasPreviousPage }
  }
}`;
const connection = async (vars: Record<string, unknown>, key = a.apiKey) => {
  const r = await t.gql(CONNECTION, vars, key);
  expect(r.body.errors).toBeUndefined();
  return r.body.data.batchesConnection as {
    totalCount: number;
    edges: { node: { id: string; status: string } }[];
    pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean };
  };
};
const idsOf = (c: { edges: { node: { id: string } }[] }) => c.edges.map((e) => e.node.id);

describe('the batch list at 20,000 batches', () => {
  it('pages the connection from a deep cursor, forwards and backwards, through created_at ties', async () => {
    // Inside a group of batches sharing a created_at.
    const at = ROWS - 302;
    const after = await connection({ first: 50, after: await cursorOf(order[at]!) });
    expect(idsOf(after)).toEqual(order.slice(at + 1, at + 51));
    expect(after.pageInfo.hasNextPage).toBe(true);
    const tail = await connection({ first: 50, after: await cursorOf(order[ROWS - 11]!) });
    expect(idsOf(tail)).toEqual(order.slice(ROWS - 10 + 1 - 1));
    expect(tail.pageInfo.hasNextPage).toBe(false);
    const before = await connection({ last: 20, before: await cursorOf(order[at]!) });
    expect(idsOf(before)).toEqual(order.slice(at - 20, at));
    expect(before.pageInfo.hasPreviousPage).toBe(true);
    const completed = order.filter((_, i) => i >= at && STATUSES[Number(order[i]!.slice(-7)) % STATUSES.length] === 'completed');
    const filtered = await connection({ first: 10, after: await cursorOf(order[at]!), filter: { status: 'COMPLETED'.toLowerCase() } });
    // The cursor's own batch (running here) is not in the filter: the page is the 10 after it, none skipped.
    expect(idsOf(filtered)).toEqual(completed.filter((id) => id !== order[at]).slice(0, 10));
    // Another account's batch as a cursor reads nothing.
    expect(idsOf(await connection({ first: 5, after: await cursorOf('sched_other_0000001') }))).toEqual([]);
  });

  it('starts the cursor page at the cursor in the index: no sort, no scan of the table', async () => {
    const cursor = await cursorOf(order[ROWS - 500]!);
    const seen = await statementsOf(t.deps.db, /\(b\.created_at, b\.id\)/, () => connection({ first: 100, after: cursor }));
    expect(seen).toHaveLength(1);
    const nodes = await planOf(t.deps.db, seen[0]!);
    expect(nodes.filter((n) => n['Node Type'] === 'Sort')).toEqual([]);
    expect(nodes.filter((n) => n['Node Type'] === 'Seq Scan')).toEqual([]);
    const listScans = nodes.filter((n) => n['Relation Name'] === 'batches' && n.Alias === 'b');
    expect(listScans.map((n) => n['Index Name'])).toEqual([INDEX]);
    // The cursor bounds the range itself (an index condition), not a filter on rows walked from the newest.
    expect(listScans[0]).toMatchObject({ 'Index Cond': expect.stringMatching(/created_at, .*id\) < /) });
  });

  it('walks a deep offset in steps of at most SEEK_STEP entries, the page the same as one OFFSET would read', async () => {
    const limit = 200;
    for (const page of [11, 12, 51, Math.ceil(ROWS / limit)]) {
      const seen = await statementsOf(t.deps.db, /FROM batches b/, async () => {
        const res = await t.request('GET', `${CALL_BATCHES}?limit=${limit}&page=${page}`, { key: a.apiKey });
        expect(res.body.data.items.map((i: { batch_id: string }) => i.batch_id)).toEqual(order.slice((page - 1) * limit, page * limit));
      });
      // One statement per whole step before the page, then the page; none offsets past a step.
      expect(seen).toHaveLength(Math.ceil(((page - 1) * limit) / SEEK_STEP));
      for (const s of seen) expect(Number(s.values.at(-1))).toBeLessThanOrEqual(SEEK_STEP);
    }
    // A status filter steps through its own rows; past the end the page is empty, the total exact.
    const active = (
      await runStatement<{ id: string }>(
        t.deps.db,
        'SELECT id FROM batches WHERE account_id = $1 AND status = ANY($2::text[]) ORDER BY created_at DESC, id DESC',
        [a.account.id, [...ACTIVE_FILTER_STATUSES]],
      )
    ).map((r) => r.id);
    const deep = await t.request('GET', `${CALL_BATCHES}?limit=100&status=active&page=45`, { key: a.apiKey });
    expect(deep.body.data.items.map((i: { batch_id: string }) => i.batch_id)).toEqual(active.slice(4_400, 4_500));
    const past = await t.request('GET', `${CALL_BATCHES}?limit=200&page=${Math.ceil(ROWS / 200) + 30}&created_at_from=2000-01-01T00:00:00Z`, {
      key: a.apiKey,
    });
    expect(past.body.data.items).toEqual([]);
    expect(past.body.data.pagination.total).toBe(ROWS + 1);
  });

  it('answers totals from the counters, never counting the list, unless filtered by agent or created_at', async () => {
    const seen = await statementsOf(t.deps.db, /batch/, async () => {
      await t.request('GET', `${CALL_BATCHES}?limit=5`, { key: a.apiKey });
      await t.request('GET', `${CALL_BATCHES}?limit=5&status=active&page=3`, { key: a.apiKey });
      await connection({ first: 5 });
    });
    expect(seen.filter((s) => /count\(/i.test(s.text) && /FROM "?(public"\.)?"?batches"? /i.test(s.text))).toEqual([]);
    expect(seen.filter((s) => /FROM batch_counts/.test(s.text))).toHaveLength(3);
    // An agent filter still counts its index range, exactly.
    const byAgent = await t.request('GET', `${CALL_BATCHES}?limit=1&agent_id=${a.agent.id}`, { key: a.apiKey });
    expect(byAgent.body.data.pagination.total).toBe(ROWS + 1);
  });

  it('reads call records page 1 from one page of batches, the total from the day counters', async () => {
    const seen = await statementsOf(t.deps.db, /batches b|call_record_counts/, () =>
      t.request('GET', `${RECORDS}?start_date=2026-01-01&end_date=2026-01-01&page_size=50`, { key: a.apiKey }),
    );
    const page = seen.filter((s) => /OVER \(ORDER BY/.test(s.text));
    expect(page).toHaveLength(1);
    expect(seen.filter((s) => /FROM call_record_counts/.test(s.text))).toHaveLength(1);
    // No statement sums or counts the range's 20,000 batches.
    expect(seen.filter((s) => /sum\(b\.accepted_contacts\), 0\)|count\(/.test(s.text))).toEqual([]);
    const nodes = await planOf(t.deps.db, { ...page[0]!, text: page[0]!.text }, true);
    expect(nodes.filter((n) => n['Node Type'] === 'Sort')).toEqual([]);
    const scans = nodes.filter((n) => n['Relation Name'] === 'batches');
    expect(scans.map((n) => n['Index Name'])).toEqual([INDEX]);
    // One page's batches read (each holds one call here), not the range's 20,000.
    expect(scans[0]!['Actual Rows']).toBeLessThanOrEqual(51);
  });

  it('keeps the totals exact through creates, status changes, a failed create and retention, one account apart', async () => {
    const totals = async (key = a.apiKey) => {
      const out: Record<string, number> = {};
      for (const s of ['', 'pending', 'active', 'completed', 'cancelled']) {
        const r = await t.request('GET', `${CALL_BATCHES}?limit=1${s ? `&status=${s}` : ''}`, { key });
        expect(r.status).toBe(200);
        out[s || 'all'] = r.body.data.pagination.total;
      }
      out.connection = (await connection({ first: 1 }, key)).totalCount;
      for (const [name, q] of Object.entries(RECORD_RANGES)) {
        const r = await t.request('GET', `${RECORDS}?page_size=1&${q(key === a.apiKey ? a : other)}`, { key });
        expect(r.status).toBe(200);
        out[name] = r.body.data.pagination.total;
      }
      return out;
    };
    const truth = async (accountId = a.account.id): Promise<Record<string, number>> => {
      const all = await trueCount(accountId);
      return {
        all,
        pending: await trueCount(accountId, ['pending']),
        active: await trueCount(accountId, [...ACTIVE_FILTER_STATUSES]),
        completed: await trueCount(accountId, ['completed']),
        cancelled: await trueCount(accountId, ['cancelled']),
        connection: all,
        ...(await recordsTruth(accountId)),
      };
    };
    expect(await totals()).toEqual(await truth());
    expect((await truth()).all).toBe(ROWS + 1);
    // The template batch is the day before (23:59:59 UTC), the clones on the day: days split exactly.
    expect(await recordsTruth(a.account.id)).toMatchObject({ recordsAll: ROWS + 1, recordsSeedDay: ROWS, recordsDayBefore: 1 });

    const created = await t.request('POST', CALL_BATCHES, { key: a.apiKey, body: batchBody(a, { start_mode: 'manual' }) });
    expect(created.status).toBe(201);
    const refused = await t.request('POST', CALL_BATCHES, {
      key: a.apiKey,
      body: batchBody(a, { contacts: [{ contact_id: 'x', phone_number: 'nope' }] }),
    });
    expect(refused.status).toBe(422);
    expect(await totals()).toEqual(await truth());
    expect((await truth()).all).toBe(ROWS + 2);
    expect((await truth()).recordsAll).toBe(ROWS + 1 + 2);

    const cancelled = await t.request('POST', `${CALL_BATCHES}/${created.body.data.batch_id}/cancel`, { key: a.apiKey });
    expect(cancelled.status).toBe(200);
    // Status changes by statement, many batches at once, as the worker starts due batches.
    await runStatement(t.deps.db, `UPDATE batches SET status = 'completed' WHERE id = ANY($1::text[])`, [order.slice(0, 5_000)]);
    expect(await totals()).toEqual(await truth());

    // Retention deletes finished batches whose last call ended long ago.
    const old = order.slice(100, 130);
    await runStatement(t.deps.db, `UPDATE batches SET status = 'cancelled', completed_at = '2020-01-01T00:00:00Z' WHERE id = ANY($1::text[])`, [old]);
    const pruned = await pruneFinishedBatches({ ...t.deps, config: { ...t.deps.config, BATCH_RETENTION_DAYS: 30 } });
    // The 30, and the seeded template batch (completed in January) with them.
    expect(pruned.batches).toBe(31);
    const after = await truth();
    expect(after.all).toBe(ROWS + 2 - 31);
    expect(await totals()).toEqual(after);

    expect(await totals(other.apiKey)).toEqual(await truth(other.account.id));
    expect((await truth(other.account.id)).all).toBe(10);
  });
});
