// The worker's loop. A tick starts due batches, renews leases, every few polls recovers other
// workers' lost calls and analyses, enforces call limits and claims; between ticks, a call
// ending wakes the loop for a claim round for its account, so a freed slot is refilled at once.
import { isDatabaseUnreachable } from '../../db/unreachable.ts';
import { sweepFinishedBatches } from '../../services/calls/call-transitions.ts';
import { startDueBatches } from '../store/claim-calls.ts';
import { requeueExpiredUndialled } from '../store/lease-recovery.ts';
import { endUndialledCalls } from '../store/end-undialled-calls.ts';
import { moveClosedWindows } from '../store/move-closed-windows.ts';
import { resetWindows } from '../store/reset-windows.ts';
import { pruneDidDailyDials, pruneNumberDials } from '../store/prune-number-dials.ts';
import { recoverAnalyses } from './analysis.ts';
import { enforceCallLimits } from './call-limits.ts';
import { claimRound } from './claiming.ts';
import { renewLeasesIfDue } from './leases.ts';
import { recoverLostCalls } from './recovery.ts';
import { sleep, type WorkerState } from './state.ts';

export interface TickReport {
  /** Scheduled (or pending immediate) batches that started dispatching. */
  started: number;
  claimed: number;
  /** More calls are waiting than this tick could take. */
  more: boolean;
  requeued: number;
  settled: number;
  analysisRecovered: number;
  hungUp: number;
  /** Waiting calls ended because their batch expired or was cancelled, or their windows no longer open. */
  expired: number;
}

/** Runs ticks and claim rounds of this worker one at a time. */
export function exclusive<T>(s: WorkerState, fn: () => Promise<T>): Promise<T> {
  const run = s.loop.exclusiveTail.then(fn, fn);
  s.loop.exclusiveTail = run.catch(() => undefined);
  return run;
}

/**
 * `recover`: also look for other workers' expired leases. Leases last seconds, so the loop does
 * that every few polls only; runOnce always does.
 */
export async function tick(s: WorkerState, recover: boolean): Promise<TickReport> {
  const now = s.clock.now();
  const started = await startDueBatches(s.deps, now);
  for (const b of started) s.log.info({ batchId: b.id, accountId: b.accountId, startMode: b.startMode }, 'batch started');
  await renewLeasesIfDue(s, now);
  let requeued: { id: string; batchId: string }[] = [];
  let settled = 0;
  let analysisRecovered = 0;
  if (recover) {
    requeued = await requeueExpiredUndialled(s.deps, now);
    for (const r of requeued) s.log.warn({ callId: r.id, batchId: r.batchId }, 'requeued undialled call of a lost worker');
    settled = await recoverLostCalls(s, now);
    analysisRecovered = await recoverAnalyses(s, now);
    await pruneNumberDials(s.deps, now);
    await pruneDidDailyDials(s.deps, now);
    // Batches whose last call ended in a process that died before closing them.
    for (const b of await sweepFinishedBatches(s.deps, now)) {
      s.log.info({ batchId: b.id, status: b.status }, 'closed finished batch');
      s.caches.contexts.delete(b.id);
    }
  }
  let expired = 0;
  for (const e of await endUndialledCalls(s.deps, now)) {
    s.log.info({ batchId: e.batchId, reason: e.reason, calls: e.calls }, 'ended calls that were waiting to be dialled');
    expired += e.calls;
  }
  const windows = await moveClosedWindows(s.deps, now);
  if (windows.moved + windows.cancelled > 0) s.log.info(windows, 'calls moved to their next calling window');
  const reset = await resetWindows(s.deps, now);
  if (reset.replaced + reset.cancelled > 0 || reset.finished.length > 0) s.log.info(reset, 'calls re-placed under a changed calling window');
  expired += windows.cancelled + reset.cancelled;
  const hungUp = await enforceCallLimits(s, now);
  const { claimed, more } = await claimRound(s);
  return { started: started.length, claimed, more, requeued: requeued.length, settled, analysisRecovered, hungUp, expired };
}

/**
 * Polls every pollMs (a tick) and claims in between whenever a call ending freed a slot. Whether a
 * tick or a recovery is due is set by timers of the worker's scheduler, armed when the last one
 * started: no arithmetic on readings of a clock a test may hold still.
 */
export async function runLoop(s: WorkerState): Promise<void> {
  const { pollMs, leaseMs } = s.settings;
  const recoverEveryMs = Math.max(pollMs, Math.min(leaseMs / 4, 5000));
  const due = { tick: true, recovery: true };
  const timers: { tick: unknown; recovery: unknown } = { tick: null, recovery: null };
  const arm = (what: 'tick' | 'recovery', ms: number) => {
    timers[what] = s.scheduler.setTimeout(() => {
      due[what] = true;
      s.loop.wake?.();
    }, ms);
  };
  /** When (app clock ms) the database stopped answering the loop; 0 while it answers. */
  let unreachableSince = 0;
  try {
    while (s.lifecycle.running) {
      try {
        if (due.tick) {
          due.tick = false;
          arm('tick', pollMs);
          const recover = due.recovery;
          if (recover) {
            due.recovery = false;
            arm('recovery', recoverEveryMs);
          }
          s.loop.pendingClaim = 'none';
          s.loop.accountsWithFreedSlots.clear();
          const r = await exclusive(s, () => tick(s, recover));
          s.loop.lastTurnAt = s.clock.now().getTime();
          s.loop.turns++;
          s.deps.metrics.workerTicks.inc();
          if (unreachableSince) {
            s.log.warn({ unreachableMs: s.loop.lastTurnAt - unreachableSince }, 'database reachable again; held call writes are being committed');
            unreachableSince = 0;
          }
          if (r.more) s.loop.pendingClaim = 'all';
        } else if (s.loop.pendingClaim !== 'none') {
          const only = s.loop.pendingClaim === 'freed' ? [...s.loop.accountsWithFreedSlots] : undefined;
          s.loop.pendingClaim = 'none';
          s.loop.accountsWithFreedSlots.clear();
          const r = await exclusive(s, () => claimRound(s, only));
          if (r.more) s.loop.pendingClaim = 'all';
        }
      } catch (err) {
        // An unreachable database is waited out (calls go on, their writes wait): said once, not every poll.
        if (!isDatabaseUnreachable(err)) s.log.error({ err }, 'dispatch tick failed');
        else if (!unreachableSince) {
          unreachableSince = s.clock.now().getTime();
          s.log.error({ err }, 'database unreachable; calls in flight go on and their writes wait for it');
        }
        await sleep(s, Math.min(pollMs, 1000));
      }
      if (due.tick || s.loop.pendingClaim !== 'none' || !s.lifecycle.running) continue;
      await untilWoken(s);
    }
  } finally {
    s.scheduler.clearTimeout(timers.tick);
    s.scheduler.clearTimeout(timers.recovery);
  }
}

/** Waits for the next tick's timer, a freed slot (commits.ts) or stop(). */
function untilWoken(s: WorkerState): Promise<void> {
  return new Promise<void>((resolve) => {
    s.loop.wake = () => {
      s.loop.wake = null;
      resolve();
    };
  });
}
