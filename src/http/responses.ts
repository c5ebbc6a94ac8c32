import { Response as ServerResponse } from '@whatwg-node/server';
import { AppError, boundedDetails, boundedText, ERROR_CODES } from '../errors.ts';
import { unavailableFor } from '../db/unreachable.ts';

const JSON_HEADERS = { 'content-type': 'application/json' };

/**
 * The server adapter's own Response class: the adapter writes its string body to the socket as it
 * is. A global (undici) Response hands it a stream of encoded bytes to read instead, about a third
 * of a 200-call page's CPU beside one statement and JSON.stringify (bench:read).
 */
export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new ServerResponse(JSON.stringify(body), { status, headers: { ...JSON_HEADERS, ...headers } });
}

/** The contract's success envelope. */
export function success(status: number, message: string, data: unknown): Response {
  return json(status, { status_code: status, message, error: null, data });
}

/**
 * An AppError in the form the contract gives its code: `{detail}` or the envelope. Its text is
 * bounded (errors.ts boundedText): what a client sent never comes back at any length.
 */
export function errorResponse(err: AppError): Response {
  const rule = ERROR_CODES[err.code];
  if (rule.form === 'detail') return json(rule.status, { detail: boundedText(err.message), ...err.besideDetail }, err.headers);
  return json(
    rule.status,
    {
      status_code: rule.status,
      message: boundedText(err.message),
      error: { code: rule.restCode, details: boundedDetails(err.details) },
      data: null,
    },
    err.headers,
  );
}

/** An unexpected error's answer: 503 with Retry-After while the database is unreachable, else 500. */
export const internalError = (err?: unknown) => errorResponse(unavailableFor(err) ?? new AppError('INTERNAL', 'Internal server error'));
