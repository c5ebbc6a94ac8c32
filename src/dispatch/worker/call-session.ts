// One call's life in this worker, from the claim to its end: the dial-time judgement of a claimed
// call (windows, rules, frequency limits), the provider's events (ringing, answered, ended), and
// what follows an ended dial - the alternate number after an unanswered first dial, a retry, or
// the end. The parts it drives (dial.ts, alternate-dial.ts, hangups.ts, attempt-end.ts) hand back
// to it through a SessionSeam instead of importing it, so no two modules import each other.
import type { ClaimedCall } from '../store/claim-calls.ts';
import { checkDialFrequency, type FrequencyVerdict } from '../store/dial-frequency-check.ts';
import { FREQUENCY_CAP_WAIT_REASON } from '../../domain/frequency-cap.ts';
import { CALLER_ID_CAP_WAIT_REASON } from '../../domain/caller-id.ts';
import type { DialAnswer } from '../../domain/dial-permission.ts';
import type { RetryTime } from '../store/call-writes.ts';
import type { CallEndResult, HangupReason, VoiceProvider } from '../voice/provider.ts';
import { dialAlternateIfAllowed } from './alternate-dial.ts';
import { CALLER_ID_CHECK_FAILED, chooseCallerIds, type CallerIdWait } from './caller-id.ts';
import { endCall, failedDial, finishAttempt, waitForAlternate, withheldWait, withVoicemailLeft } from './attempt-end.ts';
import { newLiveCall, placeCall, subscribedProvider as subscribe } from './dial.ts';
import { hangUp as askHangup } from './hangups.ts';
import { recordTransition } from './ledger.ts';
import { dialAuditFor, judgeDial, queueClaimedDialAudit } from './dial-audit.ts';
import type { LiveCall, ProviderEvent, SessionSeam, WorkerState } from './state.ts';
import { hasFrequencyRule } from '../../domain/compliance/profiles.ts';

const ALTERNATE_AFTER: ReadonlySet<string> = new Set(['no_answer', 'busy', 'failed']);
/** Failures of our own making or of the account (DialRejectedError): the alternate number would fail the same way. */
const NO_ALTERNATE_REASONS: ReadonlySet<string> = new Set([
  'no_caller_id',
  'provider_unavailable',
  'provider_not_configured',
  'provider_auth_failed',
  'payment_required',
]);
/** How long a call waits when the frequency check of its number could not be made. */
const FREQUENCY_CHECK_RETRY_MS = 60_000;

/** This worker's answers to what the lower parts of a session hand back. */
function seamOf(s: WorkerState): SessionSeam {
  return {
    ended: (call, result) => callEnded(s, call, result),
    event: (e) => onProviderEvent(s, e),
    withheld: (call, permit) => withholdDial(s, call, permit),
  };
}

/** The provider, subscribed to: its events reach this worker's calls. */
export function subscribedProvider(s: WorkerState, p: VoiceProvider): VoiceProvider {
  return subscribe(s, p, seamOf(s));
}

/** Asks the provider to end the call; false when it was already asked (or has now been ended here). */
export function hangUp(s: WorkerState, call: LiveCall, reason: HangupReason, now: Date): boolean {
  return askHangup(s, call, reason, now, seamOf(s));
}

/**
 * Dials one account's claimed calls: each is watched and judged (dial permission), the permitted
 * ones get their caller IDs in one round (worker/caller-id.ts), then each is dialled or withheld.
 */
export async function dialClaimed(s: WorkerState, accountId: string, claimed: readonly ClaimedCall[]): Promise<void> {
  const calls = claimed.flatMap((c) => startClaimed(s, c) ?? []);
  const permitted = calls.filter((c) => c.permit?.allowed);
  const waits = await chooseCallerIds(s, accountId, permitted);
  await Promise.all(calls.map((c) => dialStarted(s, c, waits.get(c.callId))));
}

