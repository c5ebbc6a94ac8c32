// The provider circuit breaker: opens after N consecutive failures, skips for the cool-down, lets
// one trial through half-open, closes on its success and opens again on its failure.
import { describe, expect, it } from 'vitest';
import { breakerAllows, breakerFailed, breakerReopensAt, breakerSucceeded, CLOSED, type BreakerState } from '../../src/domain/circuit-breaker.ts';

const o = { failures: 3, cooldownMs: 10_000 };

function failTimes(b: BreakerState, n: number, now: number): BreakerState {
  for (let i = 0; i < n; i++) b = breakerFailed(b, now, o);
  return b;
}

describe('circuit breaker', () => {
  it('stays closed below the threshold, and a success resets the count', () => {
    let b = failTimes(CLOSED, 2, 0);
    expect(b).toEqual({ state: 'closed', failures: 2 });
    expect(breakerAllows(b, 0, o).allowed).toBe(true);
    b = breakerSucceeded();
    b = failTimes(b, 2, 0);
    expect(b.state).toBe('closed');
  });

  it('opens at the threshold and skips until the cool-down has passed', () => {
    const b = failTimes(CLOSED, 3, 1_000);
    expect(b).toEqual({ state: 'open', until: 11_000 });
    expect(breakerAllows(b, 10_999, o)).toEqual({ allowed: false, next: b });
    expect(breakerReopensAt(b, 5_000)).toBe(11_000);
  });

  it('half-open after the cool-down: one trial, others skipped; its success closes the breaker', () => {
    const open = failTimes(CLOSED, 3, 0);
    const trial = breakerAllows(open, 10_000, o);
    expect(trial).toEqual({ allowed: true, next: { state: 'half_open', trialSince: 10_000 } });
    expect(breakerAllows(trial.next, 10_001, o).allowed).toBe(false);
    expect(breakerSucceeded()).toEqual(CLOSED);
  });

  it('a failed trial opens it again for a whole cool-down', () => {
    const half = breakerAllows(failTimes(CLOSED, 3, 0), 10_000, o).next;
    expect(breakerFailed(half, 10_500, o)).toEqual({ state: 'open', until: 20_500 });
  });

  it('a trial that never reported frees the way for another one a cool-down later, also when the clock went back', () => {
    const half: BreakerState = { state: 'half_open', trialSince: 10_000 };
    expect(breakerAllows(half, 19_999, o).allowed).toBe(false);
    expect(breakerAllows(half, 20_000, o).allowed).toBe(true);
    expect(breakerAllows(half, 5_000, o).allowed).toBe(true);
  });
});
