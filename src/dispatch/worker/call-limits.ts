// Calls that must end early: their batch was cancelled, or they ran past the batch's maximum
// duration. The provider is asked to hang up; one that ignores it is ended here a lease later.
import { batchStatuses } from '../store/lease-recovery.ts';
import { hangUp } from './call-session.ts';
import type { WorkerState } from './state.ts';

/** Returns how many calls were asked to hang up. */
export async function enforceCallLimits(s: WorkerState, now: Date): Promise<number> {
  if (s.book.live.size === 0) return 0;
  const statuses = await batchStatuses(s.deps, [...new Set([...s.book.live.values()].map((c) => c.batchId))]);
  let n = 0;
  for (const call of [...s.book.live.values()]) {
    if (statuses.get(call.batchId) === 'cancelled') {
      if (hangUp(s, call, 'cancelled', now)) n++;
    } else if (now.getTime() - call.dialledAt.getTime() >= call.ctx.maxDurationSeconds * 1000) {
      if (hangUp(s, call, 'max_duration', now)) n++;
    }
  }
  return n;
}
