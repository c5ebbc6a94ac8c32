// Hang-ups: asked of the provider only while the call is still this worker's; a call its provider
// has not ended a lease after the hang-up is looked up there, asked again, or ended here.
import type { CallEndResult, HangupReason, ProviderCallRef } from '../voice/provider.ts';
import { failedDial } from './attempt-end.ts';
import { leaseCovers, mayAct } from './ownership.ts';
import type { LiveCall, SessionSeam, WorkerState } from './state.ts';

/** Asks the provider to end the call; false when it was already asked (or has now been ended here). */
export function hangUp(s: WorkerState, call: LiveCall, reason: HangupReason, now: Date, seam: SessionSeam): boolean {
  if (call.hangup) {
    if (now.getTime() - call.hangup.at.getTime() > s.settings.leaseMs) void settleUnendedHangup(s, call, now, seam);
    return false;
  }
  call.hangup = { reason, at: now, since: now };
  if (call.providerCallId) void requestHangup(s, call, reason);
  s.log.info({ callId: call.callId, batchId: call.batchId, reason }, 'hanging up call');
  return true;
}

/**
 * How long a call told to end may stay unended while its provider still reports it going or cannot
 * be reached (a partition, an outage), in lease lengths: past it, a provider that ignores hang-ups
 * no longer holds the slot.
 */
export const HANGUP_PATIENCE_LEASES = 20;

/**
 * A call told to end that has not ended a lease later. A provider that keeps records (lookup) is
 * asked for its own: ended there, the call ends with the provider's result (transcript, recording),
 * which ending it here would lose; still going or unreachable, the hang-up is sent again and the
 * call judged again a lease later, up to HANGUP_PATIENCE_LEASES. A provider without records, or
 * one past that patience, has the call ended here: an answered call as completed (its analysis
 * settled, so it gets the events every completed call gets), the others failed.
 */
async function settleUnendedHangup(s: WorkerState, call: LiveCall, now: Date, seam: SessionSeam): Promise<void> {
  const hangup = call.hangup!;
  if (hangup.checking) return;
  const patient = now.getTime() - hangup.since.getTime() <= s.settings.leaseMs * HANGUP_PATIENCE_LEASES;
  if (call.provider?.lookup && call.providerCallId && patient) {
    hangup.checking = true;
    const ref: ProviderCallRef = {
      callId: call.callId,
      accountId: call.accountId,
      attempt: call.attempts,
      recordingEnabled: call.ctx.recordingEnabled,
    };
    const found = await call.provider.lookup(call.providerCallId, ref).catch((err: unknown) => {
      s.log.warn({ err, callId: call.callId }, 'provider record of a hung-up call not read; asking again later');
      return { state: 'unknown' } as const;
    });
    hangup.checking = false;
    if (s.book.live.get(call.callId) !== call) return;
    if (found.state === 'ended') return seam.ended(call, found.result);
    hangup.at = s.clock.now();
    return requestHangup(s, call, hangup.reason);
  }
  s.log.warn({ callId: call.callId, reason: hangup.reason }, 'provider did not end the call after hangup; ending it');
  const answeredAt = call.answered ? (call.answeredAt ?? call.dialledAt) : null;
  const result: CallEndResult = { ...failedDial(s, call, 'provider_unresponsive'), status: answeredAt ? 'completed' : 'failed', answeredAt };
  seam.ended(call, result);
}

/** Sends the hang-up only while the call is still this worker's (a stale process may be deciding on an old view). */
export async function requestHangup(s: WorkerState, call: LiveCall, reason: HangupReason): Promise<void> {
  if (!call.provider || !call.providerCallId || !(await mayAct(s, call, { during: 'hang-up' }))) return;
  const holdsNow = () => leaseCovers(s, call);
  await call.provider
    .hangup(call.providerCallId, reason, { accountId: call.accountId, holdsNow })
    .catch((err) => s.log.warn({ err, callId: call.callId }, 'hangup failed'));
}
