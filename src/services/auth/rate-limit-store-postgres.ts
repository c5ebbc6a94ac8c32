import type { Database } from '../../db/client.ts';
import type { RateLimitStore } from './rate-limit-store.ts';

/**
 * Counters in `rate_limit_windows`, shared by every API process on the database. One statement
 * per request: the upsert takes the row lock, so concurrent processes never over-admit.
 */
export class DatabaseRateLimitStore implements RateLimitStore {
  constructor(private readonly db: Database) {}

  async take(key: string, windowStart: Date, limit: number): Promise<number | null> {
    // A full window is left untouched (no row returned), so refused requests don't inflate it.
    const rows = await this.db.prisma.$queryRaw<Array<{ count: number }>>`
      INSERT INTO rate_limit_windows (key, window_start, count)
      VALUES (${key}, ${windowStart.toISOString()}::timestamptz, 1)
      ON CONFLICT (key, window_start) DO UPDATE SET count = rate_limit_windows.count + 1
        WHERE rate_limit_windows.count < ${limit}::int
      RETURNING count`;
    return rows.length ? Number(rows[0].count) : null;
  }

  async peek(key: string, windowStart: Date): Promise<number> {
    const rows = await this.db.prisma.$queryRaw<Array<{ count: number }>>`
      SELECT count FROM rate_limit_windows WHERE key = ${key} AND window_start = ${windowStart.toISOString()}::timestamptz`;
    return rows.length ? Number(rows[0].count) : 0;
  }

  async prune(before: Date): Promise<void> {
    await this.db.prisma.$executeRaw`DELETE FROM rate_limit_windows WHERE window_start < ${before.toISOString()}::timestamptz`;
  }
}
