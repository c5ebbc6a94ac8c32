// One statement on the raw driver, outside any explicit transaction (a statement is atomic on its
// own). Hot paths use it where a BEGIN/COMMIT pair would only add two round trips.
import crypto from 'node:crypto';
import type pg from 'pg';
import type { Database } from './client.ts';
import type { SqlTx } from './sql-transaction.ts';

/**
 * A statement whose text is a module constant, prepared once per pooled PostgreSQL connection and
 * then only bound and run: for hot point lookups, whose planning cost PostgreSQL more CPU than
 * their execution (the batch-details read: 0.13-0.14 against 0.05 ms of PostgreSQL's CPU a request). Only
 * constant texts, so each connection holds a bounded set; only lookups by key, whose plan does not
 * depend on the values (a generic plan of a range read could suit one batch size and not another).
 */
export interface FixedStatement {
  readonly text: string;
  /** Named by the text's hash: two texts never share a name. */
  readonly name: string;
}

export function fixedStatement(text: string): FixedStatement {
  return { text, name: `fixed_${crypto.createHash('sha256').update(text).digest('hex').slice(0, 24)}` };
}

export async function runStatement<T = Record<string, unknown>>(db: Database, sql: string | FixedStatement, params: unknown[] = []): Promise<T[]> {
  const text = typeof sql === 'string' ? sql : sql.text;
  if (db.pglite) return (await db.pglite.query<T>(text, params)).rows;
  const pool = db.pool;
  if (!pool) throw new Error('runStatement: the database exposes no raw driver');
  const unprepared = async () => (await pool.query(text, params)).rows as T[];
  if (typeof sql === 'string') return unprepared();
  try {
    return (await pool.query({ name: sql.name, text, values: params })).rows as T[];
  } catch (e) {
    if (!isStalePreparation(e)) throw e;
    // Refused before it ran, on a connection the pool has now dropped: once more, unprepared.
    return unprepared();
  }
}

/**
 * A connection's prepared statement that no longer fits: a migration changed the type of a column
 * it returns, or a pooler reset the session. PostgreSQL refuses it before running anything.
 */
function isStalePreparation(e: unknown): boolean {
  const { code, message } = (e ?? {}) as { code?: string; message?: string };
  return code === '26000' || (code === '0A000' && message === 'cached plan must not change result type');
}

/** The same, shaped like a transaction handle, for code that runs either way. */
export const autocommit = (db: Database): SqlTx => ({ query: (sql, params) => runStatement(db, sql, params) });

/**
 * Statements on a pooled connection that is spare at that moment (idle, or one the pool may still
 * open), else on `busy` (a transaction's own, say), which runs them after what it is doing. It
 * never waits for the pool: a caller that holds a connection and waited for a second one could
 * deadlock a pool that concurrent callers have drained the same way.
 */
export function spareConnectionOr(db: Database, busy: SqlTx): SqlTx {
  const pool = db.pool;
  if (db.pglite || !pool) return busy;
  return {
    query: async (sql, params) => {
      // Opening one may fail (the server's connection limit, say): the busy one still works.
      const client = hasSpareConnection(pool) ? await pool.connect().catch(() => null) : null;
      if (!client) return busy.query(sql, params);
      // A dropped connection's error is also emitted on the client: heard here, not uncaught (sql-transaction.ts).
      const onLost = () => {};
      client.on('error', onLost);
      try {
        const { rows } = await client.query(sql, params);
        client.off('error', onLost);
        client.release();
        return rows as never;
      } catch (e) {
        client.off('error', onLost);
        client.release(e as Error);
        throw e;
      }
    },
  };
}

/**
 * pg-pool hands idle clients out a tick later, first come first served: an idle client is ours
 * only if it is not already promised to a caller queued before us. With none idle and none
 * queued, a pool below its size opens a new one for us at once.
 */
function hasSpareConnection(pool: pg.Pool): boolean {
  return pool.idleCount > pool.waitingCount || (pool.waitingCount === 0 && pool.totalCount < (pool.options.max ?? 10));
}
