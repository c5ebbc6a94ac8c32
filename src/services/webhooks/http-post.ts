// One webhook attempt over node:http(s): connects only to the address that passed the safety
// check (custom `lookup`, so a DNS answer can't change between check and connect), never follows
// redirects, reads at most a small part of the response, and gives up at a hard deadline.
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { parseCallbackUrl, resolveSafe, systemResolver, type Resolver } from './url-safety.ts';

export const MAX_RESPONSE_BYTES = 64 * 1024;

export interface PostOptions {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  allowPrivate: boolean;
  resolver?: Resolver;
}

export type PostResult =
  | { ok: true; status: number; headers: http.IncomingHttpHeaders; body: string }
  /** No HTTP status: refused target, DNS, connection or timeout error. */
  | { ok: false; error: string; unsafe: boolean };

export async function postWebhook(o: PostOptions): Promise<PostResult> {
  const deadline = AbortSignal.timeout(o.timeoutMs);
  let target: ReturnType<typeof parseCallbackUrl>;
  let addresses: { address: string; family: number }[];
  try {
    target = parseCallbackUrl(o.url, o.allowPrivate);
    addresses = await Promise.race([
      resolveSafe(target.host, o.allowPrivate, o.resolver ?? systemResolver),
      new Promise<never>((_, reject) => deadline.addEventListener('abort', () => reject(new Error('DNS lookup timed out')))),
    ]);
  } catch (e) {
    const unsafe = (e as Error).name === 'UnsafeTargetError';
    return { ok: false, unsafe, error: unsafe ? `callback_url ${(e as Error).message}` : describe(e) };
  }
  const pinned = addresses[0]!;
  // Node calls this instead of DNS: the socket connects to the address checked above.
  const lookup: LookupFunction = (_host, opts, cb) => {
    if ((opts as { all?: boolean }).all) (cb as unknown as (e: null, a: typeof addresses) => void)(null, [pinned]);
    else cb(null, pinned.address, pinned.family);
  };
  const mod = target.url.protocol === 'https:' ? https : http;
  return new Promise<PostResult>((resolve) => {
    let settled = false;
    const done = (r: PostResult) => {
      if (settled) return;
      settled = true;
      resolve(r);
    };
    const req = mod.request(
      target.url,
      {
        method: 'POST',
        lookup,
        agent: false,
        signal: deadline,
        headers: {
          ...o.headers,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(o.body),
          'user-agent': 'call-batch-service-webhooks/1',
          connection: 'close',
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const finish = () =>
          done({ ok: true, status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.on('data', (c: Buffer) => {
          if (size < MAX_RESPONSE_BYTES) chunks.push(c.subarray(0, MAX_RESPONSE_BYTES - size));
          size += c.length;
          // The status is what counts; a huge body is not read to the end.
          if (size >= MAX_RESPONSE_BYTES) {
            finish();
            res.destroy();
          }
        });
        res.on('end', finish);
        res.on('error', () => finish());
        res.on('close', finish);
      },
    );
    req.on('error', (e) => done({ ok: false, unsafe: false, error: deadline.aborted ? `timed out after ${o.timeoutMs} ms` : describe(e) }));
    req.end(o.body);
  });
}

function describe(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  if (err?.code === 'ENOTFOUND' || err?.code === 'EAI_AGAIN') return `DNS lookup failed (${err.code})`;
  if (err?.code) return `${err.code}: ${err.message}`;
  return err instanceof Error ? err.message : String(e);
}
