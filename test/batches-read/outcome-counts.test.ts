// The results' `?outcome=` total is read from call_outcome_counts (migration outcome_counts), kept
// by triggers on calls. It must equal counting the calls the filter's own condition matches, after
// inserts, every kind of update and deletes, for odd outcome shapes too (arrays, nested values,
// non-objects, long and non-ASCII values).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runStatement } from '../../src/db/sql-statement.ts';
import { Prisma } from '../../src/generated/prisma/client.ts';
import { outcomeTotal, outcomeWhere, type ResultFilter } from '../../src/services/batches/batch-results.ts';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { callInState, insertBatch, type CallFields } from '../helpers/fixtures.ts';
import { waitFor } from '../helpers/wait.ts';

let t: TestApp;
let a: SeededAccount;
const AT = new Date('2026-07-01T10:00:00.000Z');
const LONG = '界'.repeat(1_000);

const SHAPES: unknown[] = [
  { interested: 'yes', callback_requested: 'no' },
  { interested: 'no', callback_requested: 'yes' },
  { interested: 'yes', again: 'yes' },
  { interested: 'Yes' },
  ['yes'],
  'yes',
  { tags: ['vip', 'yes', ['deep']], nested: { inner: 'hidden' }, n: 5, s: '5', b: true, z: null },
  [{ a: 'in-array' }, 'top'],
  { note: 'say "hi" \\ now' },
  { note: 'naïve 🙂' },
  { note: LONG },
  { k: [['n2']] },
  {},
  Prisma.JsonNull,
  Prisma.DbNull,
];
const VALUES = ['yes', 'no', 'Yes', 'vip', 'deep', 'hidden', '5', 'in-array', 'top', 'say "hi" \\ now', 'naïve 🙂', LONG, 'n2', 'absent', 'ye'];
const FILTERS: Omit<ResultFilter, 'outcome'>[] = [
  {},
  { status: 'completed' },
  { transcriptStatus: 'ready' },
  { status: 'completed', transcriptStatus: 'processing' },
  { status: 'no_answer' },
];

beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount();
});
afterAll(() => t.close());

/** Every value and filter: the counters' total beside a count of the calls the filter matches. */
async function compare(batchId: string): Promise<void> {
  const got: string[] = [];
  const want: string[] = [];
  for (const value of VALUES) {
    for (const f of FILTERS) {
      const filter = { ...f, outcome: value };
      const sql = Prisma.sql`SELECT count(*)::int AS n FROM calls c WHERE ${outcomeWhere(batchId, filter)}`;
      const [{ n }] = await runStatement<{ n: number }>(t.deps.db, sql.text, sql.values);
      const label = `${value.slice(0, 12)} ${JSON.stringify(f)}`;
      want.push(`${label}: ${n}`);
      got.push(`${label}: ${await outcomeTotal(t.deps, batchId, filter)}`);
    }
  }
  expect(got).toEqual(want);
}

const calls = (n: number, start = 0): CallFields[] =>
  Array.from({ length: n }, (_, j) => {
    const i = start + j;
    const status = i % 5 === 4 ? 'no_answer' : 'completed';
    return { ...callInState(status, i, AT), outcomes: SHAPES[i % SHAPES.length] as never, transcriptStatus: i % 3 === 2 ? 'processing' : 'ready' };
  });

