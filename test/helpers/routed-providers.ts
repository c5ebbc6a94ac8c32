// Two (or more) simulators under their own names for provider-routing tests, on one manualTimers:
// each counts the creates it made per dial (call id and attempt), remembers how its calls ended
// (lookup), finds a dial by our ids (findCall) and fails creates as a test's pattern says.
import { createSimulatorProvider } from '../../src/dispatch/voice/simulator.ts';
import {
  DialRejectedError,
  ProviderUnavailableError,
  type CallEndResult,
  type ProviderCallLookup,
  type ProviderEventListener,
  type VoiceProvider,
} from '../../src/dispatch/voice/provider.ts';
import type { manualTimers } from './dispatch.ts';

/**
 * What the n-th create (0-based, counted per provider) does: go through; `no`: refused, nothing
 * created (a 503); `maybe_created`: created, but answered as if it timed out; `maybe_none`: the
 * same error, nothing created; `maybe_late`: the same error, and the create lands at the provider
 * `lateMs` later (a slow provider still creating it); `rate`: a 429 of our account's key (refused,
 * account scope); `auth`: our account's key refused (DialRejectedError provider_auth_failed).
 */
export type CreateFault = 'ok' | 'no' | 'maybe_created' | 'maybe_none' | 'maybe_late' | 'rate' | 'auth';

export interface RoutedFakeOptions {
  fault?: (n: number) => CreateFault;
  /** Without findCall the worker cannot tell what an ambiguous failure did. */
  findCall?: boolean;
  /** findCall throws (the provider's list endpoint is down too). */
  findCallFails?: boolean;
  /** The provider's request timeout (VoiceProvider.requestTimeoutMs); default 0. */
  requestTimeoutMs?: number;
  /** How long after its error a `maybe_late` create lands; default 3 s. */
  lateMs?: number;
}

export function routedFake(name: string, timers: ReturnType<typeof manualTimers>, o: RoutedFakeOptions = {}) {
  const inner = createSimulatorProvider({ callMs: 5_000, ringMs: 1_000, clock: timers });
  const results = new Map<string, CallEndResult>();
  const listeners = new Set<ProviderEventListener>();
  /** `callId:attempt` → provider call ids created for that dial. */
  const creates = new Map<string, string[]>();
  const state = { muted: false, tries: 0, lookups: 0, finds: 0, fault: o.fault ?? (() => 'ok' as CreateFault) };
  inner.onEvent((e) => {
    if (e.type === 'ended') results.set(e.providerCallId, e.result);
    if (!state.muted) for (const l of listeners) l(e);
  });
  const provider: VoiceProvider = {
    name,
    async placeCall(req, ownership) {
      const fault = state.fault(state.tries++);
      if (fault === 'no') throw new ProviderUnavailableError(`${name} answered 503`, 'no', { provider: name, provider_status: 503 });
      if (fault === 'maybe_none') throw new ProviderUnavailableError(`${name} timed out`, 'maybe', { provider: name });
      if (fault === 'rate')
        throw new ProviderUnavailableError(`${name} answered 429`, 'no', { provider: name, provider_status: 429 }, { scope: 'account' });
      if (fault === 'auth') throw new DialRejectedError(`${name} answered 401`, 'provider_auth_failed', { provider: name, provider_status: 401 });
      if (fault === 'maybe_late') {
        timers.setTimeout(() => {
          void inner.placeCall(req).then((r) => {
            const key = `${req.callId}:${req.attempt}`;
            creates.set(key, [...(creates.get(key) ?? []), r.providerCallId]);
          });
        }, o.lateMs ?? 3_000);
        throw new ProviderUnavailableError(`${name} timed out`, 'maybe', { provider: name });
      }
      if (ownership && !(await ownership.confirmDial())) throw new Error('not confirmed');
      const r = await inner.placeCall(req);
      const key = `${req.callId}:${req.attempt}`;
      creates.set(key, [...(creates.get(key) ?? []), r.providerCallId]);
      if (fault === 'maybe_created') throw new ProviderUnavailableError(`${name} timed out`, 'maybe', { provider: name });
      return r;
    },
    hangup: (id, reason) => inner.hangup(id, reason),
    onEvent(l) {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    close: () => inner.close(),
    async lookup(id): Promise<ProviderCallLookup> {
      state.lookups += 1;
      const r = results.get(id);
      if (r) return { state: 'ended', result: r };
      return [...creates.values()].some((ids) => ids.includes(id)) ? { state: 'in_flight' } : { state: 'unknown' };
    },
    requestTimeoutMs: o.requestTimeoutMs ?? 0,
    ...(o.findCall === false
      ? {}
      : {
          findCall: async (ref) => {
            state.finds += 1;
            if (o.findCallFails) throw new Error(`${name} list endpoint answered 503`);
            return creates.get(`${ref.callId}:${ref.attempt}`)?.[0] ?? null;
          },
        }),
  };
  return {
    provider,
    creates,
    state,
    /**
     * The same provider as one worker process sees it: its events stop reaching that worker once
     * `dead()` says so (a killed worker hears nothing more), while the others still hear theirs.
     */
    viewFor(dead: () => boolean): VoiceProvider {
      return {
        ...provider,
        onEvent: (l) => provider.onEvent((e) => (dead() ? undefined : l(e))),
      };
    },
    /** Creates made per call id (all attempts). */
    createsOf(callId: string): number {
      let n = 0;
      for (const [k, ids] of creates) if (k.startsWith(`${callId}:`)) n += ids.length;
      return n;
    },
  };
}
