// How the worker records what happens to its calls: every change is a call write queued for the
// next group commit, applied only while this worker still holds the call's lease. A write that
// did not apply means another worker took the call over, and this one lets it go untouched.
import { canTransitionCall, type CallStatus } from '../../domain/call-state.ts';
import type { CallWrite } from '../../services/calls/call-transitions.ts';
import type { CallRef } from '../store/call-writes.ts';
import type { LiveCall, WorkerState } from './state.ts';

export const callRef = (c: CallRef): CallRef => ({ callId: c.callId, batchId: c.batchId, accountId: c.accountId });

/** Queues a write; a batch known to have no callback_url spares the transaction an outbox lookup. */
export function enqueueWrite(s: WorkerState, w: CallWrite, callbackUrl: string | null | undefined, opts?: { deferMs?: number }): Promise<boolean> {
  return s.queue.enqueue(callbackUrl === null ? { ...w, webhooks: false } : w, opts);
}

/** Recorded as reported: the provider is the authority on what happened, the rule flags surprises. */
export function checkTransition(s: WorkerState, call: LiveCall, from: CallStatus, to: CallStatus): void {
  if (!canTransitionCall(from, to)) s.log.warn({ callId: call.callId, from, to }, 'provider reported an unexpected call transition');
}

export function recordTransition(s: WorkerState, call: LiveCall, to: CallStatus, at: Date, detail?: Record<string, unknown>): void {
  const from = call.status;
  checkTransition(s, call, from, to);
  call.status = to;
  const write: CallWrite = { ...callRef(call), owner: s.settings.id, from, to, events: [{ from, to, at, detail }], set: {} };
  void enqueueWrite(s, write, call.ctx.callbackUrl).then((ok) => {
    if (!ok) dropLostCall(s, call, 'transition');
  });
}

/**
 * The call is no longer leased by this worker (a write did not apply, a renewal or confirmation
 * did not find it): another worker took it over or settled it. Dropped from this worker's book
 * without a word to the provider - no hang-up: the call may be talking under its new owner - and
 * the provider stops watching it, leaving its events to that owner.
 */
export function dropLostCall(s: WorkerState, call: LiveCall, during: string): void {
  if (s.book.live.get(call.callId) !== call) return;
  s.log.warn({ callId: call.callId, batchId: call.batchId, during }, 'call no longer leased by this worker; dropped without touching it');
  stopWatching(s, call);
  if (call.providerCallId) call.provider?.forget?.(call.providerCallId);
}

export function stopWatching(s: WorkerState, call: LiveCall): void {
  s.book.live.delete(call.callId);
  if (call.providerCallId) s.book.liveByProviderCall.delete(call.providerCallId);
}
