// A transaction on the raw driver under Prisma (pg pool client or PGlite), for bulk statements
// whose array parameters Prisma's raw-query path would serialise several times slower.
import type { Database } from './client.ts';
import { copyRowsPg, copyRowsPglite, type CopyRows } from './copy-rows.ts';

export interface SqlTx {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
}

/** An explicit transaction also takes COPY of rows in the binary format (copy-rows.ts). */
export interface SqlTransaction extends SqlTx {
  copyRows: CopyRows;
}

/**
 * Runs `fn` in one transaction: committed when it resolves, rolled back when it throws.
 * `fn` must not use Prisma: on PGlite this holds the only session, so a Prisma call would wait
 * for this transaction forever.
 */
export async function withSqlTransaction<T>(db: Database, fn: (tx: SqlTransaction) => Promise<T>): Promise<T> {
  if (db.pglite) {
    return db.pglite.transaction(async (tx) =>
      fn({ query: async <R>(sql: string, params?: unknown[]) => (await tx.query<R>(sql, params)).rows, copyRows: copyRowsPglite(tx) }),
    );
  }
  if (!db.pool) throw new Error('withSqlTransaction: the database exposes no raw driver');
  const client = await db.pool.connect();
  let broken: Error | undefined;
  // pg emits a dropped connection's error on a checked-out client too, and the pool listens only
  // to idle ones: unheard, it would be an uncaught exception (a database outage would end the process).
  const onLost = (e: Error) => {
    broken ??= e;
  };
  client.on('error', onLost);
  try {
    await client.query('BEGIN');
  } catch (e) {
    client.off('error', onLost);
    client.release(e as Error);
    throw e;
  }
  try {
    const result = await fn({
      query: async <R>(sql: string, params?: unknown[]) => (await client.query(sql, params)).rows as R[],
      copyRows: copyRowsPg(client),
    });
    await client.query('COMMIT');
    return result;
  } catch (e) {
    await client.query('ROLLBACK').catch((rollbackError: Error) => {
      broken = rollbackError;
    });
    throw e;
  } finally {
    // A connection that could not roll back (or broke) is discarded rather than handed to the next caller.
    client.off('error', onLost);
    client.release(broken);
  }
}

/** PostgreSQL broke a deadlock by failing this side (SQLSTATE 40P01): the caller may try again. */
export const isDeadlock = (e: unknown) => (e as { code?: string } | null)?.code === '40P01';
