// Standard Webhooks signing (https://www.standardwebhooks.com): the signed content is
// "{webhook-id}.{webhook-timestamp}.{body}", HMAC-SHA256 keyed with the base64-decoded part of a
// `whsec_` secret, sent as `v1,<base64>`; several signatures are space-separated. node:crypto, not
// the standardwebhooks package (same bytes, but its HMAC is JavaScript: 6× slower at 64 KB).
import crypto from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';

export function secretKey(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  const key = Buffer.from(encoded, 'base64');
  if (key.length === 0) throw new Error('webhook secret has an empty key');
  return key;
}

/** A new secret: 32 random bytes, base64 (the form every Standard Webhooks library accepts). */
export function generateSecret(): string {
  return SECRET_PREFIX + crypto.randomBytes(32).toString('base64');
}

export function sign(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = crypto.createHmac('sha256', secretKey(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** Headers for one attempt; one signature per secret (two while a rotation overlaps). */
export function signedHeaders(secrets: readonly string[], id: string, at: Date, body: string): SignedHeaders {
  if (secrets.length === 0) throw new Error('no webhook secret to sign with');
  const ts = Math.floor(at.getTime() / 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(ts),
    'webhook-signature': secrets.map((s) => sign(s, id, ts, body)).join(' '),
  };
}
