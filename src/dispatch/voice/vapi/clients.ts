// One @vapi-ai/server-sdk client per API key, built in one place and reused, never rebuilt per
// request. A create (and an end-call) must leave only while the worker still holds the call
// (../gated-fetch.ts): `gated` runs the request with the worker's gate in an async context
// that the client's fetch reads as the SDK hands it the request, so one shared client serves
// gated and ungated requests alike.
import { AsyncLocalStorage } from 'node:async_hooks';
import { VapiClient } from '@vapi-ai/server-sdk';
import { gatedFetch, SEND_GATE } from '../gated-fetch.ts';

export interface VapiClientOptions {
  baseUrl?: string;
  timeoutMs?: number;
}

export interface VapiClients {
  (apiKey: string): VapiClient;
  /** Runs `request` so that the requests it makes leave only while `holdsNow()` (checked as each is written). */
  gated<T>(holdsNow: () => boolean, request: () => Promise<T>): Promise<T>;
}

export function vapiClients(opts: VapiClientOptions = {}): VapiClients {
  const gates = new AsyncLocalStorage<() => boolean>();
  const fetchThroughGate = (url: string | URL | Request, init?: RequestInit) => {
    const gate = gates.getStore();
    return gate ? gatedFetch(url, { ...init, [SEND_GATE]: gate } as RequestInit) : fetch(url, init);
  };
  const clients = new Map<string, VapiClient>();
  const get = (apiKey: string) => {
    let c = clients.get(apiKey);
    if (!c) {
      // Retries are the callers' (a retried create looks the call up first), never the SDK's blind ones.
      c = new VapiClient({
        token: apiKey,
        ...(opts.baseUrl ? { baseUrl: opts.baseUrl } : {}),
        maxRetries: 0,
        timeoutInSeconds: (opts.timeoutMs ?? 15_000) / 1000,
        fetch: fetchThroughGate as typeof fetch,
      });
      clients.set(apiKey, c);
    }
    return c;
  };
  return Object.assign(get, { gated: <T>(holdsNow: () => boolean, request: () => Promise<T>) => gates.run(holdsNow, request) });
}
