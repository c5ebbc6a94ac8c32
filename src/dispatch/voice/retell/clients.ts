// One retell-sdk client per API key, built in one place for every caller (the worker's provider,
// the recording link refresh): clients are reused, never rebuilt per request.
import Retell from 'retell-sdk';
import { gatedFetch } from '../gated-fetch.ts';

export interface RetellClientOptions {
  baseURL?: string;
  timeoutMs?: number;
}

export type RetellClients = (apiKey: string) => Retell;

export function retellClients(opts: RetellClientOptions = {}): RetellClients {
  const clients = new Map<string, Retell>();
  return (apiKey) => {
    let c = clients.get(apiKey);
    if (!c) {
      // Retries are the callers' (a create looks the call up before each), never the SDK's blind ones.
      // gatedFetch: a create goes out only while its worker still holds the call (gated-fetch.ts).
      c = new Retell({ apiKey, baseURL: opts.baseURL, maxRetries: 0, timeout: opts.timeoutMs ?? 15_000, fetch: gatedFetch });
      clients.set(apiKey, c);
    }
    return c;
  };
}
