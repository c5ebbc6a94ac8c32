// Waiting for the worker's work to be recorded (settle), and stopping it: claiming stops, calls
// in flight get a grace period, then calls their provider can hand over are left to the next
// worker (their leases expired at once) and the rest are hung up.
import { exclusive, tick } from './loop.ts';
import { hangUp } from './call-session.ts';
import { stopWatching } from './ledger.ts';
import { handOverLeases, keepLeases } from './leases.ts';
import { deadlineIn } from '../../scheduler.ts';
import { sleep, type WorkerState } from './state.ts';

/**
 * Waits for buffered writes, dials and local analyses; for provider analyses too unless told not
 * to (they take minutes: shutdown hands them over instead). Gives up after `withinMs`.
 */
export async function settle(s: WorkerState, o: { withinMs?: number; providerAnalyses?: boolean } = {}): Promise<void> {
  const limit = o.withinMs === undefined ? null : deadlineIn(s.scheduler, o.withinMs);
  try {
    for (;;) {
      if (limit?.passed) return;
      s.queue.flushDeferred();
      await (limit ? Promise.race([s.queue.whenIdle(), limit.reached]) : s.queue.whenIdle());
      const { book } = s;
      if (book.analysisGroupsRunning > 0 || book.analysisQueue.length > 0 || book.dialsInFlight > 0 || book.confirming > 0) {
        await sleep(s, 1);
        continue;
      }
      if ((o.providerAnalyses ?? true) && book.providerAnalysing.size > 0) {
        // The provider's analysis arrives when it arrives (webhook or its grace period).
        await sleep(s, 10);
        continue;
      }
      if (s.queue.idle) return;
    }
  } finally {
    limit?.cancel();
  }
}

/** After the loop ended: lets calls finish within `graceMs`, then hands over or hangs up the rest. */
export async function windDown(s: WorkerState, graceMs: number): Promise<void> {
  const grace = deadlineIn(s.scheduler, graceMs);
  // Leases are still renewed while the calls finish.
  const releaseKeeper = keepLeases(s);
  try {
    while ((s.book.live.size > 0 || s.book.dialsInFlight > 0) && !grace.passed) {
      await Promise.race([sleep(s, 20), grace.reached]);
    }
    // A call its provider can hand to another worker (adopt) goes on talking: its lease is
    // expired at once and the next worker to recover it watches it to its end. Hanging up is
    // for the others.
    const handOver = [...s.book.live.values()].filter((c) => c.provider?.adopt && c.providerCallId && !c.hangup);
    if (handOver.length > 0) {
      s.log.warn({ calls: handOver.length }, 'leaving calls in flight to the next worker (adopted by its next recovery)');
      for (const call of handOver) stopWatching(s, call);
      await handOverLeases(
        s,
        handOver.map((c) => c.callId),
      );
    }
    if (s.book.live.size > 0) {
      const now = s.clock.now();
      s.log.warn({ calls: s.book.live.size }, 'hanging up calls still in flight at shutdown');
      for (const call of [...s.book.live.values()]) hangUp(s, call, 'shutdown', now);
      const patience = deadlineIn(s.scheduler, 2000);
      while (s.book.live.size > 0 && !patience.passed) await sleep(s, 5);
      patience.cancel();
    }
    // Provider analyses are not waited for: they are handed over below.
    await settle(s, { withinMs: Math.max(2000, graceMs), providerAnalyses: false });
  } finally {
    grace.cancel();
    releaseKeeper();
  }
}

/** The provider analyses still awaited go to the next worker's recovery at once. */
export async function handOverProviderAnalyses(s: WorkerState): Promise<void> {
  if (s.book.providerAnalysing.size === 0) return;
  s.log.warn({ calls: s.book.providerAnalysing.size }, 'leaving provider analyses to the next worker');
  await handOverLeases(s, [...s.book.providerAnalysing]);
}

/** Ticks until nothing this worker can do is left (no calls in flight, none claimable). */
export async function drain(s: WorkerState, timeoutMs: number): Promise<void> {
  const limit = deadlineIn(s.scheduler, timeoutMs);
  const { book } = s;
  const busy = () => book.live.size > 0 || book.ending.size > 0 || book.analysing.size > 0 || book.dialsInFlight > 0;
  try {
    for (;;) {
      // Only a tick that ran with nothing in flight can tell that nothing is left: calls ending
      // during a tick free slots that tick did not see.
      const quietBefore = !busy();
      const r = await exclusive(s, () => tick(s, true));
      await settle(s);
      const idle =
        r.claimed === 0 && !r.more && r.settled === 0 && r.requeued === 0 && r.analysisRecovered === 0 && r.started === 0 && r.expired === 0;
      if (quietBefore && idle && !busy()) return;
      if (limit.passed) {
        throw new Error(`drain timed out with ${book.live.size} calls in flight and ${book.analysing.size} analyses outstanding`);
      }
      if (busy()) await sleep(s, 1);
    }
  } finally {
    limit.cancel();
  }
}
