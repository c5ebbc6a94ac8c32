import { describe, expect, it } from 'vitest';
import { createPace, PACE_WINDOW_MS } from '../../src/web/pace.ts';

describe('batch pace', () => {
  it('has no pace until it has watched for five seconds', () => {
    const pace = createPace();
    pace.sample(0, 0);
    pace.sample(3, 4_000);
    expect(pace.perMinute()).toBeNull();
    expect(pace.describe(10)).toBe('');
    pace.sample(5, 6_000);
    expect(pace.perMinute()).toBe(50);
    expect(pace.describe(100)).toBe('50 calls/min · about 2 min left');
  });

  it('looks back one minute: a slower recent minute shows as a slower pace', () => {
    const pace = createPace();
    for (let s = 0; s <= 60; s += 5) pace.sample(s * 2, s * 1000); // 120 calls/min
    expect(pace.perMinute()).toBe(120);
    for (let s = 65; s <= 180; s += 5) pace.sample(120 + (s - 60) / 5, s * 1000); // 12 calls/min
    expect(pace.perMinute()).toBeCloseTo(12, 5);
    expect(pace.describe(6)).toBe('12 calls/min · under a minute left');
    expect(pace.describe(12 * 200)).toBe('12 calls/min · about 3 h left');
  });

  it('says so when nothing ended for a minute, and nothing once the batch is done', () => {
    const pace = createPace();
    pace.sample(10, 0);
    pace.sample(10, PACE_WINDOW_MS);
    expect(pace.describe(5)).toBe('no call ended in the last minute');
    expect(pace.describe(0)).toBe('');
  });

  it('starts again when the counters go back (a re-read after a reconnect)', () => {
    const pace = createPace();
    pace.sample(100, 0);
    pace.sample(200, 10_000);
    pace.sample(50, 11_000);
    expect(pace.perMinute()).toBeNull();
  });
});

describe('batch pace, sampling', () => {
  it('keeps about one reading a second however often the counters arrive', () => {
    const pace = createPace();
    // 20 readings a second for two minutes, one call ended every second.
    for (let t = 0; t <= 120_000; t += 50) pace.sample(Math.floor(t / 1000), t);
    const rate = pace.perMinute()!;
    expect(rate).toBeGreaterThan(58);
    expect(rate).toBeLessThan(62);
  });
});
