// How often one account's live values may go out, over all its subscriptions in this process:
// each delivery reserves the next slot of a steady rate with a burst (a generic cell rate
// algorithm), so a quiet account's first values go at once and a busy one's are spread out. A
// value waiting for its slot is replaced by a newer one of the same key (queue.ts), so waiting
// costs no memory; what it bounds is the work (execution, encoding, a socket write per value) one
// tenant's subscriptions can ask of the process, whatever their number.

export class DeliveryBudget {
  /** When the slot after the last reserved one starts (ms, performance.now's clock). */
  private next = 0;
  private readonly intervalMs: number;
  private readonly burstMs: number;

  constructor(perSecond: number, burst: number = perSecond) {
    this.intervalMs = 1000 / perSecond;
    this.burstMs = Math.max(0, burst - 1) * this.intervalMs;
  }

  /** Reserves one delivery: how many ms it must wait (0: now). */
  reserve(now: number = performance.now()): number {
    const wait = Math.max(0, this.next - this.burstMs - now);
    this.next = Math.max(this.next, now) + this.intervalMs;
    return wait;
  }

  /** Nothing reserved ahead: a new budget would behave the same. */
  idle(now: number = performance.now()): boolean {
    return this.next <= now;
  }
}
