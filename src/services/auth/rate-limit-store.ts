// What a rate-limit counter store must do; implemented in memory and in the database.

/** Request counters per (key, window). Implementations must make `take` atomic. */
export interface RateLimitStore {
  /**
   * Counts one request for `key` in the window starting at `windowStart` unless the window already
   * holds `limit` (≥ 1); returns the count including this request, or null when refused.
   */
  take(key: string, windowStart: Date, limit: number): Promise<number | null>;
  /** Requests counted for `key` in that window (0 when none). */
  peek(key: string, windowStart: Date): Promise<number>;
  /** Forgets every window that started before `before`. */
  prune(before: Date): Promise<void>;
}
