// Authentication with both budgets applied: failed key attempts per client address, then one
// unit of the account's per-minute budget per operation. Memoised per Request: a REST request,
// a GraphQL-over-HTTP request and a WebSocket operation each carry their own Request object, so
// "per request" is "per operation" and nothing is counted twice however often a resolver asks.
import type { ApiDeps } from './app-services.ts';
import { AppError } from '../errors.ts';
import type { Account } from '../generated/prisma/client.ts';
import { clientAddressOf } from './client-address.ts';
import { authenticateApiKey } from '../services/auth/api-keys.ts';
import {
  accountRateLimited,
  authFailuresRateLimited,
  type RateLimitState,
} from '../services/auth/rate-limit.ts';

const accounts = new WeakMap<Request, Promise<Account>>();
const states = new WeakMap<Request, RateLimitState>();
const accountIds = new WeakMap<Request, string>();

/** The request's account; throws UNAUTHENTICATED, FORBIDDEN or RATE_LIMITED. */
export function authenticateRequest(deps: ApiDeps, request: Request, token: string | null): Promise<Account> {
  let account = accounts.get(request);
  if (!account) {
    account = authenticateAndCount(deps, request, token);
    accounts.set(request, account);
  }
  return account;
}

/** The id of the account this request authenticated as (undefined until it did), for the request log. */
export function accountIdOf(request: Request): string | undefined {
  return accountIds.get(request);
}

/** The account budget as counted for this request (undefined until it authenticated). */
export function rateLimitStateOf(request: Request): RateLimitState | undefined {
  return states.get(request);
}

async function authenticateAndCount(deps: ApiDeps, request: Request, token: string | null): Promise<Account> {
  const account = await authenticateFrom(deps, token, clientAddressOf(request));
  accountIds.set(request, account.id);
  const state = await deps.rateLimiters.accounts.consume(`account:${account.id}`, account.rateLimitPerMinute);
  states.set(request, state);
  if (state.limited) throw accountRateLimited(state);
  return account;
}

const failureKey = (address: string) => `auth-failures:${address}`;

/** Refuses a client address that already spent its unauthenticated-request budget this window. */
export async function assertAddressNotBlocked(deps: ApiDeps, address: string | undefined): Promise<void> {
  if (!address) return;
  const blocked = await deps.rateLimiters.authFailures.exceeded(failureKey(address), deps.config.AUTH_FAILURES_PER_MINUTE);
  if (blocked) throw authFailuresRateLimited(blocked);
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
    return await authenticateApiKey(deps.db, token);
  } catch (e) {
    if (address && e instanceof AppError && e.code === 'UNAUTHENTICATED') {
      await deps.rateLimiters.authFailures.consume(failureKey(address), deps.config.AUTH_FAILURES_PER_MINUTE);
    }
    throw e;
  }
}
