import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';

export function wsClient(baseUrl: string, authorization?: string): Client {
  return createClient({
    url: baseUrl.replace(/^http/, 'ws') + '/graphql',
    webSocketImpl: WebSocket,
    connectionParams: authorization ? { authorization } : {},
    retryAttempts: 0,
    lazy: true,
  });
}

/**
 * Runs one operation and resolves with its first result, or rejects with the close event / errors.
 * It unsubscribes a turn later: graphql-ws's client releases an operation twice when `next` and
 * `complete` arrive in one read and `next` unsubscribes, which closes a lazy socket that other
 * operations still use.
 */
export function wsOnce<T = any>(client: Client, query: string, variables?: Record<string, unknown>): Promise<{ data?: T; errors?: any[] }> {
  return new Promise((resolve, reject) => {
    const unsubscribe = client.subscribe<T>(
      { query, variables },
      {
        next: (v) => {
          resolve(v as never);
          setImmediate(unsubscribe);
        },
        error: reject,
        complete: () => {},
      },
    );
  });
}
