import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { JITTER, nextAttempt, parseRetryAfter } from '../../src/services/webhooks/retry.ts';

const schedule = loadConfig({}).WEBHOOK_RETRY_SCHEDULE;
const now = new Date('2030-01-01T00:00:00Z');
const delay = (attempts: number, random: number, retryAfter: number | null = null) => {
  const at = nextAttempt(now, attempts, schedule, retryAfter, () => random).nextAttemptAt;
  return at ? at.getTime() - now.getTime() : null;
};

describe('retry schedule', () => {
  it('defaults to 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, then gives up', () => {
    expect(schedule).toEqual([5, 300, 1800, 7200, 18000, 36000]);
    expect([1, 2, 3, 4, 5, 6].map((n) => delay(n, 0))).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000]);
    expect(delay(7, 0)).toBeNull();
  });

  it('adds up to JITTER of each delay', () => {
    expect(delay(2, 0.999)).toBeCloseTo(300_000 * (1 + JITTER * 0.999), -1);
    const spread = new Set(Array.from({ length: 50 }, () => nextAttempt(now, 3, schedule, null).nextAttemptAt!.getTime()));
    expect(spread.size).toBeGreaterThan(40);
    for (const t of spread) expect(t - now.getTime()).toBeGreaterThanOrEqual(1_800_000);
  });

  it('treats Retry-After as a floor, capped at 24 h', () => {
    expect(delay(1, 0, 120_000)).toBe(120_000);
    expect(delay(3, 0, 120_000)).toBe(1_800_000);
    expect(delay(1, 0, 7 * 24 * 3_600_000)).toBe(24 * 3_600_000);
  });

  it('parses Retry-After seconds and HTTP dates', () => {
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('Tue, 01 Jan 2030 00:10:00 GMT', now)).toBe(600_000);
    expect(parseRetryAfter('Mon, 31 Dec 2029 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter(undefined, now)).toBeNull();
  });
});
