// The caller ID of each dial (docs/campaigns.md "Caller-ID pools and local presence"): chosen for
// a claim round's permitted dials at once (one transaction per account and round), and again for
// an alternate number's dial. A call that gets no number (every usable one capped today) is not
// dialled: it waits (wait_reason caller_id_cap) until the caps reset; one whose choice failed (the
// database) waits a minute as a retry (history reason caller_id_check_failed), not as capped.
import { callerIdWaitUntil, capDay } from '../../domain/caller-id.ts';
import { chooseCallerIdsFor } from '../store/caller-id-choice.ts';
import { restedOrFlagged } from '../../services/number-health/unavailable.ts';
import type { CallerIdReturn } from '../../services/calls/caller-id-returns.ts';
import type { LiveCall, WorkerState } from './state.ts';

/** How long calls wait when the choice itself failed (the database): an unknown count is no free dial. */
export const CALLER_ID_CHECK_RETRY_MS = 60_000;

/** The history reason of a dial withheld because the choice failed (wait_reason `retry`). */
export const CALLER_ID_CHECK_FAILED = 'caller_id_check_failed';

/** Until when a call without a number waits; `failed`: the choice itself failed, no cap was seen. */
export interface CallerIdWait {
  at: Date;
  failed: boolean;
}

/**
 * DID ids of this account not to dial from now, beside the capped ones: those number health rests
 * or the operator flagged (services/number-health/unavailable.ts).
 */
export function unavailableNumbers(s: WorkerState, accountId: string, now: Date): Promise<ReadonlySet<string>> {
  return restedOrFlagged(s.deps.db, accountId, now);
}

/**
 * Sets `call.from` on each call of one account that gets a number, placed to `to(call)`; returns
 * when each of the others may try again. A call with no number to choose from (no pool, no DID of
 * its own) gets neither: its dial fails no_caller_id as before.
 */
export async function chooseCallerIds(
  s: WorkerState,
  accountId: string,
  calls: readonly LiveCall[],
  to: (call: LiveCall) => string = (c) => c.number,
): Promise<Map<string, CallerIdWait>> {
  const waits = new Map<string, CallerIdWait>();
  if (calls.length === 0) return waits;
  const now = s.clock.now();
  let unavailable: ReadonlySet<string> = new Set();
  const requests = calls.map((c) => ({ callId: c.callId, to: to(c), fixedDidId: c.ctx.didNumberId }));
  // Counted as dials in flight, so settling and shutdown wait for the choice.
  s.book.dialsInFlight += 1;
  try {
    unavailable = await unavailableNumbers(s, accountId, now);
    const round = await chooseCallerIdsFor(s.deps, { accountId, workerId: s.settings.id, now, calls: requests, unavailable });
    calls.forEach((call, i) => {
      const choice = round.choices[i];
      if (choice) {
        call.from = choice.number.number;
        // Kept until the dial is placed: a dial that is not gives this count back (takeUnplacedCallerId).
        // A previous dial of this call that no provider placed (a refused primary) keeps its own.
        const earlier = call.providerCallId === null ? (call.callerIdCounts ?? []) : [];
        call.callerIdCounts = [...earlier, { didId: choice.number.id, day: capDay(now) }];
      } else if (round.lapsed.has(call.callId)) {
        // Not capped: the lease lapsed by this worker's clock before the count. It waits as a retry
        // (a lease-guarded write: nothing, if the call is another worker's now), not until tomorrow.
        waits.set(call.callId, { at: new Date(now.getTime() + CALLER_ID_CHECK_RETRY_MS), failed: true });
      } else if (round.pool.length > 0) waits.set(call.callId, { at: callerIdWaitUntil(round.pool, requests[i], unavailable, now), failed: false });
    });
  } catch (err) {
    s.log.warn({ err, accountId }, 'caller-ID choice failed; the calls wait');
    const retry = { at: new Date(now.getTime() + CALLER_ID_CHECK_RETRY_MS), failed: true };
    for (const c of calls) waits.set(c.callId, retry);
  } finally {
    s.book.dialsInFlight -= 1;
  }
  return waits;
}

/**
 * The caller-ID counts of dials that were not placed (no provider call: no provider took it, a
 * provider refused it, a limit withheld it), to be given back with the call's write
 * (services/calls/caller-id-returns.ts), and forgotten here. A provider call id means the latest
 * choice's dial was placed: that count stays.
 */
export function takeUnplacedCallerId(call: LiveCall): CallerIdReturn[] | undefined {
  const counts = call.callerIdCounts;
  if (!counts) return undefined;
  call.callerIdCounts = undefined;
  const unplaced = call.providerCallId === null ? counts : counts.slice(0, -1);
  return unplaced.length > 0 ? unplaced : undefined;
}
