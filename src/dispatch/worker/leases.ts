// This worker's leases on the calls it holds: renewed when a third of a lease has passed, by a
// timer of their own while anyone needs them kept (the loop, a recovery round, shutdown), so no
// slow step elsewhere lets them lapse; expired at once when calls are handed to another worker.
import { expireLeasesNow, renewLeases } from '../store/lease-recovery.ts';
import { dropLostCall } from './ledger.ts';
import { repeat } from '../../scheduler.ts';
import { heldCallIds, type WorkerState } from './state.ts';

/** Renews this worker's leases when a third of a lease has passed since the last renewal. */
export function renewLeasesIfDue(s: WorkerState, now: Date): Promise<void> {
  // One renewal at a time (the tick and the keeper may both ask).
  s.leases.renewal ??= renewIfDue(s, now).finally(() => {
    s.leases.renewal = null;
  });
  return s.leases.renewal;
}

async function renewIfDue(s: WorkerState, now: Date): Promise<void> {
  const ids = heldCallIds(s);
  if (ids.length === 0 || now.getTime() - s.leases.lastRenewal < s.settings.leaseMs / 3) {
    if (ids.length === 0) s.leases.lastRenewal = now.getTime();
    return;
  }
  const liveBefore = new Map(s.book.live);
  const expiresAt = now.getTime() + s.settings.leaseMs;
  const held = await renewLeases(s.deps, s.settings.id, ids, new Date(expiresAt));
  s.leases.lastRenewal = now.getTime();
  // Only a call still in flight can have lost its lease to another worker: ended ones may simply
  // have released theirs meanwhile, and their own writes notice if they were taken over. A lost
  // one is dropped untouched, however long this process was paused or cut off: its new owner has it.
  for (const [callId, call] of liveBefore) {
    if (s.book.live.get(callId) !== call) continue;
    if (held.has(callId)) call.leaseUntil = Math.max(call.leaseUntil, expiresAt);
    else dropLostCall(s, call, 'lease renewal');
  }
}

/** Keeps leases renewed on a timer until the returned release function is called. */
export function keepLeases(s: WorkerState): () => void {
  s.leases.keepers += 1;
  s.leases.stopTimer ??= repeat(
    s.scheduler,
    Math.max(20, Math.min(s.settings.leaseMs / 6, 5_000)),
    () => void renewLeasesIfDue(s, s.clock.now()).catch((err) => s.log.warn({ err }, 'lease renewal failed')),
    { background: true },
  );
  let released = false;
  return () => {
    if (released) return;
    released = true;
    s.leases.keepers -= 1;
    if (s.leases.keepers === 0 && s.leases.stopTimer) {
      s.leases.stopTimer();
      s.leases.stopTimer = null;
    }
  };
}

/** Expires these leases now, so the next worker's recovery takes the calls over at once. */
export async function handOverLeases(s: WorkerState, callIds: string[]): Promise<void> {
  try {
    await expireLeasesNow(s.deps, s.settings.id, callIds, s.clock.now());
  } catch (err) {
    s.log.warn({ err, calls: callIds.length }, 'could not expire handed-over leases; they lapse on their own');
  }
}
