// One webhook attempt: a pinned request (see pinned-request.ts: only the checked address, no
// redirects, a hard deadline that also covers reading the response) that reads at most a small
// part of the response.
import type http from 'node:http';
import { pinnedRequest } from './pinned-request.ts';
import type { Resolver } from './url-safety.ts';

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
  const r = await pinnedRequest({
    url: o.url,
    method: 'POST',
    allowPrivate: o.allowPrivate,
    resolver: o.resolver,
    timeoutMs: o.timeoutMs,
    headers: {
      ...o.headers,
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(o.body),
      'user-agent': 'call-batch-service-webhooks/1',
      connection: 'close',
    },
    body: o.body,
  });
  if (!r.ok) return { ok: false, unsafe: r.unsafe, error: r.unsafe ? `callback_url ${r.error}` : r.error };
  const res = r.res;
  return new Promise<PostResult>((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = () => {
      if (settled) return;
      settled = true;
      resolve({ ok: true, status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') });
    };
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
  });
}
