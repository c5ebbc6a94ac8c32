// Fixed-window request limits: per account (rate_limit_per_minute, shared by every API process
// when the store is the database), and per client address (in-process) for failed API-key
// attempts and, separately, for requests without a key.
// Windows are aligned to the clock's minute, so RateLimit-Reset is the same for every process.
import type { Logger } from 'pino';
import type { AppDeps, Clock } from '../../deps.ts';
import { AppError } from '../../errors.ts';
import { MemoryRateLimitStore } from './rate-limit-store-memory.ts';
import { DatabaseRateLimitStore } from './rate-limit-store-postgres.ts';
import type { RateLimitStore } from './rate-limit-store.ts';

export const RATE_LIMIT_WINDOW_MS = 60_000;

export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Whole seconds until the current window ends (≥ 1). */
  resetSeconds: number;
  limited: boolean;
}

export class FixedWindowLimiter {
  /** Start of the last window for which old windows were pruned (once per window and process). */
  private prunedFor = -Infinity;

  constructor(
    readonly store: RateLimitStore,
    private readonly clock: Clock,
    private readonly logger?: Logger,
    private readonly windowMs: number = RATE_LIMIT_WINDOW_MS,
  ) {}

  private window(): { start: number; resetSeconds: number } {
    const now = this.clock.now().getTime();
    const start = Math.floor(now / this.windowMs) * this.windowMs;
    return { start, resetSeconds: Math.max(1, Math.ceil((start + this.windowMs - now) / 1000)) };
  }

  /** Counts one request against `key`; `limited` when the window's budget was already spent. */
  async consume(key: string, limit: number): Promise<RateLimitState> {
    const { start, resetSeconds } = this.window();
    await this.pruneBefore(start);
    if (limit < 1) return { limit: 0, remaining: 0, resetSeconds, limited: true };
    const count = await this.store.take(key, new Date(start), limit);
    if (count === null) return { limit, remaining: 0, resetSeconds, limited: true };
    return { limit, remaining: Math.max(0, limit - count), resetSeconds, limited: false };
  }

  /** The refusal state when `key` has already used `limit` requests this window, else null. */
  async exceeded(key: string, limit: number): Promise<RateLimitState | null> {
    const { start, resetSeconds } = this.window();
    const count = await this.store.peek(key, new Date(start));
    return count >= limit ? { limit, remaining: 0, resetSeconds, limited: true } : null;
  }

  private async pruneBefore(start: number): Promise<void> {
    if (start <= this.prunedFor) return;
    this.prunedFor = start;
    try {
      await this.store.prune(new Date(start));
    } catch (err) {
      // Pruning is housekeeping: the next window tries again, the request goes on.
      this.logger?.warn({ err }, 'rate-limit prune failed');
    }
  }
}

/** The key under which an account's per-minute budget is counted. */
export const accountBudgetKey = (accountId: string): string => `account:${accountId}`;

export interface RateLimiters {
  /** Per account, budget = the account's rate_limit_per_minute. */
  accounts: FixedWindowLimiter;
  /** Per client address, budget = AUTH_FAILURES_PER_MINUTE failed key checks. */
  authFailures: FixedWindowLimiter;
  /** Per client address, budget = ANONYMOUS_REQUESTS_PER_MINUTE requests without a key. */
  anonymous: FixedWindowLimiter;
}

/** One set per process (built with the app): the accounts' budgets and the failed-key counters. */
export function createRateLimiters(deps: Pick<AppDeps, 'config' | 'db' | 'clock' | 'logger'>): RateLimiters {
  const mode = deps.config.RATE_LIMIT_STORE;
  const shared = mode === 'database' || (mode === 'auto' && deps.db.kind === 'postgres');
  const accountStore = shared ? new DatabaseRateLimitStore(deps.db) : new MemoryRateLimitStore();
  return {
    accounts: new FixedWindowLimiter(accountStore, deps.clock, deps.logger),
    authFailures: new FixedWindowLimiter(new MemoryRateLimitStore(), deps.clock, deps.logger),
    anonymous: new FixedWindowLimiter(new MemoryRateLimitStore(), deps.clock, deps.logger),
  };
}

/** IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers), plus Retry-After on refusal. */
export function rateLimitHeaders(state: RateLimitState): Record<string, string> {
  const headers: Record<string, string> = {
    'RateLimit-Limit': String(state.limit),
    'RateLimit-Remaining': String(state.remaining),
    'RateLimit-Reset': String(state.resetSeconds),
  };
  if (state.limited) headers['Retry-After'] = String(state.resetSeconds);
  return headers;
}

export function accountRateLimited(state: RateLimitState): AppError {
  return new AppError(
    'RATE_LIMITED',
    'Too many requests',
    [`Rate limit of ${state.limit} requests per minute exceeded; retry in ${state.resetSeconds} s`],
    rateLimitHeaders(state),
  );
}

export function authFailuresRateLimited(state: RateLimitState): AppError {
  return new AppError('RATE_LIMITED', 'Too many requests', [`Too many failed authentication attempts; retry in ${state.resetSeconds} s`], {
    'Retry-After': String(state.resetSeconds),
  });
}

export function anonymousRateLimited(state: RateLimitState): AppError {
  return new AppError(
    'RATE_LIMITED',
    'Too many requests',
    [`Too many requests without an API key from this address (${state.limit} a minute); send a key or retry in ${state.resetSeconds} s`],
    { 'Retry-After': String(state.resetSeconds) },
  );
}
