// A subscription counted against its key's caps stops counting when its stream ends, also when the
// stream ends by failing: graphql-ws answers a rejected next() with an error message and calls no
// return() after it, so the plugin must let the session go itself.
import { describe, expect, it } from 'vitest';
import type { ExecutionResult } from 'graphql';
import { useEndRevokedSubscriptions } from '../../src/graphql/plugins/end-revoked-subscriptions.ts';
import type { LiveSessions } from '../../src/graphql/live-sessions.ts';

function countingSessions(): LiveSessions & { open: () => number } {
  let open = 0;
  return {
    track: () => {
      open++;
      let tracked = true;
      return () => {
        if (tracked) open--;
        tracked = false;
      };
    },
    count: () => open,
    refusal: () => null,
    sweep: async () => {},
    close: () => {},
    open: () => open,
  };
}

/** The stream the plugin makes of `source` for an operation authenticated with an API key. */
function subscribed(sessions: LiveSessions, source: AsyncIterable<ExecutionResult>): AsyncIterableIterator<ExecutionResult> {
  const plugin = useEndRevokedSubscriptions(sessions, 10);
  const contextValue = {
    request: new Request('http://local/graphql', { headers: { authorization: 'Bearer sk_test' } }),
    isAdmin: false,
    scope: { accountId: 'acc_1' },
    deps: { config: { MAX_SUBSCRIPTIONS_PER_ACCOUNT: 10, MAX_SUBSCRIPTIONS_PER_PROCESS: 10 } },
  };
  const hooks = plugin.onSubscribe!({
    args: { contextValue },
    setSubscribeFn: () => {},
    setResultAndStopExecution: () => {
      throw new Error('refused');
    },
  } as never) as { onSubscribeResult: (p: unknown) => void };
  let stream: AsyncIterableIterator<ExecutionResult> | undefined;
  hooks.onSubscribeResult({ result: source, setResult: (s: AsyncIterableIterator<ExecutionResult>) => (stream = s) });
  return stream!;
}

describe('a subscription stream that fails', () => {
  it('stops counting against its key once its next() rejects', async () => {
    const sessions = countingSessions();
    const source: AsyncIterableIterator<ExecutionResult> = {
      next: () => Promise.reject(new Error('boom')),
      return: async () => ({ value: undefined, done: true }),
      [Symbol.asyncIterator]() {
        return this;
      },
    };
    const stream = subscribed(sessions, source);
    expect(sessions.open()).toBe(1);
    await expect(stream.next()).rejects.toThrow('boom');
    expect(sessions.open()).toBe(0);
  });
});
