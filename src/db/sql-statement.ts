// One statement on the raw driver, outside any explicit transaction (a statement is atomic on its
// own). Hot paths use it where a BEGIN/COMMIT pair would only add two round trips.
import type { Database } from './client.ts';
import type { SqlTx } from './sql-transaction.ts';

export async function runStatement<T = Record<string, unknown>>(db: Database, sql: string, params: unknown[] = []): Promise<T[]> {
  if (db.pglite) return (await db.pglite.query<T>(sql, params)).rows;
  if (!db.pool) throw new Error('runStatement: the database exposes no raw driver');
  return (await db.pool.query(sql, params)).rows as T[];
}

/** The same, shaped like a transaction handle, for code that runs either way. */
export const autocommit = (db: Database): SqlTx => ({ query: (sql, params) => runStatement(db, sql, params) });

/**
 * Statements on a pooled connection that is idle at that moment, else on `busy` (a transaction's
 * own, say). It never waits for the pool: a caller that holds a connection and waited for a second
 * one could deadlock a pool that concurrent callers have drained the same way.
 */
export function spareConnectionOr(db: Database, busy: SqlTx): SqlTx {
  const pool = db.pool;
  if (db.pglite || !pool) return busy;
  return {
    // pg-pool queues connect() and hands idle clients out a tick later, first come first served:
    // an idle client is ours only if it is not already promised to a caller queued before us.
    query: async (sql, params) => (pool.idleCount > pool.waitingCount ? ((await pool.query(sql, params)).rows as never) : busy.query(sql, params)),
  };
}
