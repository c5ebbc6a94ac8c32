// What one request carries from the front door to its resolvers: one REST call, one
// GraphQL-over-HTTP request or one WebSocket operation each get their own scope, so "once per
// request" is "once per operation" and nothing is counted twice however often a resolver asks.
import type { Account } from '../generated/prisma/client.ts';
import type { RateLimitState } from '../services/auth/rate-limit.ts';
import type { PhaseTimer } from '../phase-timer.ts';

export interface RequestScope {
  /** The peer's address; undefined for in-process calls and WebSocket operations (checked at connect). */
  readonly clientAddress: string | undefined;
  /** The REST facade already checked the whole input, so GraphQL's check of the same values is skipped. */
  inputVetted: boolean;
  /** Authentication and the account budget, memoised (src/http/authenticate-request.ts). */
  account?: Promise<Account>;
  /** The key lookup alone, memoised: the front door may authenticate a large body before Yoga does. */
  keyAccount?: Promise<Account>;
  /** Set once the key authenticated, for the request log. */
  accountId?: string;
  /** The account budget as counted for this request, for the rate-limit headers. */
  rateLimit?: RateLimitState;
  /**
   * Cuts the client's connection mid-response (a streamed body that cannot finish must not look
   * finished); false when there is no connection to cut (in-process calls).
   */
  abortConnection(): boolean;
  /** The id of the request's log line, for what is logged after the response has started (a streamed export). */
  requestId?: string;
  /** The request's phases, when SERVER_TIMING is on. */
  timing?: PhaseTimer;
}

export function newRequestScope(clientAddress: string | undefined, abortConnection: () => boolean = () => false, requestId?: string): RequestScope {
  return { clientAddress, inputVetted: false, abortConnection, requestId };
}

/** Yoga's server context: what the front door hands every GraphQL execution. */
export interface ServerContext {
  scope: RequestScope;
}