describe('the outcome counters', () => {
  it('equal the filtered count after inserts, updates and deletes', async () => {
    const { batch, calls: rows } = await insertBatch(t.deps, a, {
      contacts: 60,
      status: 'running',
      createdAt: AT,
      callOverrides: (i) => calls(60)[i],
    });
    const callIds = rows.map((c) => c.id);
    await compare(batch.id);

    // Outcomes replaced, cleared, given; status and transcript status moved with and without outcomes.
    const db = t.deps.db;
    await runStatement(db, `UPDATE calls SET outcomes = '{"interested":"no","extra":"vip"}'::jsonb WHERE id = ANY($1::text[])`, [
      callIds.slice(0, 10),
    ]);
    await runStatement(db, `UPDATE calls SET outcomes = NULL WHERE id = ANY($1::text[])`, [callIds.slice(10, 14)]);
    await runStatement(db, `UPDATE calls SET status = 'failed' WHERE id = ANY($1::text[])`, [callIds.slice(14, 24)]);
    await runStatement(db, `UPDATE calls SET transcript_status = NULL WHERE id = ANY($1::text[])`, [callIds.slice(24, 30)]);
    await runStatement(
      db,
      `UPDATE calls SET status = 'completed', transcript_status = 'ready', outcomes = '["yes", "no"]'::jsonb WHERE id = ANY($1::text[])`,
      [callIds.slice(30, 40)],
    );
    // One statement moving a call twice over is not possible; two statements in one transaction are.
    await t.deps.db.prisma.$transaction([
      t.deps.db.prisma.$executeRawUnsafe(`UPDATE calls SET outcomes = '{"a":"yes"}'::jsonb WHERE id = ANY($1::text[])`, callIds.slice(40, 50)),
      t.deps.db.prisma.$executeRawUnsafe(
        `UPDATE calls SET outcomes = '{"a":"no"}'::jsonb, status = 'busy' WHERE id = ANY($1::text[])`,
        callIds.slice(45, 55),
      ),
    ]);
    // Updates that do not touch the counted columns.
    await runStatement(db, `UPDATE calls SET lease_expires_at = now(), summary = 'x' WHERE id = ANY($1::text[])`, [callIds]);
    await compare(batch.id);

    await runStatement(db, `DELETE FROM calls WHERE id = ANY($1::text[])`, [callIds.slice(5, 35)]);
    await compare(batch.id);
  });

  it('keep batches apart, and go with their batch', async () => {
    const one = await insertBatch(t.deps, a, { contacts: 20, status: 'running', createdAt: AT, callOverrides: (i) => calls(20)[i] });
    const two = await insertBatch(t.deps, a, { contacts: 20, status: 'running', createdAt: AT, callOverrides: (i) => calls(20, 7)[i] });
    await compare(one.batch.id);
    await compare(two.batch.id);
    const rows = () =>
      runStatement<{ n: number }>(t.deps.db, 'SELECT count(*)::int AS n FROM call_outcome_counts WHERE batch_id = $1', [one.batch.id]);
    expect((await rows())[0].n).toBeGreaterThan(0);
    await runStatement(t.deps.db, 'DELETE FROM batches WHERE id = $1', [one.batch.id]);
    expect((await rows())[0].n).toBe(0);
    await compare(two.batch.id);
  });

  it('give the REST total and pages of ?outcome=, past the last page too', async () => {
    const { batch } = await insertBatch(t.deps, a, { contacts: 30, status: 'running', createdAt: AT, callOverrides: (i) => calls(30)[i] });
    const get = (q: string) => t.request('GET', `/api/v1/public/call-batches/${batch.id}/results${q}`, { key: a.apiKey });
    const sql = Prisma.sql`SELECT count(*)::int AS n FROM calls c WHERE ${outcomeWhere(batch.id, { outcome: 'yes', status: 'completed' })}`;
    const [{ n }] = await runStatement<{ n: number }>(t.deps.db, sql.text, sql.values);
    const first = await get('?outcome=yes&status=completed&limit=2');
    expect(first.body.data.pagination).toEqual({ page: 1, limit: 2, total: n, has_more: n > 2 });
    expect(first.body.data.items).toHaveLength(Math.min(2, n));
    const none = await get('?outcome=absent');
    expect(none.body.data.pagination).toEqual({ page: 1, limit: 100, total: 0, has_more: false });
    expect(none.body.data.items).toEqual([]);
  });
});

describe.skipIf(!process.env.TEST_DATABASE_URL)('two writers of one batch (PostgreSQL)', () => {
  it('moving counter rows in opposite orders wait for each other instead of deadlocking', async () => {
    const { batch, calls: rows } = await insertBatch(t.deps, a, {
      contacts: 4,
      status: 'running',
      createdAt: AT,
      callOverrides: (i) => ({ ...callInState('completed', i, AT), outcomes: Prisma.DbNull }),
    });
    const callIds = rows.map((c) => c.id);
    const pool = t.deps.db.pool!;
    const [x, y] = [await pool.connect(), await pool.connect()];
    try {
      await x.query('BEGIN');
      await y.query('BEGIN');
      // x moves the `yes` row, y the `no` row, then each the other's: without the batch's lock
      // each would hold a row the other waits for (PostgreSQL fails one of them as a deadlock).
      await x.query(`UPDATE calls SET outcomes = '{"k":"yes"}' WHERE id = $1`, [callIds[0]]);
      const yPid = (await y.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
      const other = (async () => {
        await y.query(`UPDATE calls SET outcomes = '{"k":"no"}' WHERE id = $1`, [callIds[2]]);
        await y.query(`UPDATE calls SET outcomes = '{"k":"yes"}' WHERE id = $1`, [callIds[3]]);
        await y.query('COMMIT');
      })();
      // y's first statement waits, in its trigger, for the batch's lock that x holds.
      await waitFor(
        async () => (await pool.query(`SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'`, [yPid])).rowCount === 1,
        {
          what: 'the second writer to wait for the batch lock',
        },
      );
      await x.query(`UPDATE calls SET outcomes = '{"k":"no"}' WHERE id = $1`, [callIds[1]]);
      await x.query('COMMIT');
      await other;
    } finally {
      x.release();
      y.release();
    }
    expect(await outcomeTotal(t.deps, batch.id, { outcome: 'yes' })).toBe(2);
    expect(await outcomeTotal(t.deps, batch.id, { outcome: 'no' })).toBe(2);
  });
});
