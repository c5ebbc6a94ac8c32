// A subscription authenticated with an API key ends, with one UNAUTHENTICATED error, once the key
// stops authenticating (revoked, account disabled or cut off from the API): on SSE and WebSocket
// alike, since both subscribe through this pipeline. live-sessions.ts notices the change. The same
// pipeline bounds what subscriptions cost: how many a key, an account and the process hold open,
// and one execution per live value for all its subscribers (shared-event-results.ts).
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import type { ExecutionResult } from 'graphql';
import { AppError } from '../../errors.ts';
import { bearerToken } from '../../services/auth/api-keys.ts';
import type { GraphQLContext } from '../context.ts';
import type { LiveSessions, SessionCaps } from '../live-sessions.ts';
import { sharedEventResults } from '../shared-event-results.ts';

export const REVOKED_MESSAGE = 'The API key no longer authenticates (revoked, or the account lost API access)';

/**
 * `source`, ended with one error result once `revoke` is called, also in the middle of a wait for
 * its next value. Nothing is attached to a long-lived promise per value (a race against one would
 * keep a reaction per value delivered for as long as the subscription lives).
 */
function revocable(source: AsyncIterable<ExecutionResult>): {
  stream: AsyncIterableIterator<ExecutionResult>;
  revoke: () => void;
  untrackWith: (untrack: () => void) => void;
} {
  const it = source[Symbol.asyncIterator]();
  let done = false;
  let revoked = false;
  let untrack = () => {};
  /** Answers the next() under way, if any. */
  let interrupt: ((step: IteratorResult<ExecutionResult>) => void) | null = null;
  const finish = () => {
    done = true;
    untrack();
  };
  const ending = (): IteratorResult<ExecutionResult> => {
    finish();
    void it.return?.();
    return { value: { errors: [new AppError('UNAUTHENTICATED', REVOKED_MESSAGE)] }, done: false };
  };
  const stream: AsyncIterableIterator<ExecutionResult> = {
    next() {
      if (done) return Promise.resolve({ value: undefined, done: true });
      if (revoked) return Promise.resolve(ending());
      return new Promise((resolve, reject) => {
        interrupt = resolve;
        it.next().then(
          (step) => {
            if (interrupt !== resolve) return;
            interrupt = null;
            if (step.done) finish();
            resolve(step);
          },
          (err) => {
            if (interrupt !== resolve) return;
            interrupt = null;
            // A rejected next() ends the stream: graphql-ws calls no return() after it.
            finish();
            reject(err);
          },
        );
      });
    },
    async return() {
      finish();
      await it.return?.();
      return { value: undefined, done: true };
    },
    async throw(error) {
      finish();
      await it.return?.();
      throw error;
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
  const revoke = () => {
    if (done) return;
    revoked = true;
    const answer = interrupt;
    interrupt = null;
    answer?.(ending());
  };
  return { stream, revoke, untrackWith: (u) => (untrack = u) };
}

/**
 * Ends each key's subscriptions when the key stops authenticating, and bounds how many one key,
 * one account and the process hold open (SSE streams and WebSocket sockets and operations alike;
 * caps MAX_SUBSCRIPTIONS_PER_*, `maxPerKey` for the key).
 */
export function useEndRevokedSubscriptions(sessions: LiveSessions, maxPerKey: number): Plugin<GraphQLContext> {
  const subscribe = sharedEventResults();
  return {
    onSubscribe({ args, setSubscribeFn, setResultAndStopExecution }) {
      setSubscribeFn(subscribe as never);
      const ctx = args.contextValue as GraphQLContext;
      const token = bearerToken(ctx.request.headers.get('authorization'));
      if (!token || ctx.isAdmin) return;
      const { MAX_SUBSCRIPTIONS_PER_ACCOUNT, MAX_SUBSCRIPTIONS_PER_PROCESS } = ctx.deps.config;
      const caps: SessionCaps = { MAX_SUBSCRIPTIONS_PER_KEY: maxPerKey, MAX_SUBSCRIPTIONS_PER_ACCOUNT, MAX_SUBSCRIPTIONS_PER_PROCESS };
      // The rate limit's hook (before this one) authenticated the operation, if its key is good.
      const accountId = ctx.scope.accountId;
      // Refused before the subscription reads anything; checked again as it is counted.
      const early = sessions.refusal(token, accountId, caps);
      if (early) {
        setResultAndStopExecution({ errors: [new AppError('RATE_LIMITED', early.message)] });
        return;
      }
      return {
        onSubscribeResult({ result, setResult }) {
          if (!isAsyncIterable(result)) return;
          const refusal = sessions.refusal(token, accountId, caps);
          if (refusal) {
            void (result as AsyncGenerator).return?.(undefined);
            setResult({ errors: [new AppError('RATE_LIMITED', refusal.message)] });
            return;
          }
          const live = revocable(result as AsyncIterable<ExecutionResult>);
          live.untrackWith(sessions.track(token, live.revoke, accountId));
          setResult(live.stream);
        },
      };
    },
  };
}
