// Claim rounds: due calls are leased to this worker, account by account (accounts take turns at
// going first), within its free slots, each account's fair share of its batches and the dial
// pacing of its provider, then dialled at once.
import { accountsWithWaitingCalls, claimCalls } from '../store/claim-calls.ts';
import { dialClaimed } from './call-session.ts';
import { dialPacing, forgetStaleWindows, loadBatchSettings, refreshAccountProviders } from './providers.ts';
import type { WorkerState } from './state.ts';

export interface ClaimRound {
  claimed: number;
  /** More calls are waiting than this round could take. */
  more: boolean;
}

/** `only`: accounts known to have free slots (a call of theirs just ended); default: all with waiting calls. */
export function claimRound(s: WorkerState, only?: string[]): Promise<ClaimRound> {
  const round = claimFor(s, only);
  s.loop.claiming = round.then(
    () => undefined,
    () => undefined,
  );
  return round;
}

async function claimFor(s: WorkerState, only?: string[]): Promise<ClaimRound> {
  if (s.lifecycle.windingDown) return { claimed: 0, more: false };
  let budget = s.settings.maxInFlight - s.book.live.size;
  if (budget <= 0) return { claimed: 0, more: false };
  const accounts = only ?? (await accountsWithWaitingCalls(s.deps));
  if (accounts.length === 0) return { claimed: 0, more: false };
  const start = s.loop.claimRotation++ % accounts.length;
  const order = [...accounts.slice(start), ...accounts.slice(0, start)];
  await refreshAccountProviders(s, order);
  let claimed = 0;
  let more = false;
  for (const accountId of order) {
    if (budget <= 0 || s.lifecycle.windingDown) {
      more = true;
      break;
    }
    const r = await claimCalls(s.deps, {
      accountId,
      workerId: s.settings.id,
      clock: () => s.clock.now(),
      leaseMs: s.settings.leaseMs,
      budget: Math.min(budget, s.settings.claimBatchSize),
      rotate: s.loop.claimRotation,
      // Paced-out batches take nothing now: the next poll comes within the pacing horizon.
      limitAllocation: await dialPacing(s, accountId),
    });
    if (r.budgetExhausted) more = true;
    if (r.claimed.length === 0) continue;
    try {
      forgetStaleWindows(s, r.claimed);
      await loadBatchSettings(
        s,
        r.claimed.map((c) => c.batchId),
      );
    } catch (err) {
      s.log.error({ err }, 'could not load batch settings for claimed calls; their leases will lapse and be recovered');
      continue;
    }
    budget -= r.claimed.length;
    claimed += r.claimed.length;
    await dialClaimed(s, accountId, r.claimed);
  }
  return { claimed, more };
}
