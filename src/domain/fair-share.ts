// How an account's free call slots are shared between its due batches. Pure, so the fairness rule
// is unit-tested without a database.
//
// Max-min fair ("water filling"): each slot goes to the batch with the fewest calls in flight
// (counting slots already handed out this round) that can still take one. A small batch therefore
// gets as many slots as a large one and finishes early instead of waiting behind it.

export interface BatchDemand {
  id: string;
  /** Calls of this batch currently in flight (ringing, answered, in_progress). */
  inFlight: number;
  /** The batch's own concurrency limit. */
  concurrency: number;
  /** Calls waiting to be dialled. */
  waiting: number;
}

/**
 * @param free slots the account can still use (max_concurrent_calls minus its calls in flight)
 * @param budget most slots to hand out now (the worker's own headroom)
 * @param rotate tie-break offset; callers advance it each round so equal batches take turns
 * @returns batch id -> slots, only batches that get at least one
 */
export function allocateSlots(batches: readonly BatchDemand[], free: number, budget = Infinity, rotate = 0): Map<string, number> {
  const out = new Map<string, number>();
  let left = Math.max(0, Math.min(free, budget));
  if (left === 0 || batches.length === 0) return out;
  const n = batches.length;
  const start = ((rotate % n) + n) % n;
  const order = [...batches.slice(start), ...batches.slice(0, start)];
  const cap = order.map((b) => Math.max(0, Math.min(b.concurrency - b.inFlight, b.waiting)));
  const level = order.map((b) => b.inFlight);
  const given = order.map(() => 0);

  while (left > 0) {
    let pick = -1;
    for (let i = 0; i < order.length; i++) {
      if (given[i] >= cap[i]) continue;
      if (pick === -1 || level[i] < level[pick]) pick = i;
    }
    if (pick === -1) break;
    // Raise the chosen batch to the next batch's level in one step (then they alternate slot by
    // slot), so large allocations stay cheap.
    let nextLevel = Infinity;
    for (let i = 0; i < order.length; i++) {
      if (i !== pick && given[i] < cap[i] && level[i] >= level[pick]) nextLevel = Math.min(nextLevel, level[i]);
    }
    const step = Math.max(1, Math.min(left, cap[pick] - given[pick], nextLevel === Infinity ? Infinity : nextLevel - level[pick]));
    given[pick] += step;
    level[pick] += step;
    left -= step;
  }
  order.forEach((b, i) => {
    if (given[i] > 0) out.set(b.id, given[i]);
  });
  return out;
}
