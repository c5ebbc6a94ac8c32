// PGlite has no autovacuum, so without this its tables are never analysed and its planner guesses
// without statistics. Measured on PGlite at 100,000 calls in one batch (+20 batches of 1,000):
// calls page 1000 took 680-720 ms and results page 500 625-780 ms (whole-batch scans and sorts),
// 30-58 ms and 17-39 ms once analysed; batch details and first pages were already fast.
// This does autovacuum's analyse: a table is analysed once the rows changed since its last
// analysis pass autovacuum's default threshold (50 + 10 % of its rows), or when it has never been
// analysed but holds rows (after a restart that lost the statistics counters). ANALYZE samples
// 300 x the statistics target rows whatever a table's size, so at target 10 (3,000 rows) one table
// costs a bounded ~150 ms of the process's thread (calls at 122,000 rows; 206 ms for all 16 tables
// at once), and each table is its own statement with a turn of the event loop before it.
import type { Database } from './client.ts';
import { inBulkLane } from './pglite-turns.ts';
import { runStatement } from './sql-statement.ts';
import { withSqlTransaction } from './sql-transaction.ts';

/** Checked 10 s after start, then a minute after each check ends (docs/operations.md). */
export const PGLITE_ANALYZE_SCHEDULE = { firstAfterMs: 10_000, everyMs: 60_000 } as const;

/** The rows sampled per table are 300 times this (PostgreSQL's default is 100). */
export const PGLITE_STATISTICS_TARGET = 10;

// pg_stat counts reach the view within a second of a commit (the statistics flush interval).
const CHANGED_TABLES_SQL = `
SELECT format('%I.%I', n.nspname, c.relname) AS name
  FROM pg_class c
  JOIN pg_namespace n ON n.oid = c.relnamespace
  LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
 WHERE c.relkind = 'r' AND n.nspname = current_schema()
   AND ((c.reltuples < 0 AND pg_relation_size(c.oid) > 0)
        OR s.n_mod_since_analyze > 50 + 0.1 * GREATEST(c.reltuples, 0))
 ORDER BY c.relname`;

/** Analyses PGlite's tables whose rows changed enough since they were last analysed; their names. */
export async function analyzeChangedTables(db: Database): Promise<string[]> {
  if (db.kind !== 'pglite') return [];
  const tables = (await runStatement<{ name: string }>(db, CHANGED_TABLES_SQL)).map((r) => r.name);
  for (const name of tables) {
    // Each table on a turn of its own (pglite-turns.ts), after whatever requests are waiting.
    await inBulkLane(() =>
      withSqlTransaction(db, async (tx) => {
        await tx.query(`SET LOCAL default_statistics_target = ${PGLITE_STATISTICS_TARGET}`);
        await tx.query(`ANALYZE ${name}`);
      }),
    );
  }
  return tables;
}
