// Authentication with its budgets applied, memoised on the request's scope: a valid key spends one
// unit of its account's per-minute budget per operation, a wrong one a unit of its address's
// failed-authentication budget, and a request without a key a unit of its address's anonymous one.
import type { ApiDeps } from './app-services.ts';
import { AppError } from '../errors.ts';
import type { Account } from '../generated/prisma/client.ts';
import { authenticateApiKey } from '../services/auth/api-keys.ts';
import { accountBudgetKey, accountRateLimited, anonymousRateLimited, authFailuresRateLimited } from '../services/auth/rate-limit.ts';
import type { RequestScope } from './request-scope.ts';

/** The request's account; throws UNAUTHENTICATED, FORBIDDEN or RATE_LIMITED. */
export function authenticateRequest(deps: ApiDeps, scope: RequestScope, token: string | null): Promise<Account> {
  return (scope.account ??= authenticateAndCount(deps, scope, token));
}

async function authenticateAndCount(deps: ApiDeps, scope: RequestScope, token: string | null): Promise<Account> {
  const account = await authenticatedKey(deps, scope, token);
  scope.accountId = account.id;
  const state = await deps.rateLimiters.accounts.consume(accountBudgetKey(account.id), account.rateLimitPerMinute);
  scope.rateLimit = state;
  if (state.limited) throw accountRateLimited(state);
  return account;
}

/** The key's account, looked up once per request whoever asks first (front door or Yoga). */
export function authenticatedKey(deps: ApiDeps, scope: RequestScope, token: string | null): Promise<Account> {
  return (scope.keyAccount ??= authenticateFrom(deps, token, scope.clientAddress));
}

const failureKey = (address: string) => `auth-failures:${address}`;
const anonymousKey = (address: string) => `anonymous:${address}`;

type FailureDeps = Pick<ApiDeps, 'config' | 'rateLimiters'>;

/** Refuses a client address that already spent its failed-authentication budget this window. */
export async function assertAddressNotBlocked(deps: FailureDeps, address: string | undefined): Promise<void> {
  if (!address) return;
  const blocked = await deps.rateLimiters.authFailures.exceeded(failureKey(address), deps.config.AUTH_FAILURES_PER_MINUTE);
  if (blocked) throw authFailuresRateLimited(blocked);
}

/** Spends one unit of the address's failed-authentication budget: a wrong or malformed credential. */
export async function countFailedAuthentication(deps: FailureDeps, address: string | undefined): Promise<void> {
  if (address) await deps.rateLimiters.authFailures.consume(failureKey(address), deps.config.AUTH_FAILURES_PER_MINUTE);
}

/** Refuses, before anything is read, a keyless request from an address whose anonymous budget is spent. */
export async function assertAnonymousBudgetLeft(deps: FailureDeps, address: string | undefined): Promise<void> {
  if (!address) return;
  const spent = await deps.rateLimiters.anonymous.exceeded(anonymousKey(address), deps.config.ANONYMOUS_REQUESTS_PER_MINUTE);
  if (spent) throw anonymousRateLimited(spent);
}

/**
 * API-key check under the client address's budgets (REST, GraphQL and WebSocket connect). A
 * request without a key spends one unit of the anonymous budget (introspection and `__typename`
 * are allowed without one, so they are not failures). A key is always checked first, so a valid
 * one proceeds on its account's budget whatever else its address sends; a wrong, malformed or
 * revoked key spends one unit of the failed-authentication budget, and once that is spent every
 * wrong key from the address gets 429, so keys can't be guessed at speed. In-process calls without
 * a peer address are not limited.
 */
export async function authenticateFrom(deps: ApiDeps, token: string | null, address: string | undefined): Promise<Account> {
  if (!token) {
    const state = address ? await deps.rateLimiters.anonymous.consume(anonymousKey(address), deps.config.ANONYMOUS_REQUESTS_PER_MINUTE) : null;
    if (state?.limited) throw anonymousRateLimited(state);
    return authenticateApiKey(deps.db, token, deps.keys);
  }
  try {
    return await authenticateApiKey(deps.db, token, deps.keys);
  } catch (e) {
    if (e instanceof AppError && e.code === 'UNAUTHENTICATED' && address) {
      const state = await deps.rateLimiters.authFailures.consume(failureKey(address), deps.config.AUTH_FAILURES_PER_MINUTE);
      if (state.limited) throw authFailuresRateLimited(state);
    }
    throw e;
  }
}
