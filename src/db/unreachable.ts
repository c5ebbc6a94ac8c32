// Which errors mean "the database cannot be reached right now" (refused, reset, shut down, a pool
// that could not connect in time), as opposed to a statement that failed: the first kind is waited
// out (the worker keeps its writes; a request gets 503 with Retry-After), the second is a bug or a
// conflict. Prisma, pg and pg-pool each say it their own way; the error and its causes are read.
import { AppError } from '../errors.ts';

/** Socket-level codes of a connection that failed or broke (node:net, pg). */
const SOCKET_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** PostgreSQL: admin_shutdown, crash_shutdown, cannot_connect_now, too_many_connections. */
const SQLSTATES: ReadonlySet<string> = new Set(['57P01', '57P02', '57P03', '53300']);

/** Prisma: can't reach, timed out reaching, operation timed out, server closed the connection. */
const PRISMA_CODES: ReadonlySet<string> = new Set(['P1001', 'P1002', 'P1008', 'P1017']);

/** Prisma's driver-adapter error kinds for the same. */
const ADAPTER_KINDS: ReadonlySet<string> = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections']);

/** pg and pg-pool messages that carry no code (`timeout expired`: a lone pg.Client's connect timeout, the LISTEN session's). */
const MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|^timeout expired$|Client has encountered a connection error|Can't reach database server|Server has closed the connection/i;

/** Causes followed at most (errors wrap errors: GraphQL's originalError, Prisma's meta, `cause`). */
const MAX_DEPTH = 6;

function nested(e: Record<string, unknown>): unknown[] {
  const meta = e.meta as Record<string, unknown> | undefined;
  return [e.originalError, e.cause, meta?.driverAdapterError, ...(Array.isArray(e.errors) ? e.errors.slice(0, 4) : [])];
}

function matches(e: Record<string, unknown>): boolean {
  const code = typeof e.code === 'string' ? e.code : '';
  if (SOCKET_CODES.has(code) || SQLSTATES.has(code) || PRISMA_CODES.has(code)) return true;
  // SQLSTATE class 08: connection exceptions.
  if (/^08[0-9A-Z]{3}$/.test(code)) return true;
  if (typeof e.kind === 'string' && ADAPTER_KINDS.has(e.kind)) return true;
  return typeof e.message === 'string' && MESSAGES.test(e.message);
}

/** The database could not be reached, or dropped the connection: worth waiting out, not a failure of the request. */
export function isDatabaseUnreachable(err: unknown, depth = 0): boolean {
  if (depth > MAX_DEPTH || err === null || typeof err !== 'object') return false;
  const e = err as Record<string, unknown>;
  if (matches(e)) return true;
  return nested(e).some((n) => n !== undefined && n !== err && isDatabaseUnreachable(n, depth + 1));
}

/** What a client is told to wait before trying again while the database is unreachable. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/** The 503 (GraphQL `UNAVAILABLE`) for an error that means the database is unreachable; null for any other error. */
export function unavailableFor(err: unknown): AppError | null {
  if (err instanceof AppError || !isDatabaseUnreachable(err)) return null;
  return new AppError('UNAVAILABLE', 'Service temporarily unavailable: the database cannot be reached', [], {
    'Retry-After': String(UNAVAILABLE_RETRY_AFTER_SECONDS),
  });
}
