// One dial through the account's provider route (docs/providers.md "Routing and failover"): the
// providers are tried in the route's order (the first drawn by weight), skipping those whose
// circuit breaker is open. A provider that refuses for a provider-side reason and surely created
// nothing (ProviderUnavailableError 'no'), or refuses our account there (ACCOUNT_REJECTION_REASONS),
// passes the dial to the next one, for the same attempt; one that may have created the call
// ('maybe') is asked for it (findCall) once its request timeout has passed, and without an answer
// the dial ends there: "one person, one ring per attempt" outranks getting through. Before each
// provider after the first, the dial is judged again (dial permission) at that moment.
import { dialOrder } from '../../domain/provider-route.ts';
import type { DialAnswer } from '../../domain/dial-permission.ts';
import {
  ACCOUNT_REJECTION_REASONS,
  DialRejectedError,
  ProviderUnavailableError,
  type PlaceCallRequest,
  type ProviderCallRef,
  type VoiceProvider,
} from '../voice/provider.ts';
import { firstReopening, providerAllowed, providerFailed, providerSucceeded } from './breakers.ts';
import { knownProvider } from './providers.ts';
import { routeOf } from './routes.ts';
import { sleep, type LiveCall, type WorkerState } from './state.ts';

/** A dial no provider of the route took waits at least this long before it is tried again. */
export const UNAVAILABLE_RETRY_MS = 5_000;

/** A provider that did not place the dial, and why (the call's history keeps them). */
export interface Refusal {
  provider: string;
  reason: 'circuit_open' | 'not_configured' | 'unavailable' | 'account_rejected';
  message?: string;
}

export type RouteDial =
  | { kind: 'placed'; name: string; provider: VoiceProvider; providerCallId: string; refused: Refusal[] }
  /** Nothing was created anywhere: the call may be dialled again from `retryAt` (app clock ms). */
  | { kind: 'unavailable'; refused: Refusal[]; retryAt: number }
  /** None of the route's providers exists on this worker. */
  | { kind: 'no_provider'; refused: Refusal[] }
  /** Judged again before a later provider, the dial may no longer be made now: it waits as a withheld dial does. */
  | { kind: 'withheld'; refused: Refusal[]; permit: Extract<DialAnswer, { allowed: false }> };

export interface DialHooks {
  /** Confirms the lease and places the call through `p`, throwing as VoiceProvider.placeCall does; the provider call id. */
  place(p: VoiceProvider): Promise<string>;
  /** The dial's request, for a provider told to watch a call it created despite its error. */
  request(): PlaceCallRequest;
  /** Judges the dial again, now, before a provider after the first (the one dial-permission function). */
  rejudge(): DialAnswer;
}

/**
 * Tries the route's providers with `hooks.place` (which confirms the lease and places the call, throwing
 * as VoiceProvider.placeCall does). DialRejectedError, DialForfeitedError, an ambiguous
 * ProviderUnavailableError and unexpected errors end the dial where they happen and are rethrown.
 */
export async function dialRoute(s: WorkerState, call: LiveCall, hooks: DialHooks): Promise<RouteDial> {
  const names = dialOrder(await routeOf(s, call), Math.random());
  const refused: Refusal[] = [];
  const tried: string[] = [];
  // An account-level refusal ends the dial only if no provider was merely down (which may heal).
  let rejection: DialRejectedError | null = null;
  let attempted = false;
  for (const name of names) {
    const provider = knownProvider(s, name);
    if (!provider) {
      refused.push({ provider: name, reason: 'not_configured' });
      continue;
    }
    tried.push(name);
    if (!providerAllowed(s, name)) {
      s.deps.metrics.providerDials.inc({ provider: name, result: 'skipped' });
      refused.push({ provider: name, reason: 'circuit_open' });
      continue;
    }
    if (attempted) {
      const permit = hooks.rejudge();
      if (!permit.allowed) return { kind: 'withheld', refused, permit };
    }
    attempted = true;
    const placed = await placeThrough(s, call, name, provider, hooks);
    if (typeof placed === 'string') return { kind: 'placed', name, provider, providerCallId: placed, refused };
    if (placed instanceof DialRejectedError) rejection = placed;
    const reason = placed instanceof DialRejectedError ? 'account_rejected' : 'unavailable';
    refused.push({ provider: name, reason, message: placed.message });
  }
  if (tried.length === 0) return { kind: 'no_provider', refused };
  if (rejection && refused.every((r) => r.reason === 'account_rejected' || r.reason === 'not_configured')) throw rejection;
  return { kind: 'unavailable', refused, retryAt: Math.max(firstReopening(s, tried), s.clock.now().getTime() + UNAVAILABLE_RETRY_MS) };
}

