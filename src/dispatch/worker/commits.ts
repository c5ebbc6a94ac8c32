// What follows a committed group of call writes: transitions are logged, finished batches leave
// the settings cache, and accounts whose calls ended get a claim round now rather than at the
// next poll.
import { counterBucket, isTerminalCall } from '../../domain/call-state.ts';
import type { ApplyCallWritesResult, CallWrite } from '../../services/calls/call-transitions.ts';
import type { WorkerState } from './state.ts';

export function afterCommit(s: WorkerState, writes: CallWrite[], result: ApplyCallWritesResult): void {
  const freed = new Set<string>();
  for (const w of writes) {
    if (!result.applied.has(w.callId)) continue;
    if (counterBucket(w.from) === 'in_progress' && counterBucket(w.to) !== 'in_progress') freed.add(w.accountId);
    if (isTerminalCall(w.to) && !isTerminalCall(w.from)) s.deps.metrics.callsEnded.inc({ status: w.to });
    if (w.to === 'queued' && counterBucket(w.from) === 'in_progress') s.deps.metrics.retriesScheduled.inc();
    if (s.logTransitions) {
      for (const e of w.events) {
        s.log.info(
          { callId: w.callId, batchId: w.batchId, accountId: w.accountId, from: e.from, to: e.to, at: e.at, ...e.detail },
          'call transition',
        );
      }
      if (w.set.transcriptStatus) s.log.info({ callId: w.callId, batchId: w.batchId, transcriptStatus: w.set.transcriptStatus }, 'call analysis');
    }
  }
  for (const b of result.finishedBatches) {
    s.log.info(
      { batchId: b.id, status: b.status, completedAt: b.completedAt },
      b.status === 'cancelled' ? 'cancelled batch drained' : 'batch completed',
    );
    s.caches.contexts.delete(b.id);
  }
  if (freed.size > 0) claimSoonFor(s, freed);
}

/** Slots of these accounts were just freed: claim for them now rather than at the next poll. */
export function claimSoonFor(s: WorkerState, accounts: Iterable<string>): void {
  if (!s.lifecycle.running) return;
  for (const a of accounts) s.loop.accountsWithFreedSlots.add(a);
  // A round over every account already owed covers these too.
  if (s.loop.pendingClaim === 'none') s.loop.pendingClaim = 'freed';
  s.loop.wake?.();
}