/** Starts watching a call this worker just claimed and judges its dial; null: its batch is gone. */
function startClaimed(s: WorkerState, c: ClaimedCall): LiveCall | null {
  const ctx = s.caches.contexts.get(c.batchId);
  if (!ctx) {
    // The batch vanished (deleted with its account). Left alone, the lease lapses and recovery settles it.
    s.log.error({ callId: c.id, batchId: c.batchId }, 'claimed call without batch settings; not dialled');
    return null;
  }
  const call = newLiveCall(ctx, {
    callId: c.id,
    batchId: c.batchId,
    accountId: c.accountId,
    status: 'ringing',
    number: c.dialledNumber,
    alternatePhone: c.alternatePhone,
    usedAlternate: c.usedAlternate,
    attempts: c.attempts,
    timezone: c.timezone,
    contactZone: c.contactTimezone,
    dialledAt: c.dialledAt,
    // The claim's own lease: it ran from the claim's clock reading.
    leaseUntil: c.dialledAt.getTime() + s.settings.leaseMs,
    contact: { externalId: c.externalId, name: c.name, metadata: c.metadata },
  });
  s.book.live.set(call.callId, call);
  if (s.logTransitions)
    s.log.info({ callId: c.id, batchId: c.batchId, from: 'queued', to: 'ringing', number: c.dialledNumber, attempt: c.attempts }, 'call transition');
  // The claim picks calls by the window slots stored at create (or at a retry, a sweep, a lease's
  // recovery); whether the dial may be made is decided here, for every dial - first, retry,
  // waiting alternate, a lost worker's call put back - by the one function: the number's own zones
  // and the contact's, the batch's windows and its compliance rules, now.
  call.permit = judgeDial(call, c.dialledAt);
  return call;
}

/** A judged claimed call: withheld (its window, or no caller ID under the caps until `callerIdWait`), or dialled. */
function dialStarted(s: WorkerState, call: LiveCall, callerIdWait: CallerIdWait | undefined): Promise<void> {
  const permit = call.permit!;
  if (s.book.live.get(call.callId) !== call) return Promise.resolve();
  if (!permit.allowed) return withholdDial(s, call, permit);
  if (callerIdWait) return waitForCallerId(s, call, callerIdWait);
  return auditAndPlace(s, call, permit);
}

/**
 * No number of the pool (or the batch's own) may dial now, or the choice failed: the call waits,
 * not dialled, its claim taken back (a failed choice as a retry: no cap was seen).
 */
function waitForCallerId(s: WorkerState, call: LiveCall, wait: CallerIdWait): Promise<void> {
  const next: RetryTime = { at: wait.at, windowClosesAt: null };
  // A claimed alternate keeps waiting as an alternate (its claim dials the alternate again).
  if (call.usedAlternate) return waitForAlternate(s, call, next, null);
  if (wait.failed) return withheldWait(s, call, next, 'retry', { reason: CALLER_ID_CHECK_FAILED });
  return withheldWait(s, call, next, CALLER_ID_CAP_WAIT_REASON, {});
}

/** A claimed dial: a rule's frequency limit is counted, its audit entry is queued to ride with the call's next write, then the dial. */
async function auditAndPlace(s: WorkerState, call: LiveCall, permit: DialAnswer): Promise<void> {
  const counted = permit.checks.frequency.length > 0 || hasFrequencyRule(call.number);
  if (counted && !(await withinFrequencyLimits(s, call, permit))) return;
  queueClaimedDialAudit(s, call, dialAuditFor(call, permit, call.dialledAt));
  return placeCall(s, call, seamOf(s));
}

/**
 * A claimed dial the check refused: the call waits for the opening (the alternate number by its
 * own path), or, when there is none within the horizon (or no zone to judge it in), ends failed
 * with \`no_calling_window\` without being dialled.
 */
function withholdDial(s: WorkerState, call: LiveCall, permit: Extract<DialAnswer, { allowed: false }>): Promise<void> {
  if (permit.opensAt && permit.closesAt) {
    // A batch without windows (its rules come from profiles) keeps no window close: no sweep moves its calls.
    const next: RetryTime = { at: permit.opensAt, windowClosesAt: call.ctx.windows.length > 0 ? permit.closesAt : null };
    if (call.usedAlternate) return waitForAlternate(s, call, next, null);
    return withheldWait(s, call, next, 'calling_window', { zones: permit.zones, rules: permit.rules });
  }
  if (s.logTransitions) s.log.info({ callId: call.callId, batchId: call.batchId, reason: permit.reason }, 'dial withheld: its window never opens');
  endCall(s, call, failedDial(s, call, 'no_calling_window', { not_dialled: permit.reason }));
  return Promise.resolve();
}

