import { describe, expect, it } from 'vitest';
import {
  dayAfter,
  decidePool,
  isShortCall,
  median,
  rollingStats,
  windowStart,
  type HealthSettings,
  type PoolNumber,
} from '../../src/domain/number-health.ts';

const NOW = new Date('2026-11-30T12:00:00Z');
const S: HealthSettings = { windowDays: 7, minDials: 20, threshold: 0.5, restMs: 24 * 3_600_000 };

function num(id: string, dials: number, answered: number, extra: Partial<PoolNumber> = {}): PoolNumber {
  return { id, days: [{ day: '2026-11-30', dials, answered, shortCalls: 0 }], flagged: false, restedUntil: null, judgedFrom: null, ...extra };
}

describe('rolling stats', () => {
  it('sums the days of the window only and gives the rates', () => {
    const days = [
      { day: '2026-11-23', dials: 100, answered: 100, shortCalls: 0 },
      { day: '2026-11-24', dials: 10, answered: 4, shortCalls: 1 },
      { day: '2026-11-30', dials: 10, answered: 4, shortCalls: 3 },
    ];
    expect(windowStart(NOW, 7)).toBe('2026-11-24');
    expect(rollingStats(days, windowStart(NOW, 7))).toEqual({ dials: 20, answered: 8, shortCalls: 4, answerRate: 0.4, shortCallRate: 0.5 });
    expect(rollingStats([], '2026-11-24')).toEqual({ dials: 0, answered: 0, shortCalls: 0, answerRate: null, shortCallRate: null });
  });

  it('median of odd, even and no values', () => {
    expect(median([0.9, 0.1, 0.5])).toBe(0.5);
    expect(median([0.2, 0.8, 0.4, 0.6])).toBe(0.5);
    expect(median([])).toBeNull();
  });

  it('a short call is answered and under the threshold', () => {
    expect(isShortCall(true, 9, 10)).toBe(true);
    expect(isShortCall(true, 10, 10)).toBe(false);
    expect(isShortCall(false, 3, 10)).toBe(false);
    expect(isShortCall(true, null, 10)).toBe(false);
  });

  it('dayAfter', () => expect(dayAfter(new Date('2026-11-30T23:59:59Z'))).toBe('2026-12-01'));
});

describe('decidePool', () => {
  it('rests a number below threshold × the pool median', () => {
    const d = decidePool([num('a', 40, 20), num('b', 40, 18), num('c', 40, 2)], NOW, S);
    expect(d.rest).toHaveLength(1);
    expect(d.rest[0]).toMatchObject({ id: 'c', reason: 'low_answer_rate', poolMedian: 0.45, until: new Date('2026-12-01T12:00:00Z') });
    expect(d.restore).toEqual([]);
  });

  it('keeps a number at the threshold (strictly below rests)', () => {
    const d = decidePool([num('a', 40, 20), num('b', 40, 20), num('c', 40, 10)], NOW, S);
    expect(d.rest).toEqual([]);
  });

  it('does not judge a number under the minimum volume, nor count it in the median', () => {
    const d = decidePool([num('a', 40, 20), num('b', 40, 18), num('c', 3, 0)], NOW, S);
    expect(d.rest).toEqual([]);
    const low = decidePool([num('a', 40, 20), num('b', 19, 0), num('c', 40, 2)], NOW, S);
    expect(low.rest.map((r) => [r.id, r.poolMedian])).toEqual([['c', 0.275]]);
  });

  it('never rests the last available number for a rate; worst goes first', () => {
    const d = decidePool([num('a', 40, 30), num('b', 40, 1), num('c', 40, 2)], NOW, { ...S, threshold: 1 });
    // median 0.05: b (0.025) is below, c (0.05) is not; with threshold 1 only b.
    expect(d.rest.map((r) => r.id)).toEqual(['b']);
    const two = decidePool([num('a', 40, 2), num('b', 40, 30)], NOW, { ...S, threshold: 0.5 });
    expect(two.rest.map((r) => r.id)).toEqual(['a']);
    const alone = decidePool([num('a', 40, 2), num('b', 40, 30, { restedUntil: new Date('2026-12-01T00:00:00Z') })], NOW, { ...S, threshold: 0.5 });
    expect(alone.rest).toEqual([]);
  });

  it('rests a flagged number whatever it leaves, and extends a flagged rest without a new event', () => {
    const d = decidePool([num('a', 0, 0, { flagged: true })], NOW, S);
    expect(d.rest).toMatchObject([{ id: 'a', reason: 'flagged', poolMedian: null }]);
    const again = decidePool([num('a', 0, 0, { flagged: true, restedUntil: new Date('2026-11-30T13:00:00Z') })], NOW, S);
    expect(again.rest).toEqual([]);
    expect(again.extend).toEqual([{ id: 'a', until: new Date('2026-12-01T12:00:00Z') }]);
  });

  it('restores a number whose rest ran out; a rested one stays', () => {
    const d = decidePool(
      [
        num('a', 40, 20),
        num('b', 0, 0, { restedUntil: new Date('2026-11-30T11:59:59Z') }),
        num('c', 0, 0, { restedUntil: new Date('2026-11-30T12:00:01Z') }),
      ],
      NOW,
      S,
    );
    expect(d.restore).toEqual(['b']);
    expect(d.rest).toEqual([]);
  });

  it('hysteresis: a number back from a rest is judged only on its days since, with the minimum volume again', () => {
    const days = [
      { day: '2026-11-28', dials: 40, answered: 0, shortCalls: 0 },
      { day: '2026-11-30', dials: 5, answered: 0, shortCalls: 0 },
    ];
    const back = { id: 'c', days, flagged: false, restedUntil: null, judgedFrom: '2026-11-29' };
    expect(decidePool([num('a', 40, 20), num('b', 40, 20), back], NOW, S).rest).toEqual([]);
    // Without the rest's fresh start the old days would rest it again at once.
    expect(decidePool([num('a', 40, 20), num('b', 40, 20), { ...back, judgedFrom: null }], NOW, S).rest.map((r) => r.id)).toEqual(['c']);
  });
});
