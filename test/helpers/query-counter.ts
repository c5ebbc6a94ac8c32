// Counts the SQL statements that reach the driver (PGlite or the pg pool), beneath Prisma: one
// Prisma operation with relations can be several statements, and those are what N+1 is about.
import type { Database } from '../../src/db/client.ts';

export interface QueryCounter {
  readonly count: number;
  readonly statements: string[];
  reset(): void;
  stop(): void;
}

export function countQueries(db: Database): QueryCounter {
  const statements: string[] = [];
  const target = (db.pglite ?? db.pool) as unknown as { query: (...args: unknown[]) => Promise<unknown> };
  if (!target) throw new Error('no driver to count queries on');
  const original = target.query;
  target.query = function (this: unknown, ...args: unknown[]) {
    const first = args[0];
    statements.push(typeof first === 'string' ? first : String((first as { text?: string })?.text ?? ''));
    return original.apply(this, args);
  };
  return {
    get count() {
      return statements.length;
    },
    statements,
    reset() {
      statements.length = 0;
    },
    stop() {
      target.query = original;
    },
  };
}
