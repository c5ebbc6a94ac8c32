// How a call's attempt ends in this worker: back in line (a retry by the batch's policy, a dial
// withheld until its opening, an alternate number waiting for its window) or ended, the end write
// handing an answered call to analysis. Every one is a conditional write: a worker that lost the
// call's lease writes nothing.
import type { WaitReason } from '../../domain/wait-reason.ts';
import { attemptOutcome, VOICEMAIL_DISCONNECT_REASON } from '../../domain/attempt-outcome.ts';
import { voicemailLeftUnder, type VoicemailSetting } from '../../domain/voicemail.ts';
import { nextAttemptAt, retryInWindow } from '../../domain/retry-policy.ts';
import { alternateWaitWrite, dialWithheldWrite, endedWrite, retryWrite, type RetryTime } from '../store/call-writes.ts';
import type { CallEndResult } from '../voice/provider.ts';
import { analyseCall } from './analysis.ts';
import { callRef, checkTransition, enqueueWrite, stopWatching } from './ledger.ts';
import type { LiveCall, WorkerState } from './state.ts';
import { attemptStats } from './did-stats.ts';
import { takeUnplacedCallerId } from './caller-id.ts';

/** A provider that does not say whether it left the message did what the dial asked. */
export function withVoicemailLeft(result: CallEndResult, setting: VoicemailSetting | null): CallEndResult {
  if (result.voicemailLeft !== undefined) return result;
  const left = voicemailLeftUnder(setting, result.disconnectReason === VOICEMAIL_DISCONNECT_REASON);
  return left === null ? result : { ...result, voicemailLeft: left };
}

/** A dial that never reached the provider ends the call like a failed dial would. */
export function failedDial(s: WorkerState, call: LiveCall, reason: string, detail?: Record<string, unknown>): CallEndResult {
  return {
    status: 'failed',
    hangupBy: 'system',
    disconnectReason: reason,
    startedAt: call.dialledAt,
    answeredAt: null,
    endedAt: s.clock.now(),
    transcript: null,
    recording: null,
    ...(detail ? { detail } : {}),
  };
}

/**
 * When an unanswered attempt is tried again under the batch's retry policy, at the first opening of
 * its calling windows from then on; null: it was the last.
 */
export function retryAt(call: LiveCall, result: CallEndResult): RetryTime | null {
  // Reached someone, or ended by us (cancel, max duration, shutdown): never retried.
  if (call.answered || result.answeredAt !== null || call.hangup) return null;
  const limits = { policy: call.ctx.retry, expiresAt: call.ctx.expiresAt };
  const at = nextAttemptAt({ attempts: call.attempts, outcome: attemptOutcome(result), endedAt: result.endedAt }, limits);
  if (!at || call.ctx.windows.length === 0) return at && { at, windowClosesAt: null };
  return retryInWindow(at, call.ctx.windows, call.timezone, limits.expiresAt);
}

/**
 * The caller-ID counts an ended attempt gives back (takeUnplacedCallerId). A `dial_error` keeps
 * them: the provider may have created the call before the error, and a count errs toward fewer dials.
 */
function unplacedCallerIds(call: LiveCall, result: CallEndResult): ReturnType<typeof takeUnplacedCallerId> {
  const counts = takeUnplacedCallerId(call);
  return result.disconnectReason === 'dial_error' ? undefined : counts;
}

/** The call's last dial of this round ended: it goes back in line for a retry, or ends. */
export function finishAttempt(s: WorkerState, call: LiveCall, result: CallEndResult): void {
  const at = retryAt(call, result);
  if (at) scheduleRetry(s, call, result, at);
  else endCall(s, call, result);
}

function scheduleRetry(s: WorkerState, call: LiveCall, result: CallEndResult, at: RetryTime): void {
  stopWatching(s, call);
  s.book.ending.add(call.callId);
  const from = call.status;
  checkTransition(s, call, from, 'queued');
  call.status = 'queued';
  const write = {
    ...retryWrite(callRef(call), s.settings.id, from, result, call.number, call.attempts, at),
    didStats: attemptStats(s, call, result),
    callerIdReturns: unplacedCallerIds(call, result),
  };
  void enqueueWrite(s, write, call.ctx.callbackUrl).then((ok) => {
    s.book.ending.delete(call.callId);
    if (!ok) s.log.warn({ callId: call.callId, batchId: call.batchId }, 'retry not recorded: call no longer leased by this worker');
  });
}

