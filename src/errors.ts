import { GraphQLError } from 'graphql';
import { formatIssue, type PathIssue } from './domain/field-issue.ts';

/**
 * One error type for every layer. The code decides the HTTP status and which of the contract's two
 * error forms the REST facade uses: `detail` ({"detail": "..."}) or the envelope
 * ({status_code, message, error: {code, details}, data: null}).
 */
export type ErrorCode =
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'RATE_LIMITED'
  | 'NOT_FOUND'
  | 'MISSING_PARAMETER'
  | 'UNPROCESSABLE'
  | 'CONFLICT'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'QUERY_TOO_COMPLEX'
  | 'UNAVAILABLE'
  | 'REQUEST_TIMEOUT'
  | 'CLIENT_CLOSED_REQUEST'
  | 'BAD_REQUEST'
  | 'INTERNAL';

interface CodeRule {
  status: number;
  form: 'detail' | 'envelope';
  /** Code shown to REST clients (the contract's names). */
  restCode: string;
}

export const ERROR_CODES: Record<ErrorCode, CodeRule> = {
  UNAUTHENTICATED: { status: 401, form: 'detail', restCode: 'UNAUTHORIZED' },
  FORBIDDEN: { status: 403, form: 'envelope', restCode: 'FORBIDDEN' },
  RATE_LIMITED: { status: 429, form: 'envelope', restCode: 'RATE_LIMITED' },
  NOT_FOUND: { status: 404, form: 'detail', restCode: 'NOT_FOUND' },
  MISSING_PARAMETER: { status: 422, form: 'envelope', restCode: 'MISSING_PARAMETER' },
  UNPROCESSABLE: { status: 422, form: 'detail', restCode: 'UNPROCESSABLE' },
  CONFLICT: { status: 409, form: 'envelope', restCode: 'INVALID_STATE' },
  PAYLOAD_TOO_LARGE: { status: 413, form: 'envelope', restCode: 'PAYLOAD_TOO_LARGE' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, form: 'envelope', restCode: 'UNSUPPORTED_MEDIA_TYPE' },
  QUERY_TOO_COMPLEX: { status: 400, form: 'envelope', restCode: 'QUERY_TOO_COMPLEX' },
  UNAVAILABLE: { status: 503, form: 'envelope', restCode: 'SERVICE_UNAVAILABLE' },
  /** A request body that stalled or trickled below the pace (src/http/body.ts). */
  REQUEST_TIMEOUT: { status: 408, form: 'envelope', restCode: 'REQUEST_TIMEOUT' },
  /** The client went away mid-body; nobody reads it, but logs and metrics see a client's 4xx (nginx's 499). */
  CLIENT_CLOSED_REQUEST: { status: 499, form: 'envelope', restCode: 'CLIENT_CLOSED_REQUEST' },
  BAD_REQUEST: { status: 400, form: 'envelope', restCode: 'BAD_REQUEST' },
  INTERNAL: { status: 500, form: 'envelope', restCode: 'INTERNAL_ERROR' },
};

// Auth, rate-limit and query-cost refusals also set the GraphQL-over-HTTP status; other errors keep the GraphQL 200.
const GRAPHQL_HTTP_STATUS: Partial<Record<ErrorCode, number>> = {
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  RATE_LIMITED: 429,
  // Refused before execution, like a validation error.
  QUERY_TOO_COMPLEX: 400,
  UNAVAILABLE: 503,
  BAD_REQUEST: 400,
  REQUEST_TIMEOUT: 408,
  CLIENT_CLOSED_REQUEST: 499,
};

/**
 * A GraphQLError subclass, so Yoga's error masking passes it through untouched while any other
 * thrown error is masked as "Unexpected error." on both surfaces.
 */
export class AppError extends GraphQLError {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: string[] = [],
    /** Extra response headers (Retry-After, rate-limit headers). */
    readonly headers: Record<string, string> = {},
    /** The details' fields as paths, for a surface that spells field names its own way. */
    readonly issues: readonly PathIssue[] = [],
  ) {
    const status = GRAPHQL_HTTP_STATUS[code];
    super(message, {
      extensions: {
        code,
        ...(details.length ? { details } : {}),
        ...(status ? { http: { status, headers } } : {}),
      },
    });
    this.name = 'AppError';
  }

  /**
   * Fields a detail-form REST body carries beside `detail`, which stays the contract's text: only
   * the create's `All contacts are invalid` has them (why each contact was rejected).
   */
  besideDetail?: Record<string, unknown>;

  get status(): number {
    return ERROR_CODES[this.code].status;
  }
}

