import type { Database } from '../db/client.ts';

/** One statement on the raw driver, outside any transaction (reads only). */
export async function queryRows<T>(db: Database, sql: string, params: unknown[]): Promise<T[]> {
  if (db.pglite) return (await db.pglite.query<T>(sql, params)).rows;
  if (!db.pool) throw new Error('queryRows: the database exposes no raw driver');
  return (await db.pool.query(sql, params)).rows as T[];
}
