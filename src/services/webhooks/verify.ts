// Receiver-side verification of our webhooks (Standard Webhooks), for customers writing a receiver
// in TypeScript and for our own tests. Any Standard Webhooks library verifies the same headers.
import crypto from 'node:crypto';
import { sign } from './signing.ts';

export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
}

export interface VerifyOptions {
  /** Reject timestamps further than this from `now` (replay protection). Default 5 minutes. */
  toleranceSeconds?: number;
  now?: Date;
}

type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function header(h: HeaderSource, name: string): string | undefined {
  if (typeof (h as Headers).get === 'function') return (h as Headers).get(name) ?? undefined;
  const rec = h as Record<string, string | string[] | undefined>;
  const key = Object.keys(rec).find((k) => k.toLowerCase() === name);
  const v = key === undefined ? undefined : rec[key];
  return Array.isArray(v) ? v[0] : v;
}

function equal(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && crypto.timingSafeEqual(x, y);
}

/**
 * Checks the signature of a received webhook against one secret (or several, e.g. the old and the
 * new one while you roll a rotation out) and returns the parsed event. `body` must be the raw
 * request body, byte for byte; re-serialised JSON will not verify.
 */
export function verifyWebhook<T = unknown>(
  secrets: string | readonly string[],
  headers: HeaderSource,
  body: string | Buffer,
  opts: VerifyOptions = {},
): T {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError('Missing webhook-id, webhook-timestamp or webhook-signature header');
  if (!/^\d+$/.test(timestamp)) throw new WebhookVerificationError('Invalid webhook-timestamp');
  const ts = Number(timestamp);
  const tolerance = opts.toleranceSeconds ?? 300;
  const now = Math.floor((opts.now ?? new Date()).getTime() / 1000);
  if (Math.abs(now - ts) > tolerance) throw new WebhookVerificationError('Timestamp outside the tolerance window');
  const text = typeof body === 'string' ? body : body.toString('utf8');
  const offered = signatures.split(' ').filter((s) => s.startsWith('v1,'));
  for (const secret of typeof secrets === 'string' ? [secrets] : secrets) {
    const expected = sign(secret, id, ts, text);
    if (offered.some((s) => equal(s, expected))) return JSON.parse(text) as T;
  }
  throw new WebhookVerificationError('No matching signature');
}
