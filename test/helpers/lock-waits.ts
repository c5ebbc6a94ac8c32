// "B waits for A's open transaction", as a condition to wait for rather than a pause after which B
// is assumed to have got there: on PostgreSQL a backend of this database waits for a lock; on
// PGlite (one session) a statement is queued behind the transaction holding it.
import type { Database } from '../../src/db/client.ts';

export interface LockWaits {
  /** true once some statement waits behind another's transaction. */
  waiting(): Promise<boolean>;
  /** Removes the PGlite hook (no-op on PostgreSQL). */
  stop(): void;
}

/** Start before the statements that should end up waiting are issued. */
export function watchLockWaits(db: Database): LockWaits {
  if (db.pglite) {
    // Every PGlite statement and transaction enters through this lock (see src/db/pglite-turns.ts);
    // one that entered and has not started runs after whoever holds it.
    const host = db.pglite as unknown as { _runExclusiveTransaction<T>(fn: () => Promise<T>): Promise<T> };
    const original = host._runExclusiveTransaction;
    let queued = 0;
    host._runExclusiveTransaction = function <T>(fn: () => Promise<T>): Promise<T> {
      queued += 1;
      let started = false;
      const begin = () => {
        if (started) return;
        started = true;
        queued -= 1;
      };
      return (original.call(this, () => (begin(), fn())) as Promise<T>).finally(begin);
    };
    return {
      waiting: async () => queued > 0,
      stop: () => void (host._runExclusiveTransaction = original),
    };
  }
  return {
    waiting: async () => {
      const [row] = await db.prisma.$queryRaw<{ n: number }[]>`
        SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`;
      return (row?.n ?? 0) > 0;
    },
    stop: () => {},
  };
}
