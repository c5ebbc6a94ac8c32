// A subscription authenticated with an API key ends, with one UNAUTHENTICATED error, once the key
// stops authenticating (revoked, account disabled or cut off from the API): on SSE and WebSocket
// alike, since both subscribe through this pipeline. live-sessions.ts notices the change.
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import type { ExecutionResult } from 'graphql';
import { AppError } from '../../errors.ts';
import { bearerToken } from '../../services/auth/api-keys.ts';
import type { GraphQLContext } from '../context.ts';
import type { LiveSessions } from '../live-sessions.ts';

export const REVOKED_MESSAGE = 'The API key no longer authenticates (revoked, or the account lost API access)';

/** `source`, ended with one error result as soon as `revoked` settles. */
function endWhenRevoked(source: AsyncIterable<ExecutionResult>, revoked: Promise<void>, untrack: () => void): AsyncIterableIterator<ExecutionResult> {
  const it = source[Symbol.asyncIterator]();
  let done = false;
  const finish = () => {
    done = true;
    untrack();
  };
  const ended = revoked.then(() => 'revoked' as const);
  return {
    async next() {
      if (done) return { value: undefined, done: true };
      const step = await Promise.race([it.next(), ended]);
      if (step !== 'revoked') {
        if (step.done) finish();
        return step;
      }
      finish();
      void it.return?.();
      return { value: { errors: [new AppError('UNAUTHENTICATED', REVOKED_MESSAGE)] }, done: false };
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
}

/**
 * Ends each key's subscriptions when the key stops authenticating, and bounds how many one key
 * holds open in this process (SSE streams and WebSocket sockets and operations alike).
 */
export function useEndRevokedSubscriptions(sessions: LiveSessions, maxPerKey: number): Plugin<GraphQLContext> {
  return {
    onSubscribe({ args }) {
      const ctx = args.contextValue as GraphQLContext;
      const token = bearerToken(ctx.request.headers.get('authorization'));
      if (!token || ctx.isAdmin) return;
      return {
        onSubscribeResult({ result, setResult }) {
          if (!isAsyncIterable(result)) return;
          if (sessions.count(token) >= maxPerKey) {
            void (result as AsyncGenerator).return?.(undefined);
            const refused = new AppError('RATE_LIMITED', `At most ${maxPerKey} subscriptions and sockets at once per API key`);
            setResult({ errors: [refused] });
            return;
          }
          let revoke!: () => void;
          const revoked = new Promise<void>((resolve) => (revoke = resolve));
          const untrack = sessions.track(token, revoke);
          setResult(endWhenRevoked(result as AsyncIterable<ExecutionResult>, revoked, untrack));
        },
      };
    },
  };
}
