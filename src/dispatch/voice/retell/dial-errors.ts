// How a failed Retell request is treated: retried (rate limits, server errors, lost connections and
// timeouts - the call may exist, so the retry first looks it up) or final (any other 4xx), in which
// case the call fails with Retell's own message.
import Retell from 'retell-sdk';
import { DialRejectedError } from '../provider.ts';

export function isRetryable(err: unknown): boolean {
  if (!(err instanceof Retell.APIError)) return false;
  const s = err.status;
  // No status: connection error or timeout (APIConnectionError, APIConnectionTimeoutError).
  return s === undefined || s === 429 || s >= 500;
}

/** Retell's error body is `{status: "error", message}`; the SDK keeps it as `error`. */
export function providerMessage(err: unknown): string {
  if (err instanceof Retell.APIError) {
    const body = err.error as { message?: unknown } | undefined;
    if (body && typeof body.message === 'string' && body.message) return body.message;
  }
  return err instanceof Error ? err.message : String(err);
}

/** A final (non-retryable) Retell error as the rejection the worker records on the call. */
export function dialRejection(err: unknown): DialRejectedError {
  const status = err instanceof Retell.APIError ? err.status : undefined;
  const message = providerMessage(err);
  const detail = { provider: 'retell', provider_status: status ?? null, provider_message: message };
  // Account-level problems fail every number alike (the worker then skips the alternate number).
  if (status === 402) return new DialRejectedError(message, 'payment_required', detail);
  if (status === 401 || status === 403) return new DialRejectedError(message, 'provider_auth_failed', detail);
  return new DialRejectedError(message, 'dial_rejected', detail);
}

/** How long Retell asked us to wait (Retry-After / retry-after-ms on a 429 or 503), if it said. `now`: the app clock (ms), for a Retry-After that is a date. */
export function retryAfterMs(err: unknown, now: number): number | null {
  const headers = err instanceof Retell.APIError ? err.headers : undefined;
  if (!headers) return null;
  const ms = Number(headers.get('retry-after-ms') ?? NaN);
  if (Number.isFinite(ms)) return Math.max(0, ms);
  const v = headers.get('retry-after');
  if (!v) return null;
  const seconds = Number(v);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}
