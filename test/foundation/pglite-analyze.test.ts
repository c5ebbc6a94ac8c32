// PGlite's analyse job (src/db/pglite-analyze.ts): PGlite has no autovacuum, so a table is never
// analysed unless the job does it. A batch of 30,000 calls: before, the planner has no statistics
// and reads a deep page of the batch by sorting all of it; the job analyses the tables whose rows
// changed, after which the same page walks the (batch_id, seq) index; a second turn finds nothing to do.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { insertBatch } from '../helpers/fixtures.ts';
import { waitFor } from '../helpers/wait.ts';
import { runStatement } from '../../src/db/sql-statement.ts';
import { analyzeChangedTables } from '../../src/db/pglite-analyze.ts';

const CALLS = 30_000;
let t: TestApp;
let a: SeededAccount;
let batchId = '';

beforeAll(async () => {
  t = await createTestApp({ postgres: false });
  a = await t.seedAccount();
  const { batch } = await insertBatch(t.deps, a, { contacts: 1, status: 'completed' });
  batchId = batch.id;
  await runStatement(
    t.deps.db,
    `INSERT INTO calls (id, account_id, batch_id, agent_id, prompt_version_id, seq, external_id, phone_number, status, created_at)
     SELECT 'call_an_' || i, c.account_id, c.batch_id, c.agent_id, c.prompt_version_id, i, 'contact-' || i, '+1415555' || lpad((1000 + i % 9000)::text, 4, '0'), 'completed', c.created_at
       FROM generate_series(2, $1::int) i, calls c WHERE c.batch_id = $2`,
    [CALLS, batchId],
  );
}, 120_000);
afterAll(() => t.close());

const reltuples = async () =>
  (await runStatement<{ n: number }>(t.deps.db, `SELECT reltuples::float8 AS n FROM pg_class WHERE relname = 'calls'`))[0].n;
const deepPagePlan = async () =>
  (
    await runStatement<{ 'QUERY PLAN': string }>(
      t.deps.db,
      `EXPLAIN SELECT * FROM calls c WHERE c.batch_id = $1 ORDER BY c.seq DESC LIMIT 50 OFFSET 20000`,
      [batchId],
    )
  )
    .map((r) => r['QUERY PLAN'])
    .join('\n');

it('analyses the tables whose rows changed, so a deep page walks the index instead of sorting the batch; then has nothing to do', async () => {
  expect(t.deps.db.kind).toBe('pglite');
  expect(await reltuples()).toBe(-1);
  expect(await deepPagePlan()).toMatch(/Sort/);

  // The change counts reach pg_stat_user_tables within about a second of the commit.
  await waitFor(async () => (await analyzeChangedTables(t.deps.db)).some((n) => n.endsWith('.calls')), {
    intervalMs: 200,
    what: 'the calls table to be analysed',
  });
  expect(Math.abs((await reltuples()) - CALLS)).toBeLessThan(CALLS * 0.1);
  const plan = await deepPagePlan();
  expect(plan).not.toMatch(/Sort/);
  expect(plan).toMatch(/Index Scan Backward using calls_batch_id_seq_idx/);

  expect(await analyzeChangedTables(t.deps.db)).toEqual([]);
}, 120_000);
