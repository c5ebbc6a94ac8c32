// A voice provider's circuit breaker, per worker process (docs/providers.md "Routing and failover"):
// closed, it counts consecutive provider-side failures; after `failures` of them it opens and the
// provider is skipped for `cooldownMs`; then half-open, one trial dial goes through, closing it on
// success and opening it again on failure. Pure: times are the app clock's milliseconds, passed in,
// so a test on manual time drives it.

export interface BreakerSettings {
  /** Consecutive provider-side failures that open the breaker. */
  failures: number;
  /** How long an open breaker skips the provider before a trial dial. */
  cooldownMs: number;
}

export type BreakerState =
  | { state: 'closed'; failures: number }
  | { state: 'open'; until: number }
  /** `trialSince`: when the one trial dial started (null: none yet). */
  | { state: 'half_open'; trialSince: number | null };

export const CLOSED: BreakerState = { state: 'closed', failures: 0 };

/**
 * Whether a dial may go to the provider now, and the breaker after the decision: an open breaker
 * past its cool-down turns half-open and lets this dial be its trial. A trial whose end never came
 * (the dial was forfeited) frees the way for another one a cool-down later.
 */
export function breakerAllows(b: BreakerState, now: number, o: BreakerSettings): { allowed: boolean; next: BreakerState } {
  if (b.state === 'closed') return { allowed: true, next: b };
  if (b.state === 'open') {
    if (now < b.until) return { allowed: false, next: b };
    return { allowed: true, next: { state: 'half_open', trialSince: now } };
  }
  if (b.trialSince === null || now - b.trialSince >= o.cooldownMs || now < b.trialSince) {
    return { allowed: true, next: { state: 'half_open', trialSince: now } };
  }
  return { allowed: false, next: b };
}

/** The provider answered (placed the call, or refused it for good: it is up). */
export function breakerSucceeded(): BreakerState {
  return CLOSED;
}

/** A provider-side failure (5xx, 429, unreachable): counted, opening the breaker at the threshold or on a failed trial. */
export function breakerFailed(b: BreakerState, now: number, o: BreakerSettings): BreakerState {
  if (b.state === 'closed' && b.failures + 1 < o.failures) return { state: 'closed', failures: b.failures + 1 };
  return { state: 'open', until: now + o.cooldownMs };
}

/** When an open breaker next lets a trial through (now for any other state). */
export function breakerReopensAt(b: BreakerState, now: number): number {
  return b.state === 'open' ? Math.max(now, b.until) : now;
}

/** The gauge value of a state: 0 closed, 1 half-open, 2 open. */
export function breakerGauge(b: BreakerState): number {
  return b.state === 'closed' ? 0 : b.state === 'half_open' ? 1 : 2;
}
