import type { Database } from '../../db/client.ts';
import { fixedStatement, runStatement } from '../../db/sql-statement.ts';
import type { RateLimitStore } from './rate-limit-store.ts';

/** One request waiting for its count. */
interface Waiter {
  resolve(count: number | null): void;
  reject(err: unknown): void;
}

/** The takes of one (key, window, limit) in this store: at most one statement in flight, the rest wait in `queue`. */
interface Lane {
  queue: Waiter[];
}

// A full window is left untouched (no row returned), so refused requests don't inflate it.
const TAKE_ONE_SQL = fixedStatement(`
INSERT INTO rate_limit_windows (key, window_start, count) VALUES ($1, $2::timestamptz, 1)
ON CONFLICT (key, window_start) DO UPDATE SET count = rate_limit_windows.count + 1
  WHERE rate_limit_windows.count < $3::int
RETURNING count`);

// n requests at once, all or none: a row comes back only if all n fit under the limit.
const TAKE_MANY_SQL = fixedStatement(`
INSERT INTO rate_limit_windows (key, window_start, count) SELECT $1, $2::timestamptz, $3::int WHERE $3::int <= $4::int
ON CONFLICT (key, window_start) DO UPDATE SET count = rate_limit_windows.count + $3::int
  WHERE rate_limit_windows.count + $3::int <= $4::int
RETURNING count`);

const PEEK_SQL = fixedStatement(`SELECT count FROM rate_limit_windows WHERE key = $1 AND window_start = $2::timestamptz`);

/**
 * Counters in `rate_limit_windows`, shared by every API process on the database. Every take is an
 * atomic upsert under the row's lock, so concurrent processes never over-admit. Within a process,
 * the takes of one key that arrive while its statement runs are counted together by the next one
 * (a busy account costs a statement per round trip, not per request); a group that does not fit
 * whole goes one by one, so the count stops exactly at the limit.
 */
export class DatabaseRateLimitStore implements RateLimitStore {
  private readonly lanes = new Map<string, Lane>();

  constructor(private readonly db: Database) {}

  take(key: string, windowStart: Date, limit: number): Promise<number | null> {
    const id = `${limit}:${windowStart.getTime()}:${key}`;
    return new Promise((resolve, reject) => {
      const lane = this.lanes.get(id);
      if (lane) {
        lane.queue.push({ resolve, reject });
        return;
      }
      const created: Lane = { queue: [{ resolve, reject }] };
      this.lanes.set(id, created);
      void this.drain(id, created, key, windowStart.toISOString(), limit);
    });
  }

  private async drain(id: string, lane: Lane, key: string, windowStart: string, limit: number): Promise<void> {
    try {
      while (lane.queue.length) {
        const group = lane.queue.splice(0);
        try {
          await this.takeGroup(group, key, windowStart, limit);
        } catch (err) {
          for (const w of group) w.reject(err);
        }
      }
    } finally {
      this.lanes.delete(id);
    }
  }

  private async takeGroup(group: Waiter[], key: string, windowStart: string, limit: number): Promise<void> {
    if (group.length > 1) {
      const [row] = await runStatement<{ count: number }>(this.db, TAKE_MANY_SQL, [key, windowStart, group.length, limit]);
      if (row) {
        const first = Number(row.count) - group.length;
        group.forEach((w, i) => w.resolve(first + i + 1));
        return;
      }
    }
    // Alone, or a group that would pass the limit: one at a time until the window is full (it stays full).
    for (let i = 0; i < group.length; i++) {
      const [row] = await runStatement<{ count: number }>(this.db, TAKE_ONE_SQL, [key, windowStart, limit]);
      if (row) {
        group[i].resolve(Number(row.count));
        continue;
      }
      for (const w of group.slice(i)) w.resolve(null);
      return;
    }
  }

  async peek(key: string, windowStart: Date): Promise<number> {
    const [row] = await runStatement<{ count: number }>(this.db, PEEK_SQL, [key, windowStart.toISOString()]);
    return row ? Number(row.count) : 0;
  }

  async prune(before: Date): Promise<void> {
    await runStatement(this.db, `DELETE FROM rate_limit_windows WHERE window_start < $1::timestamptz`, [before.toISOString()]);
  }
}
