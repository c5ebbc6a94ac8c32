// One call's life in this worker, from the claim to its end: the dial (paced per from-number),
// the provider's events (ringing, answered, ended), the alternate number after an unanswered
// first dial, hang-ups, and then either a retry (back in line, by the batch's retry policy) or the
// end write that hands an answered call to analysis.
import type { WaitReason } from '../../domain/wait-reason.ts';
import type { CallWrite } from '../../services/calls/call-transitions.ts';
import type { ClaimedCall } from '../store/claim-calls.ts';
import { alternateDialWrite, alternateWaitWrite, dialWithheldWrite, endedWrite, retryWrite, type RetryTime } from '../store/call-writes.ts';
import { checkDialFrequency, type FrequencyVerdict } from '../store/dial-frequency-check.ts';
import { FREQUENCY_CAP_WAIT_REASON } from '../../domain/frequency-cap.ts';
import { attemptOutcome } from '../../domain/attempt-outcome.ts';
import { nextAttemptAt, retryInWindow } from '../../domain/retry-policy.ts';
import type { DialAnswer } from '../../domain/dial-permission.ts';
import type { DispatchContext } from '../store/dispatch-context.ts';
import { SUPPRESSED_DISCONNECT_REASON } from '../../domain/suppressions.ts';
import { ALTERNATE_NEVER_OPENS, checkAlternateDial, type AlternateDialCheck } from '../store/alternate-dial-check.ts';
import { DialForfeitedError, DialRejectedError, type CallEndResult, type HangupReason, type PlaceCallRequest, type ProviderCallRef, type VoiceProvider } from '../voice/provider.ts';
import { analyseCall } from './analysis.ts';
import { callRef, checkTransition, dropLostCall, enqueueWrite, recordTransition, stopWatching } from './ledger.ts';
import { dialOwnership, leaseCovers, mayAct } from './ownership.ts';
import { dialAuditFor, judgeDial, queueClaimedDialAudit } from './dial-audit.ts';
import { sleep, type LiveCall, type ProviderEvent, type WorkerState } from './state.ts';
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
/** The provider call id is written with the call's next change, or on its own after this long. */
const PROVIDER_ID_DEFER_MS = 250;

/** The provider, subscribed to: its events reach this worker's calls. */
export function subscribedProvider(s: WorkerState, p: VoiceProvider): VoiceProvider {
  if (!s.subscriptions.has(p)) s.subscriptions.set(p, p.onEvent((e) => onProviderEvent(s, e)));
  return p;
}

export function placeCallRequest(call: LiveCall): PlaceCallRequest {
  return {
    callId: call.callId,
    batchId: call.batchId,
    accountId: call.accountId,
    attempt: call.attempts,
    from: call.ctx.from ?? '',
    to: call.number,
    agent: call.ctx.agent,
    prompt: call.ctx.prompt,
    contact: call.contact,
    recordingEnabled: call.ctx.recordingEnabled,
    interruption: call.ctx.interruption,
    maxDurationSeconds: call.ctx.maxDurationSeconds,
  };
}

