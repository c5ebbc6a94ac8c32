// Dial pacing: carriers limit how many calls per second leave one caller-ID number, so dials from
// one from-number are spaced evenly at the provider's rate (no bursts).
//
// The worker asks for slots BEFORE it claims calls (the claim marks them dialled): it claims only
// as many as can start within the next poll interval, so no call sits "ringing", its max-duration
// clock running, while it waits for its turn. Slots are per worker process (in memory): see
// docs/providers.md ("Pacing") for why and how to size the rate with several workers.

/** `now`: the app clock in ms (the worker passes deps.clock). */
export interface DialPacer {
  /** Dials from `from` that may start within `horizonMs` at `rate` per second (nothing is taken). */
  available(from: string, rate: number, horizonMs: number): number;
  /** Takes the next slot for a dial from `from`; returns how long (ms) the dial must wait for it. */
  take(from: string, rate: number): number;
}

export function createDialPacer(now: () => number): DialPacer {
  /** Per from-number: when its next dial may start (ms). */
  const next = new Map<string, number>();
  const gap = (rate: number) => 1000 / rate;
  const prune = (t: number) => {
    // Numbers idle for a while need no entry: their next dial may start at once anyway.
    if (next.size > 10_000) for (const [k, v] of next) if (v < t) next.delete(k);
  };
  return {
    available(from, rate, horizonMs) {
      if (!(rate > 0)) return Number.POSITIVE_INFINITY;
      const t = now();
      const first = Math.max(t, next.get(from) ?? t);
      if (first > t + horizonMs) return 0;
      return Math.floor((t + horizonMs - first) / gap(rate)) + 1;
    },
    take(from, rate) {
      if (!(rate > 0)) return 0;
      const t = now();
      const at = Math.max(t, next.get(from) ?? t);
      next.set(from, at + gap(rate));
      prune(t);
      return at - t;
    },
  };
}
