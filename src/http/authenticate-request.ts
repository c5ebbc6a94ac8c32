// Authentication with both budgets applied: failed key attempts per client address, then one
// unit of the account's per-minute budget per operation, memoised on the request's scope.
import type { ApiDeps } from './app-services.ts';
import { AppError } from '../errors.ts';
import type { Account } from '../generated/prisma/client.ts';
import { authenticateApiKey } from '../services/auth/api-keys.ts';
import { accountBudgetKey, accountRateLimited, authFailuresRateLimited } from '../services/auth/rate-limit.ts';
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

type FailureDeps = Pick<ApiDeps, 'config' | 'rateLimiters'>;

/** Refuses a client address that already spent its unauthenticated-request budget this window. */
export async function assertAddressNotBlocked(deps: FailureDeps, address: string | undefined): Promise<void> {
  if (!address) return;
  const blocked = await deps.rateLimiters.authFailures.exceeded(failureKey(address), deps.config.AUTH_FAILURES_PER_MINUTE);
  if (blocked) throw authFailuresRateLimited(blocked);
}

/** Spends one unit of the address's budget: a wrong, malformed or missing credential. */
export async function countFailedAuthentication(deps: FailureDeps, address: string | undefined): Promise<void> {
  if (address) await deps.rateLimiters.authFailures.consume(failureKey(address), deps.config.AUTH_FAILURES_PER_MINUTE);
}

/**
 * API-key check under the per-address budget of unauthenticated requests (REST, GraphQL and
 * WebSocket connect): a wrong, malformed or missing key spends one unit, so keys can't be guessed
 * at speed and anonymous clients can't hammer the parser. In-process calls without a peer
 * address are not limited.
 */
export async function authenticateFrom(deps: ApiDeps, token: string | null, address: string | undefined): Promise<Account> {
  await assertAddressNotBlocked(deps, address);
  try {
    return await authenticateApiKey(deps.db, token, deps.keys);
  } catch (e) {
    if (e instanceof AppError && e.code === 'UNAUTHENTICATED') await countFailedAuthentication(deps, address);
    throw e;
  }
}