/** Starts watching a call this worker just claimed, and dials it. */
export function dialClaimed(s: WorkerState, c: ClaimedCall): Promise<void> {
  const ctx = s.contexts.get(c.batchId);
  if (!ctx) {
    // The batch vanished (deleted with its account). Left alone, the lease lapses and recovery settles it.
    s.log.error({ callId: c.id, batchId: c.batchId }, 'claimed call without batch settings; not dialled');
    return Promise.resolve();
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
  s.live.set(call.callId, call);
  if (s.logTransitions) s.log.info({ callId: c.id, batchId: c.batchId, from: 'queued', to: 'ringing', number: c.dialledNumber, attempt: c.attempts }, 'call transition');
  // The claim picks calls by the window slots stored at create (or at a retry, a sweep, a lease's
  // recovery); whether the dial may be made is decided here, for every dial - first, retry,
  // waiting alternate, a lost worker's call put back - by the one function: the number's own zones
  // and the contact's, the batch's windows and its compliance rules, now.
  const permit = judgeDial(call, c.dialledAt);
  call.permit = permit;
  if (!permit.allowed) return withholdDial(s, call, permit);
  return auditAndPlace(s, call, permit);
}

/** A claimed dial: a rule's frequency limit is counted, its audit entry is queued to ride with the call's next write, then the dial. */
async function auditAndPlace(s: WorkerState, call: LiveCall, permit: DialAnswer): Promise<void> {
  const counted = permit.checks.frequency.length > 0 || hasFrequencyRule(call.number);
  if (counted && !(await withinFrequencyLimits(s, call, permit))) return;
  queueClaimedDialAudit(s, call, dialAuditFor(call, permit, call.dialledAt));
  return placeCall(s, call);
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

/** Puts a claimed call whose dial was withheld back in line until \`next\` (dialWithheldWrite). */
function withheldWait(s: WorkerState, call: LiveCall, next: RetryTime, reason: WaitReason, detail: Record<string, unknown>): Promise<void> {
  stopWatching(s, call);
  s.ending.add(call.callId);
  const from = call.status;
  checkTransition(s, call, from, 'queued');
  call.status = 'queued';
  const write = dialWithheldWrite(callRef(call), s.settings.id, from, { number: call.number, at: s.clock.now(), next, reason, detail });
  if (s.logTransitions) s.log.info({ callId: call.callId, batchId: call.batchId, number: call.number, reason, opensAt: next.at }, 'dial withheld until its opening');
  return enqueueWrite(s, write, call.ctx.callbackUrl).then((ok) => {
    s.ending.delete(call.callId);
    if (!ok) s.log.warn({ callId: call.callId, batchId: call.batchId }, 'withheld dial not recorded: call no longer leased by this worker');
  });
}

/**
 * A number bound by a compliance rule's frequency limit (e.g. 3 calls in 24 hours): the dial is
 * counted against it first (dial-frequency-check.ts); over the limit, the call waits until a dial
 * leaves the period (false). A failed check withholds the dial too: an unknown count is no free one.
 */
async function withinFrequencyLimits(s: WorkerState, call: LiveCall, permit: DialAnswer): Promise<boolean> {
  let verdict: FrequencyVerdict;
  // Counted as a dial in flight, so settling and shutdown wait for the check.
  s.dialsInFlight += 1;
  try {
    verdict = await checkDialFrequency(s.deps, { accountId: call.accountId, callId: call.callId, phoneNumber: call.number, now: call.dialledAt, limits: permit.checks.frequency });
  } catch (err) {
    s.log.warn({ err, callId: call.callId }, 'frequency check of a compliance rule failed; not dialled');
    verdict = { until: new Date(s.clock.now().getTime() + FREQUENCY_CHECK_RETRY_MS), rule: 'check_failed' };
  } finally {
    s.dialsInFlight -= 1;
  }
  if (s.live.get(call.callId) !== call) return false;
  if (verdict === 'ok') return true;
  await withheldWait(s, call, { at: verdict.until, windowClosesAt: null }, FREQUENCY_CAP_WAIT_REASON, { rule: verdict.rule });
  return false;
}

export function newLiveCall(
  ctx: DispatchContext,
  c: Omit<LiveCall, 'ctx' | 'provider' | 'providerCallId' | 'answered' | 'answeredAt' | 'hangup'> & Partial<LiveCall>,
): LiveCall {
  return { provider: null, providerCallId: null, answered: false, answeredAt: null, hangup: null, ...c, ctx };
}

/** A dial that never reached the provider ends the call like a failed dial would. */
function failedDial(s: WorkerState, call: LiveCall, reason: string, detail?: Record<string, unknown>): CallEndResult {
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

/** The dial's pacing slot (normally free at once: the claim only took calls that may start now). */
async function waitForDialSlot(s: WorkerState, call: LiveCall, provider: VoiceProvider): Promise<void> {
  if (!provider.dialRate || !call.ctx.from) return;
  const rate = await provider.dialRate(call.accountId);
  const wait = s.pacer.take(call.ctx.from, rate);
  if (wait <= 0) return;
  await sleep(wait);
  // The max-duration clock starts when the call is really placed.
  call.dialledAt = s.clock.now();
}

async function placeCall(s: WorkerState, call: LiveCall): Promise<void> {
  if (!call.ctx.from) return callEnded(s, call, failedDial(s, call, 'no_caller_id'));
  let provider: VoiceProvider;
  try {
    provider = subscribedProvider(s, s.providers.get(call.ctx.provider));
  } catch (err) {
    s.log.error({ err, callId: call.callId, provider: call.ctx.provider }, 'voice provider unavailable');
    return callEnded(s, call, failedDial(s, call, 'provider_unavailable'));
  }
  call.provider = provider;
  s.dialsInFlight += 1;
  try {
    await waitForDialSlot(s, call, provider);
    // Right before the dial, the lease must still be ours for longer than the dial can take: the
    // claim's is, unless this process stalled since (else a conditional write confirms it).
    const ownership = dialOwnership(s, call);
    if (!(await ownership.confirmDial())) return forfeitDial(s, call);
    const { providerCallId } = await provider.placeCall(placeCallRequest(call), ownership);
    s.deps.metrics.callsPlaced.inc();
    if (s.live.get(call.callId) !== call) {
      // Lost while dialling: whoever took the call over finds it at the provider (recovery looks
      // it up) and watches it; this process touches it no more.
      provider.forget?.(providerCallId);
      return;
    }
    call.providerCallId = providerCallId;
    s.liveByProviderCall.set(providerCallId, call);
    // Only recovery (provider lookup) reads it, and recovery starts a lease length later anyway.
    const idWrite: CallWrite = { ...callRef(call), owner: s.settings.id, from: call.status, to: call.status, events: [], set: { providerCallId } };
    void enqueueWrite(s, idWrite, call.ctx.callbackUrl, { deferMs: PROVIDER_ID_DEFER_MS }).then((ok) => {
      if (!ok) dropLostCall(s, call, 'provider id');
    });
    if (call.hangup) await requestHangup(s, call, call.hangup.reason);
    const buffered = s.eventsBeforeDial.get(providerCallId);
    if (buffered) {
      s.eventsBeforeDial.delete(providerCallId);
      for (const e of buffered) onProviderEvent(s, e);
    }
  } catch (err) {
    if (err instanceof DialForfeitedError) {
      forfeitDial(s, call);
    } else if (err instanceof DialRejectedError) {
      s.log.warn({ callId: call.callId, reason: err.disconnectReason, message: err.message }, 'provider rejected the call');
      callEnded(s, call, failedDial(s, call, err.disconnectReason, err.detail));
    } else {
      s.log.warn({ err, callId: call.callId }, 'dial failed');
      callEnded(s, call, failedDial(s, call, 'dial_error', { error: err instanceof Error ? err.message : String(err) }));
    }
  } finally {
    s.dialsInFlight -= 1;
  }
}

/** Not dialled: the call is no longer surely ours. Nothing is written; its new owner or its lease's lapse settles it. */
function forfeitDial(s: WorkerState, call: LiveCall): void {
  if (s.live.get(call.callId) !== call) return;
  s.log.warn({ callId: call.callId, batchId: call.batchId }, 'lease not confirmed before the dial; not dialled');
  stopWatching(s, call);
}

function onProviderEvent(s: WorkerState, e: ProviderEvent): void {
  const call = s.liveByProviderCall.get(e.providerCallId);
  if (!call) {
    // placeCall has not returned yet for a provider that reports eagerly; keep the event briefly.
    if (s.dialsInFlight > 0) {
      const list = s.eventsBeforeDial.get(e.providerCallId) ?? [];
      list.push(e);
      s.eventsBeforeDial.set(e.providerCallId, list);
      setTimeout(() => s.eventsBeforeDial.delete(e.providerCallId), 60_000).unref?.();
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
      s.liveByProviderCall.delete(e.providerCallId);
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
    !s.stopping &&
    (!call.ctx.retry || call.attempts < call.ctx.retry.maxAttempts)
  );
}

/**
 * When an unanswered attempt is tried again under the batch's retry policy, at the first opening of
 * its calling windows from then on; null: it was the last.
 */
function retryAt(call: LiveCall, result: CallEndResult): RetryTime | null {
  // Reached someone, or ended by us (cancel, max duration, shutdown): never retried.
  if (call.answered || result.answeredAt !== null || call.hangup) return null;
  const limits = { policy: call.ctx.retry, expiresAt: call.ctx.expiresAt };
  const at = nextAttemptAt({ attempts: call.attempts, outcome: attemptOutcome(result), endedAt: result.endedAt }, limits);
  if (!at || call.ctx.windows.length === 0) return at && { at, windowClosesAt: null };
  return retryInWindow(at, call.ctx.windows, call.timezone, limits.expiresAt);
}

function callEnded(s: WorkerState, call: LiveCall, result: CallEndResult): void {
  if (s.live.get(call.callId) !== call) return;
  if (wantsAlternate(s, call, result)) {
    void dialAlternateIfAllowed(s, call, result);
    return;
  }
  finishAttempt(s, call, result);
}

/** The call's last dial of this round ended: it goes back in line for a retry, or ends. */
function finishAttempt(s: WorkerState, call: LiveCall, result: CallEndResult): void {
  const at = retryAt(call, result);
  if (at) scheduleRetry(s, call, result, at);
  else endCall(s, call, result);
}

function scheduleRetry(s: WorkerState, call: LiveCall, result: CallEndResult, at: RetryTime): void {
  stopWatching(s, call);
  s.ending.add(call.callId);
  const from = call.status;
  checkTransition(s, call, from, 'queued');
  call.status = 'queued';
  const write = retryWrite(callRef(call), s.settings.id, from, result, call.number, call.attempts, at);
  void enqueueWrite(s, write, call.ctx.callbackUrl).then((ok) => {
    s.ending.delete(call.callId);
    if (!ok) s.log.warn({ callId: call.callId, batchId: call.batchId }, 'retry not recorded: call no longer leased by this worker');
  });
}

/**
 * An alternate number put on the do-not-call list after the create, one whose windows never open
 * in its own zones, or one the account's frequency cap holds back (its dials in the period are
 * used up), is not dialled: the call ends as it would have without an alternate, with the primary
 * attempt's result. One whose window is closed now waits for its opening (waitForAlternate). An
 * allowed dial counts toward the alternate number's cap.
 */
async function dialAlternateIfAllowed(s: WorkerState, call: LiveCall, previous: CallEndResult): Promise<void> {
  let check: AlternateDialCheck = SUPPRESSED_DISCONNECT_REASON;
  // Counted as a dial in flight, so settling and shutdown wait for the check.
  s.dialsInFlight += 1;
  try {
    check = await checkAlternateDial(s.deps, { accountId: call.accountId, callId: call.callId, phoneNumber: call.alternatePhone!, now: s.clock.now(), windows: call.ctx.windows, profiles: call.ctx.profiles });
  } catch (err) {
    // Unknown counts as listed: a missed alternate is better than a dialled refused number.
    s.log.warn({ err, callId: call.callId }, 'do-not-call check of the alternate number failed; not dialled');
  } finally {
    s.dialsInFlight -= 1;
  }
  if (s.live.get(call.callId) !== call) return;
  if (check === 'ok') return dialAlternate(s, call, previous);
  const expiresAt = call.ctx.expiresAt;
  if (typeof check === 'object' && (!expiresAt || check.opensAt.getTime() < expiresAt.getTime())) {
    return waitForAlternate(s, call, { at: check.opensAt, windowClosesAt: check.closesAt }, previous);
  }
  const reason = typeof check === 'object' ? ALTERNATE_NEVER_OPENS : check;
  if (s.logTransitions) s.log.info({ callId: call.callId, batchId: call.batchId, reason }, 'alternate number not dialled');
  // The history's end entry says why the alternate was not tried.
  finishAttempt(s, call, { ...previous, detail: { ...previous.detail, alternate_not_dialled: reason } });
}

/**
 * The alternate number's window is closed now: the call goes back in line until it opens, and the
 * claim then dials the alternate. `previous`: the primary attempt just ended; null: a claim of the
 * alternate found its window closed after all (the claim's count of that dial is taken back).
 */
function waitForAlternate(s: WorkerState, call: LiveCall, next: RetryTime, previous: CallEndResult | null): Promise<void> {
  stopWatching(s, call);
  s.ending.add(call.callId);
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
  if (s.logTransitions) s.log.info({ callId: call.callId, batchId: call.batchId, number: alternate, opensAt: next.at }, 'alternate number waits for its calling window');
  return enqueueWrite(s, write, call.ctx.callbackUrl).then((ok) => {
    s.ending.delete(call.callId);
    if (!ok) s.log.warn({ callId: call.callId, batchId: call.batchId }, 'alternate wait not recorded: call no longer leased by this worker');
  });
}

function endCall(s: WorkerState, call: LiveCall, result: CallEndResult): void {
  stopWatching(s, call);
  s.ending.add(call.callId);
  const from = call.status;
  checkTransition(s, call, from, result.status);
  call.status = result.status;
  const byProvider = call.provider?.analyse && call.providerCallId ? { provider: call.provider, providerCallId: call.providerCallId } : null;
  const { write, needsAnalysis } = endedWrite(callRef(call), s.settings.id, from, result, call.number, {
    detail: call.hangup ? { hangup_reason: call.hangup.reason } : undefined,
    recordingWithAnalysis: true,
    providerAnalysis: !!byProvider,
  });
  void enqueueWrite(s, write, call.ctx.callbackUrl).then((ok) => {
    s.ending.delete(call.callId);
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

async function dialAlternate(s: WorkerState, call: LiveCall, previous: CallEndResult): Promise<void> {
  const alternate = call.alternatePhone!;
  const write = alternateDialWrite(callRef(call), s.settings.id, call.status, { number: call.number, result: previous }, alternate, call.attempts + 1);
  const previousNumber = call.number;
  call.number = alternate;
  call.usedAlternate = true;
  call.attempts += 1;
  call.providerCallId = null;
  call.dialledAt = s.clock.now();
  // Its audit entry rides in the same write.
  write.audits = [dialAuditFor(call, judgeDial(call, call.dialledAt), call.dialledAt)];
  // The durable record of this dial commits before the dial: a crash in between never redials.
  const ok = await enqueueWrite(s, write, call.ctx.callbackUrl);
  if (!ok) return dropLostCall(s, call, 'alternate dial');
  if (s.logTransitions) s.log.info({ callId: call.callId, batchId: call.batchId, number: alternate, previousNumber, previousStatus: previous.status }, 'dialling alternate number');
  await placeCall(s, call);
}

/** Asks the provider to end the call; false when it was already asked (or has now been ended here). */
export function hangUp(s: WorkerState, call: LiveCall, reason: HangupReason, now: Date): boolean {
  if (call.hangup) {
    if (now.getTime() - call.hangup.at.getTime() > s.settings.leaseMs) void settleUnendedHangup(s, call, now);
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
async function settleUnendedHangup(s: WorkerState, call: LiveCall, now: Date): Promise<void> {
  const hangup = call.hangup!;
  if (hangup.checking) return;
  const patient = now.getTime() - hangup.since.getTime() <= s.settings.leaseMs * HANGUP_PATIENCE_LEASES;
  if (call.provider?.lookup && call.providerCallId && patient) {
    hangup.checking = true;
    const ref: ProviderCallRef = { callId: call.callId, accountId: call.accountId, attempt: call.attempts, recordingEnabled: call.ctx.recordingEnabled };
    const found = await call.provider.lookup(call.providerCallId, ref).catch((err: unknown) => {
      s.log.warn({ err, callId: call.callId }, 'provider record of a hung-up call not read; asking again later');
      return { state: 'unknown' } as const;
    });
    hangup.checking = false;
    if (s.live.get(call.callId) !== call) return;
    if (found.state === 'ended') return callEnded(s, call, found.result);
    hangup.at = s.clock.now();
    return requestHangup(s, call, hangup.reason);
  }
  s.log.warn({ callId: call.callId, reason: hangup.reason }, 'provider did not end the call after hangup; ending it');
  const answeredAt = call.answered ? (call.answeredAt ?? call.dialledAt) : null;
  callEnded(s, call, { ...failedDial(s, call, 'provider_unresponsive'), status: answeredAt ? 'completed' : 'failed', answeredAt });
}

/** Sends the hang-up only while the call is still this worker's (a stale process may be deciding on an old view). */
async function requestHangup(s: WorkerState, call: LiveCall, reason: HangupReason): Promise<void> {
  if (!call.provider || !call.providerCallId || !(await mayAct(s, call, { during: 'hang-up' }))) return;
  const holdsNow = () => leaseCovers(s, call);
  await call.provider.hangup(call.providerCallId, reason, { accountId: call.accountId, holdsNow }).catch((err) => s.log.warn({ err, callId: call.callId }, 'hangup failed'));
}