/**
 * A number bound by a compliance rule's frequency limit (e.g. 3 calls in 24 hours): the dial is
 * counted against it first (dial-frequency-check.ts); over the limit, the call waits until a dial
 * leaves the period (false). A failed check withholds the dial too: an unknown count is no free one.
 */
async function withinFrequencyLimits(s: WorkerState, call: LiveCall, permit: DialAnswer): Promise<boolean> {
  let verdict: FrequencyVerdict;
  // Counted as a dial in flight, so settling and shutdown wait for the check.
  s.book.dialsInFlight += 1;
  try {
    verdict = await checkDialFrequency(s.deps, {
      accountId: call.accountId,
      callId: call.callId,
      phoneNumber: call.number,
      now: call.dialledAt,
      limits: permit.checks.frequency,
    });
  } catch (err) {
    s.log.warn({ err, callId: call.callId }, 'frequency check of a compliance rule failed; not dialled');
    verdict = { until: new Date(s.clock.now().getTime() + FREQUENCY_CHECK_RETRY_MS), rule: 'check_failed' };
  } finally {
    s.book.dialsInFlight -= 1;
  }
  if (s.book.live.get(call.callId) !== call) return false;
  if (verdict === 'ok') return true;
  await withheldWait(s, call, { at: verdict.until, windowClosesAt: null }, FREQUENCY_CAP_WAIT_REASON, { rule: verdict.rule });
  return false;
}

function onProviderEvent(s: WorkerState, e: ProviderEvent): void {
  const call = s.book.liveByProviderCall.get(e.providerCallId);
  if (!call) {
    // placeCall has not returned yet for a provider that reports eagerly; keep the event briefly.
    if (s.book.dialsInFlight > 0) {
      const list = s.book.eventsBeforeDial.get(e.providerCallId) ?? [];
      list.push(e);
      s.book.eventsBeforeDial.set(e.providerCallId, list);
      s.scheduler.setTimeout(() => s.book.eventsBeforeDial.delete(e.providerCallId), 60_000, { background: true });
    }
    return;
  }
  switch (e.type) {
    case 'ringing':
      if (call.status === 'queued') recordTransition(s, call, 'ringing', e.at);
      return;
    case 'answered':
      markAnswered(s, call, e.at);
      return;
    case 'ended':
      s.book.liveByProviderCall.delete(e.providerCallId);
      callEnded(s, call, e.result);
      return;
  }
}

export function markAnswered(s: WorkerState, call: LiveCall, at: Date): void {
  call.answered = true;
  call.answeredAt = at;
  recordTransition(s, call, 'answered', at);
  recordTransition(s, call, 'in_progress', at);
}

function wantsAlternate(s: WorkerState, call: LiveCall, result: CallEndResult): boolean {
  return (
    call.ctx.useAlternateNumber &&
    !!call.alternatePhone &&
    call.alternatePhone !== call.number &&
    !call.usedAlternate &&
    !call.answered &&
    result.answeredAt === null &&
    ALTERNATE_AFTER.has(result.status) &&
    !NO_ALTERNATE_REASONS.has(result.disconnectReason) &&
    !call.hangup &&
    !s.lifecycle.windingDown &&
    (!call.ctx.retry || call.attempts < call.ctx.retry.maxAttempts)
  );
}

function callEnded(s: WorkerState, call: LiveCall, ended: CallEndResult): void {
  if (s.book.live.get(call.callId) !== call) return;
  const result = withVoicemailLeft(ended, call.ctx.voicemail);
  if (wantsAlternate(s, call, result)) {
    void dialAlternateIfAllowed(s, call, result, seamOf(s));
    return;
  }
  finishAttempt(s, call, result);
}