/** The provider call id, or the error that lets the dial go on to the next provider. */
async function placeThrough(
  s: WorkerState,
  call: LiveCall,
  name: string,
  provider: VoiceProvider,
  hooks: DialHooks,
): Promise<string | ProviderUnavailableError | DialRejectedError> {
  const count = (result: string) => s.deps.metrics.providerDials.inc({ provider: name, result });
  try {
    const id = await hooks.place(provider);
    providerSucceeded(s, name);
    count('placed');
    return id;
  } catch (err) {
    if (err instanceof DialRejectedError && ACCOUNT_REJECTION_REASONS.has(err.disconnectReason)) {
      // Our account at this provider is broken, not the person: the next provider may place it.
      // Says nothing about the provider's health, which every account shares: the breaker is left alone.
      s.log.warn({ callId: call.callId, provider: name, reason: err.disconnectReason }, 'provider refused our account; trying the next');
      count('failed_over');
      return err;
    }
    if (err instanceof DialRejectedError) {
      // Refused for good: the provider is up, and the next one would refuse the person alike.
      providerSucceeded(s, name);
      count('rejected');
      throw err;
    }
    if (!(err instanceof ProviderUnavailableError)) throw err;
    // Only provider-wide symptoms count: one account's own rate or concurrency limit must not open the breaker for all.
    if (err.scope === 'provider') providerFailed(s, name);
    s.log.warn({ callId: call.callId, provider: name, created: err.created, message: err.message }, 'provider could not take the dial');
    const found = err.created === 'maybe' ? await createdAnyway(s, call, provider, hooks) : 'none';
    if (typeof found === 'object') {
      count('placed');
      return found.providerCallId;
    }
    if (found === 'unknown') {
      count('unavailable');
      throw err;
    }
    count('failed_over');
    return err;
  }
}

/**
 * After an ambiguous failure: the provider call of this dial if the provider has one after all
 * (then watched from here), 'none' when it surely has none, 'unknown' when it cannot tell. A create
 * that timed out here may still be running there, for up to the provider's request timeout (as
 * recovery knows): 'none' only once findCall has found nothing after that has passed.
 */
async function createdAnyway(
  s: WorkerState,
  call: LiveCall,
  provider: VoiceProvider,
  hooks: DialHooks,
): Promise<{ providerCallId: string } | 'none' | 'unknown'> {
  if (!provider.findCall || provider.requestTimeoutMs === undefined) return 'unknown';
  const ref: ProviderCallRef = {
    callId: call.callId,
    accountId: call.accountId,
    attempt: call.attempts,
    recordingEnabled: call.ctx.recordingEnabled,
    // The create went out no earlier than the dial's start, from this number.
    from: hooks.request().from,
    since: call.dialledAt,
  };
  try {
    let id = await provider.findCall(ref);
    if (!id && provider.requestTimeoutMs > 0) {
      await sleep(s, provider.requestTimeoutMs);
      id = await provider.findCall(ref);
    }
    if (id && provider.adopt) {
      // Still ours if this fails: the max-duration rule hangs it up should the provider never report.
      await provider
        .adopt(id, hooks.request(), { answered: false, dialledAt: call.dialledAt, owner: s.settings.id })
        .catch((err: unknown) => s.log.error({ err, callId: call.callId }, 'provider could not watch the call it created'));
    }
    return id ? { providerCallId: id } : 'none';
  } catch (err) {
    s.log.warn({ err, callId: call.callId }, 'could not ask the provider whether it created the call');
    return 'unknown';
  }
}
