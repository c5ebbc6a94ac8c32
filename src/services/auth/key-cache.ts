// API keys that authenticated recently, by key hash, so a client's next requests skip the lookup.
// Only successes are kept: an unknown, revoked or forbidden key is looked up (and counted against
// its address) every time. An entry lives `ttlMs` at most, which bounds how long another process's
// revocation, or a change to the account, goes unseen here; this process's own admin changes
// clear the cache at once.
import { LRUCache } from 'lru-cache';
import type { Clock } from '../../deps.ts';
import type { Account } from '../../generated/prisma/client.ts';

export interface KeyCache {
  /** The account of a key that authenticated less than `ttlMs` ago, else undefined. */
  get(keyHash: string): Account | undefined;
  /** Taken before a lookup and handed to set(): when it started, and which clear() it follows. */
  begin(): LookupTicket;
  /** Keeps what a lookup found, fresh from when it started, unless the cache was cleared meanwhile. */
  set(keyHash: string, account: Account, ticket: LookupTicket): void;
  /** Forgets every key (an operator revoked a key or changed an account). */
  clear(): void;
  readonly size: number;
}

export interface LookupTicket {
  readonly generation: number;
  readonly at: number;
}

export interface KeyCacheOptions {
  /** 0 turns the cache off. */
  ttlMs: number;
  clock: Clock;
  /** Bounds memory: when full, the least recently used key goes. */
  maxEntries?: number;
}

export function createKeyCache({ ttlMs, clock, maxEntries = 10_000 }: KeyCacheOptions): KeyCache {
  // Freshness is checked here against the injected clock: lru-cache 10 reads the process's own.
  const entries = new LRUCache<string, { account: Account; at: number }>({ max: maxEntries });
  let generation = 0;

  // A clock stepped back must not stretch an entry's life: it is fresh only within [at, at + ttlMs).
  const fresh = (at: number, now: number) => at <= now && now < at + ttlMs;

  return {
    get(keyHash) {
      const e = entries.get(keyHash);
      if (!e) return undefined;
      if (fresh(e.at, clock.now().getTime())) return e.account;
      entries.delete(keyHash);
      return undefined;
    },
    begin: () => ({ generation, at: clock.now().getTime() }),
    set(keyHash, account, ticket) {
      // A lookup that raced a clear() may have read the row before the change.
      if (ttlMs <= 0 || ticket.generation !== generation) return;
      // Fresh from the lookup's start, so a change committed during it is seen within ttlMs.
      // Shared by the requests that hit it: nobody may change it under them.
      entries.set(keyHash, { account: Object.freeze({ ...account }), at: ticket.at });
    },
    clear() {
      generation += 1;
      entries.clear();
    },
    get size() {
      return entries.size;
    },
  };
}