/** Puts a claimed call whose dial was withheld back in line until \`next\` (dialWithheldWrite). */
export function withheldWait(s: WorkerState, call: LiveCall, next: RetryTime, reason: WaitReason, detail: Record<string, unknown>): Promise<void> {
  stopWatching(s, call);
  s.book.ending.add(call.callId);
  const from = call.status;
  checkTransition(s, call, from, 'queued');
  call.status = 'queued';
  const write = dialWithheldWrite(callRef(call), s.settings.id, from, { number: call.number, at: s.clock.now(), next, reason, detail });
  write.callerIdReturns = takeUnplacedCallerId(call);
  if (s.logTransitions)
    s.log.info({ callId: call.callId, batchId: call.batchId, number: call.number, reason, opensAt: next.at }, 'dial withheld until its opening');
  return enqueueWrite(s, write, call.ctx.callbackUrl).then((ok) => {
    s.book.ending.delete(call.callId);
    if (!ok) s.log.warn({ callId: call.callId, batchId: call.batchId }, 'withheld dial not recorded: call no longer leased by this worker');
  });
}

/**
 * The alternate number's window is closed now: the call goes back in line until it opens, and the
 * claim then dials the alternate. `previous`: the primary attempt just ended; null: a claim of the
 * alternate found its window closed after all (the claim's count of that dial is taken back).
 */
export function waitForAlternate(s: WorkerState, call: LiveCall, next: RetryTime, previous: CallEndResult | null): Promise<void> {
  stopWatching(s, call);
  s.book.ending.add(call.callId);
  const from = call.status;
  checkTransition(s, call, from, 'queued');
  call.status = 'queued';
  const alternate = call.alternatePhone!;
  const write = alternateWaitWrite(callRef(call), s.settings.id, from, {
    alternate,
    at: previous?.endedAt ?? s.clock.now(),
    next,
    ...(previous ? { previous: { number: call.number, result: previous } } : { undial: true }),
  });
  if (previous) write.didStats = attemptStats(s, call, previous);
  write.callerIdReturns = takeUnplacedCallerId(call);
  if (s.logTransitions)
    s.log.info({ callId: call.callId, batchId: call.batchId, number: alternate, opensAt: next.at }, 'alternate number waits for its calling window');
  return enqueueWrite(s, write, call.ctx.callbackUrl).then((ok) => {
    s.book.ending.delete(call.callId);
    if (!ok) s.log.warn({ callId: call.callId, batchId: call.batchId }, 'alternate wait not recorded: call no longer leased by this worker');
  });
}

export function endCall(s: WorkerState, call: LiveCall, result: CallEndResult): void {
  stopWatching(s, call);
  s.book.ending.add(call.callId);
  const from = call.status;
  checkTransition(s, call, from, result.status);
  call.status = result.status;
  const byProvider = call.provider?.analyse && call.providerCallId ? { provider: call.provider, providerCallId: call.providerCallId } : null;
  const { write, needsAnalysis } = endedWrite(callRef(call), s.settings.id, from, result, call.number, {
    detail: call.hangup ? { hangup_reason: call.hangup.reason } : undefined,
    recordingWithAnalysis: true,
    providerAnalysis: !!byProvider,
  });
  write.didStats = attemptStats(s, call, result);
  write.callerIdReturns = unplacedCallerIds(call, result);
  void enqueueWrite(s, write, call.ctx.callbackUrl).then((ok) => {
    s.book.ending.delete(call.callId);
    if (!ok) {
      s.log.warn({ callId: call.callId, batchId: call.batchId }, 'call end not recorded: call no longer leased by this worker');
      return;
    }
    if (!needsAnalysis) return;
    analyseCall(s, {
      ...callRef(call),
      status: result.status,
      hangupBy: result.hangupBy,
      transcript: result.transcript ?? '',
      contactName: call.contact.name,
      metadata: call.contact.metadata,
      outcomeKeys: call.ctx.agent.outcomeKeys,
      agentId: call.ctx.agent.id,
      optOutOutcomeKey: call.ctx.agent.optOutOutcomeKey,
      callbackUrl: call.ctx.callbackUrl,
      recording: result.recording,
      recordingEnabled: call.ctx.recordingEnabled,
      providerAnalysis: byProvider,
    });
  });
}
