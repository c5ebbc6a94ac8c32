// Provider settings read per account (or per agent) are remembered for a while: a worker dialling
// hundreds of calls a second must not read (and decrypt) the same row for each, nor hold one pool
// connection per dial to do it. Bounded by lru-cache (the least recently used key goes when full);
// freshness is checked here against the app clock, which lru-cache 10 cannot take (its `perf`
// option came in 11), so a test moving the clock expires entries and a frozen one keeps them.
import { LRUCache } from 'lru-cache';
import type { Clock } from '../../deps.ts';

/** Keys kept at most: accounts seen once in a while must not pile up. */
export const ACCOUNT_CACHE_MAX = 10_000;

export interface CachedLoadOptions {
  clock: Clock;
  ttlMs: number;
  max?: number;
}

/** `load(key)`, shared by the callers within `ttlMs` of its start; a failed load is forgotten at once. */
export function cachedLoads<T>(o: CachedLoadOptions, load: (key: string) => Promise<T>): (key: string) => Promise<T> {
  const cache = new LRUCache<string, { at: number; value: Promise<T> }>({ max: o.max ?? ACCOUNT_CACHE_MAX });
  // A clock stepped back must not stretch an entry's life: fresh only within [at, at + ttlMs).
  const fresh = (at: number, now: number) => at <= now && now < at + o.ttlMs;
  return (key) => {
    const now = o.clock.now().getTime();
    const hit = cache.get(key);
    if (hit && fresh(hit.at, now)) return hit.value;
    const entry = { at: now, value: load(key) };
    cache.set(key, entry);
    // Only this load's entry: a newer one set meanwhile stays.
    entry.value.catch(() => cache.peek(key) === entry && cache.delete(key));
    return entry.value;
  };
}
