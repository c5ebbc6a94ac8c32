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
