// Waiting for the worker's work to be recorded (settle), and stopping it: claiming stops, calls
// in flight get a grace period, then calls their provider can hand over are left to the next
// worker (their leases expired at once) and the rest are hung up.
import { exclusive, tick } from './loop.ts';
import { hangUp } from './call-session.ts';
import { stopWatching } from './ledger.ts';
import { handOverLeases, keepLeases } from './leases.ts';
import { sleep, type WorkerState } from './state.ts';

/** Resolves with `p` or after `ms`, whichever comes first. */
function atMost(p: Promise<unknown>, ms: number): Promise<unknown> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([p, new Promise<void>((r) => (timer = setTimeout(r, ms)))]).finally(() => clearTimeout(timer));
}

/**
 * Waits for buffered writes, dials and local analyses; for provider analyses too unless told not
 * to (they take minutes: shutdown hands them over instead). Gives up at `until` (Date.now() ms).
 */
export async function settle(s: WorkerState, o: { until?: number; providerAnalyses?: boolean } = {}): Promise<void> {
  const timeLeft = () => (o.until === undefined ? Number.POSITIVE_INFINITY : o.until - Date.now());
  for (;;) {
    if (timeLeft() <= 0) return;
    s.queue.flushDeferred();
    await (o.until === undefined ? s.queue.whenIdle() : atMost(s.queue.whenIdle(), timeLeft()));
    if (s.analysisGroupsRunning > 0 || s.analysisQueue.length > 0 || s.dialsInFlight > 0 || s.confirming > 0) {
      await sleep(1);
      continue;
    }
    if ((o.providerAnalyses ?? true) && s.providerAnalysing.size > 0) {
      // The provider's analysis arrives when it arrives (webhook or its grace period).
      await sleep(10);
      continue;
    }
    if (s.queue.idle) return;
  }
}

/** After the loop ended: lets calls finish within `graceMs`, then hands over or hangs up the rest. */
export async function windDown(s: WorkerState, graceMs: number): Promise<void> {
  const deadline = Date.now() + graceMs;
  // Leases are still renewed while the calls finish.
  const releaseKeeper = keepLeases(s);
  try {
    while ((s.live.size > 0 || s.dialsInFlight > 0) && Date.now() < deadline) {
      await sleep(Math.min(20, Math.max(1, deadline - Date.now())));
    }
    // A call its provider can hand to another worker (adopt) goes on talking: its lease is
    // expired at once and the next worker to recover it watches it to its end. Hanging up is
    // for the others.
    const handOver = [...s.live.values()].filter((c) => c.provider?.adopt && c.providerCallId && !c.hangup);
    if (handOver.length > 0) {
      s.log.warn({ calls: handOver.length }, 'leaving calls in flight to the next worker (adopted by its next recovery)');
      for (const call of handOver) stopWatching(s, call);
      await handOverLeases(s, handOver.map((c) => c.callId));
    }
    if (s.live.size > 0) {
      const now = s.clock.now();
      s.log.warn({ calls: s.live.size }, 'hanging up calls still in flight at shutdown');
      for (const call of [...s.live.values()]) hangUp(s, call, 'shutdown', now);
      const hangupDeadline = Date.now() + 2000;
      while (s.live.size > 0 && Date.now() < hangupDeadline) await sleep(5);
    }
    // Provider analyses are not waited for: they are handed over below.
    await settle(s, { until: Date.now() + Math.max(2000, graceMs), providerAnalyses: false });
  } finally {
    releaseKeeper();
  }
}

/** The provider analyses still awaited go to the next worker's recovery at once. */
export async function handOverProviderAnalyses(s: WorkerState): Promise<void> {
  if (s.providerAnalysing.size === 0) return;
  s.log.warn({ calls: s.providerAnalysing.size }, 'leaving provider analyses to the next worker');
  await handOverLeases(s, [...s.providerAnalysing]);
}

/** Ticks until nothing this worker can do is left (no calls in flight, none claimable). */
export async function drain(s: WorkerState, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const busy = () => s.live.size > 0 || s.ending.size > 0 || s.analysing.size > 0 || s.dialsInFlight > 0;
  for (;;) {
    // Only a tick that ran with nothing in flight can tell that nothing is left: calls ending
    // during a tick free slots that tick did not see.
    const quietBefore = !busy();
    const r = await exclusive(s, () => tick(s, true));
    await settle(s);
    const idle = r.claimed === 0 && !r.more && r.settled === 0 && r.requeued === 0 && r.analysisRecovered === 0 && r.started === 0 && r.expired === 0;
    if (quietBefore && idle && !busy()) return;
    if (Date.now() > deadline) {
      throw new Error(`drain timed out with ${s.live.size} calls in flight and ${s.analysing.size} analyses outstanding`);
    }
    if (busy()) await sleep(1);
  }
}
