// One HTTP request to a URL someone else chose (a callback URL, a provider's recording link),
// made so it cannot reach our own network: the host must pass url-safety's checks, the socket
// connects only to the address that was checked (custom `lookup`: DNS can't change in between),
// redirects are never followed, and no connection is reused (agent: false).
//
// `timeoutMs` bounds everything up to the response headers (DNS, connect, TLS, the peer's answer).
// The body then streams under `bodyIdleMs` (the socket may sit idle that long: a long download
// from a slow client is fine, a stalled one is cut) or, without it, under the same deadline.
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { parseCallbackUrl, resolveSafe, systemResolver, type Resolver } from './url-safety.ts';

export interface PinnedRequestOptions {
  url: string;
  method: 'GET' | 'POST';
  headers?: http.OutgoingHttpHeaders;
  body?: string;
  allowPrivate: boolean;
  resolver?: Resolver;
  timeoutMs: number;
  bodyIdleMs?: number;
}

export type PinnedResponse =
  | { ok: true; res: http.IncomingMessage }
  /** Nothing usable came back: refused target (`unsafe`), DNS, connection error or the deadline. */
  | { ok: false; error: string; unsafe: boolean; timedOut: boolean };

class PinnedRequestTimeout extends Error {
  override name = 'PinnedRequestTimeout';
}

export async function pinnedRequest(o: PinnedRequestOptions): Promise<PinnedResponse> {
  let onDeadline: () => void = () => undefined;
  let expired = false;
  const timer = setTimeout(() => {
    expired = true;
    onDeadline();
  }, o.timeoutMs);
  const fail = (error: string, unsafe = false): PinnedResponse => {
    clearTimeout(timer);
    return { ok: false, error, unsafe, timedOut: expired };
  };

  let target: ReturnType<typeof parseCallbackUrl>;
  let pinned: { address: string; family: number };
  try {
    target = parseCallbackUrl(o.url, o.allowPrivate);
    [pinned] = await Promise.race([
      resolveSafe(target.host, o.allowPrivate, o.resolver ?? systemResolver),
      new Promise<never>((_, reject) => (onDeadline = () => reject(new PinnedRequestTimeout('DNS lookup timed out')))),
    ]);
  } catch (e) {
    const unsafe = (e as Error).name === 'UnsafeTargetError';
    return fail(unsafe ? (e as Error).message : describe(e), unsafe);
  }
  if (expired) return fail('DNS lookup timed out');

  // Node calls this instead of DNS: the socket connects to the address checked above.
  const lookup: LookupFunction = (_host, opts, cb) => {
    if ((opts as { all?: boolean }).all) (cb as unknown as (e: null, a: (typeof pinned)[]) => void)(null, [pinned]);
    else cb(null, pinned.address, pinned.family);
  };
  const mod = target.url.protocol === 'https:' ? https : http;
  return new Promise<PinnedResponse>((resolve) => {
    let settled = false;
    const done = (r: PinnedResponse) => {
      if (settled) return;
      settled = true;
      resolve(r);
    };
    const req = mod.request(target.url, { method: o.method, lookup, agent: false, headers: o.headers }, (res) => {
      if (o.bodyIdleMs !== undefined) {
        // The headers came in time; the body may take as long as it keeps flowing.
        clearTimeout(timer);
        req.setTimeout(o.bodyIdleMs, () => res.destroy(new PinnedRequestTimeout(`no data for ${o.bodyIdleMs} ms`)));
      } else {
        onDeadline = () => res.destroy(new PinnedRequestTimeout(`timed out after ${o.timeoutMs} ms`));
        res.once('close', () => clearTimeout(timer));
      }
      done({ ok: true, res });
    });
    onDeadline = () => req.destroy(new PinnedRequestTimeout(`timed out after ${o.timeoutMs} ms`));
    req.on('error', (e) => done(fail(e instanceof PinnedRequestTimeout ? e.message : describe(e))));
    req.end(o.body);
  });
}

function describe(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  if (err?.code === 'ENOTFOUND' || err?.code === 'EAI_AGAIN') return `DNS lookup failed (${err.code})`;
  if (err?.code) return `${err.code}: ${err.message}`;
  return err instanceof Error ? err.message : String(e);
}
