// How a failed Vapi request is treated: retried (rate limits, server errors, lost connections,
// timeouts, and Vapi's concurrency refusal - the call may exist, so the retry first looks it up) or
// final (any other 4xx), in which case the call fails with Vapi's own message.
import { VapiError, VapiTimeoutError } from '@vapi-ai/server-sdk';
import { DialRejectedError } from '../provider.ts';

/**
 * POST /call answers limits as 400 ("Client/policy failure (limits, validation, missing
 * resources)"); the org's concurrency limit passes with time, so that one is waited out.
 */
const CONCURRENCY_REFUSAL = /concurren/i;

export function providerMessage(err: unknown): string {
  if (err instanceof VapiError) {
    const body = err.body as { message?: unknown } | undefined;
    const m = body && typeof body === 'object' ? body.message : undefined;
    if (typeof m === 'string' && m) return m;
    if (Array.isArray(m) && m.length) return m.map(String).join('; ');
  }
  return err instanceof Error ? err.message : String(err);
}

export function isRetryable(err: unknown): boolean {
  if (err instanceof VapiTimeoutError) return true;
  if (!(err instanceof VapiError)) return false;
  const s = err.statusCode;
  // No status: the connection failed (or the send gate kept the request in).
  return s === undefined || s === 408 || s === 429 || s >= 500 || (s === 400 && CONCURRENCY_REFUSAL.test(providerMessage(err)));
}

export function isNotFound(err: unknown): boolean {
  return err instanceof VapiError && err.statusCode === 404;
}

/** A final (non-retryable) Vapi error as the rejection the worker records on the call. */
export function dialRejection(err: unknown): DialRejectedError {
  const status = err instanceof VapiError ? (err.statusCode ?? null) : null;
  const message = providerMessage(err);
  const detail = { provider: 'vapi', provider_status: status, provider_message: message };
  // Account-level problems fail every number alike (the worker then skips the alternate number).
  if (status === 402) return new DialRejectedError(message, 'payment_required', detail);
  if (status === 401 || status === 403) return new DialRejectedError(message, 'provider_auth_failed', detail);
  return new DialRejectedError(message, 'dial_rejected', detail);
}

/** How long Vapi asked us to wait (Retry-After on a 429 or 503), if it said. `now`: the app clock (ms), for a Retry-After that is a date. */
export function retryAfterMs(err: unknown, now: number): number | null {
  const headers = err instanceof VapiError ? err.rawResponse?.headers : undefined;
  const v = headers?.get('retry-after');
  if (!v) return null;
  const seconds = Number(v);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}
