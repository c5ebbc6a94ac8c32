// The circuit breakers of this worker's providers (domain/circuit-breaker.ts), on the app clock,
// with their state published as callbatch_provider_circuit_state.
import {
  breakerAllows,
  breakerFailed,
  breakerGauge,
  breakerReopensAt,
  breakerSucceeded,
  CLOSED,
  type BreakerSettings,
  type BreakerState,
} from '../../domain/circuit-breaker.ts';
import type { WorkerState } from './state.ts';

function settings(s: WorkerState): BreakerSettings {
  return { failures: s.deps.config.PROVIDER_BREAKER_FAILURES, cooldownMs: s.deps.config.PROVIDER_BREAKER_COOLDOWN_MS };
}

function put(s: WorkerState, provider: string, next: BreakerState): void {
  const before = s.caches.breakers.get(provider) ?? CLOSED;
  s.caches.breakers.set(provider, next);
  s.deps.metrics.providerCircuitState.set({ provider }, breakerGauge(next));
  if (before.state !== next.state) s.log.warn({ provider, from: before.state, to: next.state }, 'provider circuit breaker changed');
}

/** Whether a dial may go to `provider` now (an open breaker past its cool-down lets this one through as its trial). */
export function providerAllowed(s: WorkerState, provider: string): boolean {
  const { allowed, next } = breakerAllows(s.caches.breakers.get(provider) ?? CLOSED, s.clock.now().getTime(), settings(s));
  put(s, provider, next);
  return allowed;
}

export function providerSucceeded(s: WorkerState, provider: string): void {
  if ((s.caches.breakers.get(provider) ?? CLOSED) !== CLOSED) put(s, provider, breakerSucceeded());
}

export function providerFailed(s: WorkerState, provider: string): void {
  put(s, provider, breakerFailed(s.caches.breakers.get(provider) ?? CLOSED, s.clock.now().getTime(), settings(s)));
}

/** App clock ms when the first of these providers takes a dial again (now if one is not open). */
export function firstReopening(s: WorkerState, providers: readonly string[]): number {
  const now = s.clock.now().getTime();
  return Math.min(...providers.map((p) => breakerReopensAt(s.caches.breakers.get(p) ?? CLOSED, now)));
}
