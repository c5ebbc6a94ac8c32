// Ours, not rate-limiter-flexible's memory store, which holds every key it sees until its timer
// fires: docs/development.md, "Libraries weighed and left out".
import type { RateLimitStore } from './rate-limit-store.ts';

/**
 * Counters in this process only: for the embedded PGlite mode (one process by construction) and
 * for per-address failed-auth counting. Holds one window per key; older ones are pruned.
 */
export class MemoryRateLimitStore implements RateLimitStore {
  private readonly windows = new Map<string, { start: number; count: number }>();

  /** `maxKeys` bounds memory when keys are attacker-chosen (rotating client addresses). */
  constructor(private readonly maxKeys = 100_000) {}

  get size(): number {
    return this.windows.size;
  }

  async take(key: string, windowStart: Date, limit: number): Promise<number | null> {
    const start = windowStart.getTime();
    let w = this.windows.get(key);
    if (!w || w.start !== start) {
      if (!w && this.windows.size >= this.maxKeys) this.evict(start);
      w = { start, count: 0 };
      this.windows.set(key, w);
    }
    if (w.count >= limit) return null;
    w.count += 1;
    return w.count;
  }

  async peek(key: string, windowStart: Date): Promise<number> {
    const w = this.windows.get(key);
    return w && w.start === windowStart.getTime() ? w.count : 0;
  }

  async prune(before: Date): Promise<void> {
    const cutoff = before.getTime();
    for (const [key, w] of this.windows) if (w.start < cutoff) this.windows.delete(key);
  }

  /** Drops past windows, then (still full) the oldest-inserted tenth: a flood can't grow the map. */
  private evict(currentStart: number): void {
    for (const [key, w] of this.windows) if (w.start < currentStart) this.windows.delete(key);
    if (this.windows.size < this.maxKeys) return;
    let drop = Math.ceil(this.maxKeys / 10);
    for (const key of this.windows.keys()) {
      this.windows.delete(key);
      if (--drop === 0) break;
    }
  }
}
