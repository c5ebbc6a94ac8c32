// The alternate number, dialled after an unanswered first dial: checked first (do-not-call list,
// its windows in its own zones, the frequency cap), then recorded - the durable record of the dial
// commits before the dial, so a crash in between never redials - then placed like any dial.
import { SUPPRESSED_DISCONNECT_REASON } from '../../domain/suppressions.ts';
import { ALTERNATE_NEVER_OPENS, checkAlternateDial, type AlternateDialCheck } from '../store/alternate-dial-check.ts';
import { alternateDialWrite } from '../store/call-writes.ts';
import type { CallEndResult } from '../voice/provider.ts';
import { finishAttempt, waitForAlternate } from './attempt-end.ts';
import { dialAuditFor, judgeDial } from './dial-audit.ts';
import { placeCall } from './dial.ts';
import { chooseCallerIds } from './caller-id.ts';
import { CALLER_ID_CAP_WAIT_REASON } from '../../domain/caller-id.ts';
import { callRef, dropLostCall, enqueueWrite } from './ledger.ts';
import { attemptStats, dialledFrom } from './did-stats.ts';
import type { LiveCall, SessionSeam, WorkerState } from './state.ts';

/**
 * An alternate number put on the do-not-call list after the create, one whose windows never open
 * in its own zones, or one the account's frequency cap holds back (its dials in the period are
 * used up), is not dialled: the call ends as it would have without an alternate, with the primary
 * attempt's result. One whose window is closed now waits for its opening (waitForAlternate). An
 * allowed dial counts toward the alternate number's cap.
 */
export async function dialAlternateIfAllowed(s: WorkerState, call: LiveCall, previous: CallEndResult, seam: SessionSeam): Promise<void> {
  let check: AlternateDialCheck = SUPPRESSED_DISCONNECT_REASON;
  // Counted as a dial in flight, so settling and shutdown wait for the check.
  s.book.dialsInFlight += 1;
  try {
    check = await checkAlternateDial(s.deps, {
      accountId: call.accountId,
      callId: call.callId,
      phoneNumber: call.alternatePhone!,
      now: s.clock.now(),
      windows: call.ctx.windows,
      profiles: call.ctx.profiles,
    });
  } catch (err) {
    // Unknown counts as listed: a missed alternate is better than a dialled refused number.
    s.log.warn({ err, callId: call.callId }, 'do-not-call check of the alternate number failed; not dialled');
  } finally {
    s.book.dialsInFlight -= 1;
  }
  if (s.book.live.get(call.callId) !== call) return;
  if (check === 'ok') return dialAlternateFromPool(s, call, previous, seam);
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
 * The alternate's caller ID is chosen again by the same rule (its own area code and region). No
 * number under its cap: not dialled, the call ends with the primary attempt's result. A failed
 * choice (the database) is no cap: the alternate waits and is dialled later.
 */
async function dialAlternateFromPool(s: WorkerState, call: LiveCall, previous: CallEndResult, seam: SessionSeam): Promise<void> {
  // The first dial's caller ID, before the choice replaces it: its number's health counts that attempt.
  const previousFrom = dialledFrom(call);
  const waits = await chooseCallerIds(s, call.accountId, [call], (c) => c.alternatePhone!);
  if (s.book.live.get(call.callId) !== call) return;
  const wait = waits.get(call.callId);
  if (!wait) return dialAlternate(s, call, previous, seam, previousFrom);
  // The choice failed (the database), no cap seen: the alternate waits a minute and its claim dials it then.
  if (wait.failed) return waitForAlternate(s, call, { at: wait.at, windowClosesAt: null }, previous);
  if (s.logTransitions) s.log.info({ callId: call.callId, batchId: call.batchId, reason: CALLER_ID_CAP_WAIT_REASON }, 'alternate number not dialled');
  finishAttempt(s, call, { ...previous, detail: { ...previous.detail, alternate_not_dialled: CALLER_ID_CAP_WAIT_REASON } });
}

async function dialAlternate(s: WorkerState, call: LiveCall, previous: CallEndResult, seam: SessionSeam, previousFrom: string | null): Promise<void> {
  const alternate = call.alternatePhone!;
  const write = alternateDialWrite(
    callRef(call),
    s.settings.id,
    call.status,
    { number: call.number, result: previous },
    alternate,
    call.attempts + 1,
  );
  // The first dial's attempt ended: its number's health counts it (before this call's next dial).
  write.didStats = attemptStats(s, call, previous, previousFrom);
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
  if (s.logTransitions)
    s.log.info(
      { callId: call.callId, batchId: call.batchId, number: alternate, previousNumber, previousStatus: previous.status },
      'dialling alternate number',
    );
  await placeCall(s, call, seam);
}
