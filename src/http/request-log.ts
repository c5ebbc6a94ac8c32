// One structured log line per HTTP request: its id (the client's X-Request-Id when it is a sane
// token, else a new one; echoed on the response), method, route pattern (never the raw path: ids
// and signed tokens stay out of logs), status, duration and account id. No header, key or body.
import crypto from 'node:crypto';
import type { Logger } from 'pino';

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

export function requestIdOf(request: Request): string {
  const given = request.headers.get('x-request-id');
  return given && SANE_REQUEST_ID.test(given) ? given : crypto.randomUUID();
}

export interface RequestLogLine {
  requestId: string;
  method: string;
  route: string;
  status: number;
  ms: number;
  accountId: string | undefined;
}

export function logRequest(logger: Logger, line: RequestLogLine): void {
  logger.info({ ...line, ms: Math.round(line.ms * 10) / 10 }, 'request');
}
