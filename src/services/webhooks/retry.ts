// When to try a failed delivery again. Exponential-ish schedule (default 5 s, 5 min, 30 min, 2 h,
// 5 h, 10 h: ~18 h in all) with jitter so a receiver coming back isn't hit by every queued event
// in the same second; a receiver's Retry-After is a floor, never shortened.

/** Jitter spreads each delay over [delay, delay × (1 + JITTER)]. */
export const JITTER = 0.2;
/** A Retry-After beyond this is treated as this (a receiver can't park events for weeks). */
export const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

export interface RetryDecision {
  /** null: no attempts left, the delivery is `failed`. */
  nextAttemptAt: Date | null;
}

/**
 * `attempts` counts attempts made so far (the failed one included). Attempt n+1 waits
 * schedule[n-1]; after schedule.length retries the delivery fails.
 */
export function nextAttempt(
  now: Date,
  attempts: number,
  scheduleSeconds: readonly number[],
  retryAfterMs: number | null,
  random: () => number = Math.random,
): RetryDecision {
  if (attempts > scheduleSeconds.length) return { nextAttemptAt: null };
  const base = scheduleSeconds[attempts - 1]! * 1000;
  const jittered = base * (1 + JITTER * random());
  const floor = retryAfterMs == null ? 0 : Math.min(retryAfterMs, MAX_RETRY_AFTER_MS);
  return { nextAttemptAt: new Date(now.getTime() + Math.round(Math.max(jittered, floor))) };
}

/** Retry-After as delta-seconds or an HTTP date; null when absent or unparsable. */
export function parseRetryAfter(value: string | string[] | undefined, now: Date): number | null {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return null;
  const t = v.trim();
  if (/^\d+$/.test(t)) return Number(t) * 1000;
  const at = Date.parse(t);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - now.getTime());
}