export const invalidApiKey = () => new AppError('UNAUTHENTICATED', 'Invalid API key');
export const requestValidation = (details: string[]) => new AppError('MISSING_PARAMETER', 'Missing required parameter', details);
/** Request validation at domain paths; `details` spell them as the GraphQL input does. */
export const invalidFields = (issues: readonly PathIssue[]) =>
  new AppError(
    'MISSING_PARAMETER',
    'Missing required parameter',
    issues.map((i) => formatIssue(i)),
    {},
    issues,
  );
export const notFound = (message: string) => new AppError('NOT_FOUND', message);
export const batchNotFound = () => notFound('Call batch not found');
export const unprocessable = (message: string) => new AppError('UNPROCESSABLE', message);

/** Rejections an `All contacts are invalid` answer lists (docs/api.md); `rejected_contacts` counts them all. */
export const MAX_LISTED_REJECTIONS = 1_000;

interface Rejection {
  index: number;
  external_id: string;
  field: string;
  message: string;
}

/**
 * The contract's `422 All contacts are invalid`, saying why beside it: REST
 * `{"detail": "All contacts are invalid", "rejected_contacts": n, "validation_errors": [...]}`,
 * GraphQL the same under `extensions` (`rejectedContacts`, `validationErrors`). A one-contact
 * batch's refusal used to say only the first part.
 */
export function allContactsInvalid(rejections: readonly Rejection[]): AppError {
  const e = unprocessable('All contacts are invalid');
  const listed = rejections
    .slice(0, MAX_LISTED_REJECTIONS)
    .map((r) => ({ index: r.index, external_id: r.external_id, field: r.field, message: r.message }));
  e.besideDetail = { rejected_contacts: rejections.length, validation_errors: listed };
  Object.assign(e.extensions, {
    rejectedContacts: rejections.length,
    validationErrors: listed.map((r) => ({ index: r.index, externalId: r.external_id, field: r.field, message: r.message })),
  });
  return e;
}

/**
 * Error text is bounded whatever the input. A longer message quotes the caller back (graphql-js
 * puts a whole variable value in a coercion error, a name in a validation error) and is cut in
 * the middle, keeping what the service said before and after the echo.
 */
export const MAX_ERROR_MESSAGE_CHARS = 1_024;
/** Characters of one error's details together, as JSON; the details past it are counted in a last one. */
export const MAX_ERROR_DETAILS_CHARS = 64 * 1024;
/** Room kept in a cut message for the marker saying how much was cut. */
const CUT_MARKER_CHARS = 40;

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/** `text`, or its head and tail around a marker when it is longer than `max` (never splits a surrogate pair). */
export function boundedText(text: string, max = MAX_ERROR_MESSAGE_CHARS): string {
  if (text.length <= max) return text;
  const keep = Math.max(0, max - CUT_MARKER_CHARS);
  let head = Math.ceil((keep * 3) / 4);
  let tailStart = text.length - (keep - head);
  if (head > 0 && isHighSurrogate(text.charCodeAt(head - 1))) head--;
  if (tailStart < text.length && isLowSurrogate(text.charCodeAt(tailStart))) tailStart++;
  return `${text.slice(0, head)} … [${tailStart - head} characters cut] … ${text.slice(tailStart)}`;
}

/** `details` each bounded, and together at most MAX_ERROR_DETAILS_CHARS; the same array when nothing was cut. */
export function boundedDetails(details: readonly string[]): string[] {
  const out: string[] = [];
  let total = 0;
  let cut = false;
  for (let i = 0; i < details.length; i++) {
    const detail = boundedText(details[i]);
    // As sent: quoted, escaped, and a comma.
    total += JSON.stringify(detail).length + 1;
    if (total > MAX_ERROR_DETAILS_CHARS) {
      out.push(`details: ${details.length - i} more not shown`);
      return out;
    }
    cut ||= detail !== details[i];
    out.push(detail);
  }
  return cut ? out : (details as string[]);
}
