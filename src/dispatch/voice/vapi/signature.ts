// Vapi's server-URL authentication, as its docs describe it ("Server authentication"): the server
// config names a Custom Credential, and Vapi sends either
// - HMAC: `x-signature` = hex HMAC-SHA256 of `{timestamp}.{body}` with the secret key, the
//   timestamp in `x-timestamp` (the HMACAuthenticationPlan defaults: algorithm sha256, hex, no
//   prefix, includeTimestamp, payloadFormat '{timestamp}.{body}'); or
// - a Bearer token credential: `Authorization: Bearer <token>`, or the legacy form, header
//   `X-Vapi-Secret: <token>` without the prefix (also what an inline `server.secret` sends).
// Pure: no I/O, the clock passed in.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { VapiWebhookAuth } from './account-config.ts';

/** A signed message older (or further ahead) than this is refused: a captured one cannot be replayed later. */
export const VAPI_SIGNATURE_TOLERANCE_MS = 5 * 60_000;

/** Compares digests, so neither the length nor the content of the secret leaks through timing. */
function same(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

/** x-timestamp as ms: Vapi's docs do not say seconds or milliseconds, so both are read. */
function timestampMs(v: string): number | null {
  if (!/^\d{1,16}$/.test(v)) return null;
  const n = Number(v);
  return n >= 1e12 ? n : n * 1000;
}

export function vapiHmacSignature(secret: string, timestamp: string, rawBody: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${rawBody}`).digest('hex');
}

export function verifyVapiRequest(
  auth: { mode: VapiWebhookAuth; secret: string },
  rawBody: string,
  headers: Pick<Headers, 'get'>,
  nowMs: number,
): boolean {
  if (!auth.secret) return false;
  if (auth.mode === 'secret') {
    const legacy = headers.get('x-vapi-secret');
    if (legacy !== null) return same(legacy, auth.secret);
    const bearer = headers.get('authorization');
    return bearer !== null && same(bearer, `Bearer ${auth.secret}`);
  }
  const signature = headers.get('x-signature');
  const timestamp = headers.get('x-timestamp');
  if (!signature || !timestamp) return false;
  const at = timestampMs(timestamp);
  if (at === null || Math.abs(nowMs - at) > VAPI_SIGNATURE_TOLERANCE_MS) return false;
  return same(signature.toLowerCase(), vapiHmacSignature(auth.secret, timestamp, rawBody));
}
