// Counts the SQL statements that reach the driver (PGlite or the pg pool), beneath Prisma: one
// Prisma operation with relations can be several statements, and those are what N+1 is about.
import type pg from 'pg';
import type { Database } from '../../src/db/client.ts';

export interface QueryCounter {
  readonly count: number;
  readonly statements: string[];
  reset(): void;
  stop(): void;
}

export interface CountOptions {
  /**
   * Also count statements run inside raw driver transactions (PGlite `transaction()`, pg clients
   * checked out of the pool), where bulk writes happen. BEGIN and COMMIT/ROLLBACK count as
   * statements. Off by default, so the read-side counts stay what they were.
   */
  transactions?: boolean;
}

type QueryFn = (...args: unknown[]) => Promise<unknown>;

const textOf = (first: unknown) => (typeof first === 'string' ? first : String((first as { text?: string })?.text ?? ''));

export function countQueries(db: Database, opts: CountOptions = {}): QueryCounter {
  const statements: string[] = [];
  const restore: (() => void)[] = [];
  const record = (first: unknown) => statements.push(textOf(first));

  function patchQuery(target: { query: QueryFn }) {
    const hadOwn = Object.prototype.hasOwnProperty.call(target, 'query');
    const original = target.query;
    target.query = function (this: unknown, ...args: unknown[]) {
      record(args[0]);
      return original.apply(this, args);
    };
    restore.push(() => {
      if (hadOwn) target.query = original;
      else delete (target as { query?: QueryFn }).query;
    });
  }

  if (db.pglite) {
    patchQuery(db.pglite as unknown as { query: QueryFn });
    if (opts.transactions) {
      const pglite = db.pglite as unknown as { transaction: (fn: (tx: unknown) => Promise<unknown>) => Promise<unknown> };
      const original = pglite.transaction;
      pglite.transaction = function (this: unknown, fn: (tx: unknown) => Promise<unknown>) {
        return original.call(this, async (tx: unknown) => {
          statements.push('BEGIN');
          const counted = new Proxy(tx as object, {
            get(target, prop, receiver) {
              const value = Reflect.get(target, prop, receiver);
              if ((prop === 'query' || prop === 'exec') && typeof value === 'function') {
                return (...args: unknown[]) => {
                  record(args[0]);
                  return (value as QueryFn).apply(target, args);
                };
              }
              return value;
            },
          });
          try {
            const result = await fn(counted);
            statements.push('COMMIT');
            return result;
          } catch (e) {
            statements.push('ROLLBACK');
            throw e;
          }
        });
      };
      restore.push(() => {
        pglite.transaction = original;
      });
    }
  } else if (db.pool) {
    if (!opts.transactions) {
      patchQuery(db.pool as unknown as { query: QueryFn });
    } else {
      // pool.query checks a client out too, so counting every client's statements counts
      // everything exactly once.
      const pool = db.pool as unknown as { connect: (...args: unknown[]) => unknown };
      const patched = new Set<pg.PoolClient>();
      const patchClient = (client: pg.PoolClient | undefined) => {
        if (!client || patched.has(client)) return;
        patched.add(client);
        patchQuery(client as unknown as { query: QueryFn });
      };
      const original = pool.connect;
      pool.connect = function (this: unknown, ...args: unknown[]) {
        const cb = args[0];
        if (typeof cb === 'function') {
          return original.call(this, (err: Error | undefined, client: pg.PoolClient | undefined, done: unknown) => {
            patchClient(client);
            (cb as (...a: unknown[]) => void)(err, client, done);
          });
        }
        return (original.call(this) as Promise<pg.PoolClient>).then((client) => {
          patchClient(client);
          return client;
        });
      };
      restore.push(() => {
        pool.connect = original;
      });
    }
  } else {
    throw new Error('no driver to count queries on');
  }

  return {
    get count() {
      return statements.length;
    },
    statements,
    reset() {
      statements.length = 0;
    },
    stop() {
      for (const r of restore.reverse()) r();
      restore.length = 0;
    },
  };
}

/** The statements `run` sends, counted from its start to its end. */
export async function statementsDuring(db: Database, run: () => Promise<unknown>): Promise<string[]> {
  const counter = countQueries(db);
  try {
    await run();
    return [...counter.statements];
  } finally {
    counter.stop();
  }
}
