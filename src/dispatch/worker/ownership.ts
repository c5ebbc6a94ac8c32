// The proof a worker needs before it asks a provider to act on a call (dial, hang-up): the lease as
// the last conditional write that took or confirmed it left it must outlast the request. When it
// no longer does (a pause, a partition, a slow step), a conditional write confirms it first; a
// worker that finds the call gone drops it and sends nothing (docs/dispatch.md "Ownership").
import { confirmLease } from '../store/lease-recovery.ts';
import type { CallOwnership, VoiceProvider } from '../voice/provider.ts';
import { dropLostCall } from './ledger.ts';
import { sleep, type LiveCall, type WorkerState } from './state.ts';

/** A confirmation the database did not answer is asked again after this, doubling up to the max. */
const RETRY_BASE_MS = 50;
const RETRY_MAX_MS = 2_000;

/** How long the lease must still run when a request leaves: the provider's request timeout, at most half a lease. */
export function requestMarginMs(s: WorkerState, provider: VoiceProvider | null): number {
  return Math.min(provider?.requestTimeoutMs ?? 0, s.settings.leaseMs / 2);
}

/** The call is this worker's and its known lease outlasts a request to its provider. */
export function leaseCovers(s: WorkerState, call: LiveCall): boolean {
  return s.book.live.get(call.callId) === call && call.leaseUntil - s.clock.now().getTime() > requestMarginMs(s, call.provider);
}

/**
 * true: this worker may send the call's provider a request now. false: it may not - the call is no
 * longer this worker's (dropped here), or the worker is stopping before the database answered.
 * `dial`: the call must also still be in the dial it claimed (status and attempts as known here).
 */
export async function mayAct(s: WorkerState, call: LiveCall, o: { during: string; dial?: boolean }): Promise<boolean> {
  if (leaseCovers(s, call)) return true;
  s.book.confirming += 1;
  try {
    for (let failures = 0; s.book.live.get(call.callId) === call;) {
      const expiresAt = s.clock.now().getTime() + s.settings.leaseMs;
      try {
        const dial = o.dial ? { status: call.status, attempts: call.attempts } : undefined;
        if (!(await confirmLease(s.deps, { callId: call.callId, workerId: s.settings.id, expiresAt: new Date(expiresAt), dial }))) {
          dropLostCall(s, call, o.during);
          return false;
        }
        call.leaseUntil = Math.max(call.leaseUntil, expiresAt);
        if (leaseCovers(s, call)) return true;
        // Confirmed, but the answer took so long that the lease no longer outlasts a request.
      } catch (err) {
        s.log.warn({ err, callId: call.callId, during: o.during }, 'could not confirm the lease; asking again');
      }
      // Without an answer nothing is sent: the call may be another worker's by now.
      if (s.lifecycle.windingDown) return false;
      await sleep(s, Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** failures++));
    }
    return false;
  } finally {
    s.book.confirming -= 1;
  }
}

/** What the provider gets with a dial: the lease holder, and the check it repeats before each create. */
export function dialOwnership(s: WorkerState, call: LiveCall): CallOwnership {
  return { owner: s.settings.id, confirmDial: () => mayAct(s, call, { during: 'dial', dial: true }), holdsNow: () => leaseCovers(s, call) };
}
