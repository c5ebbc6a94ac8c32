// Requests with full control over what a hostile client controls: the peer address, raw bytes,
// headers. Responses come back with their headers (rate-limit, CORS, security) for assertions.
import type { App } from '../../src/app.ts';
import type { TestResponse } from './app.ts';

export interface RawRequest {
  key?: string | null;
  /** Peer address as the server would see it (unset: in-process, no per-address limiting). */
  address?: string;
  headers?: Record<string, string>;
  /** JSON-encoded unless `raw` is given. */
  body?: unknown;
  raw?: string | Uint8Array | ReadableStream<Uint8Array>;
}

export async function send<T = any>(app: App, method: string, path: string, o: RawRequest = {}): Promise<TestResponse<T>> {
  const headers: Record<string, string> = { ...(o.headers ?? {}) };
  if (o.key) headers.authorization = `Bearer ${o.key}`;
  let body: BodyInit | undefined;
  if (o.raw !== undefined) body = o.raw as BodyInit;
  else if (o.body !== undefined) {
    body = JSON.stringify(o.body);
    headers['content-type'] ??= 'application/json';
  }
  const init: RequestInit & { duplex?: 'half' } = { method, headers, body };
  if (o.raw instanceof ReadableStream) init.duplex = 'half';
  const res = await app.fetch(new Request(`http://test.local${path}`, init), { clientAddress: o.address });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // non-JSON bodies stay text
  }
  return { status: res.status, headers: res.headers, body: parsed as T };
}

export function gqlSend<T = any>(app: App, query: string, variables: Record<string, unknown> = {}, o: Omit<RawRequest, 'body' | 'raw'> = {}) {
  return send<{ data?: T; errors?: any[] }>(app, 'POST', '/graphql', { ...o, body: { query, variables } });
}

/** The budget headers of a response, as numbers (NaN when absent). */
export function budget(headers: Headers) {
  const n = (name: string) => (headers.has(name) ? Number(headers.get(name)) : NaN);
  return {
    limit: n('ratelimit-limit'),
    remaining: n('ratelimit-remaining'),
    reset: n('ratelimit-reset'),
    retryAfter: n('retry-after'),
  };
}

/** A minute-aligned instant (window start) plus `offsetMs`. */
export function inWindow(offsetMs: number, minute = '2031-03-04T05:06:00.000Z'): Date {
  return new Date(new Date(minute).getTime() + offsetMs);
}

export type ErrorForm = 'detail' | 'envelope';

/**
 * Throws unless `body` is one of the contract's two error forms, consistent with `status`:
 * `{detail: string}` alone (with the rejections beside it for "All contacts are invalid"), or the envelope `{status_code, message, error: {code, details}, data: null}`.
 */
export function contractErrorForm(status: number, body: unknown): ErrorForm {
  const fail = (why: string): never => {
    throw new Error(`${status} response is not a contract error form (${why}): ${JSON.stringify(body)?.slice(0, 500)}`);
  };
  if (status < 400 || status >= 500) fail('status is not a 4xx');
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return fail('not an object');
  const keys = Object.keys(body).sort().join(',');
  const b = body as Record<string, any>;
  if (keys === 'detail') {
    if (typeof b.detail !== 'string' || !b.detail) fail('detail is not a non-empty string');
    return 'detail';
  }
  // "All contacts are invalid" keeps the contract's text and adds why beside it (docs/api.md).
  if (keys === 'detail,rejected_contacts,validation_errors') {
    if (b.detail !== 'All contacts are invalid') fail('only "All contacts are invalid" lists its rejections');
    if (!Number.isInteger(b.rejected_contacts) || b.rejected_contacts < 1 || !Array.isArray(b.validation_errors)) fail('rejections');
    return 'detail';
  }
  if (keys !== 'data,error,message,status_code') fail(`keys ${keys}`);
  if (b.status_code !== status) fail('status_code differs from the HTTP status');
  if (typeof b.message !== 'string' || !b.message) fail('message');
  if (b.data !== null) fail('data is not null');
  if (typeof b.error !== 'object' || b.error === null || typeof b.error.code !== 'string') fail('error.code');
  if (!Array.isArray(b.error.details) || !b.error.details.every((d: unknown) => typeof d === 'string')) fail('error.details');
  return 'envelope';
}

/** Batches and calls stored, in one round trip. */
export async function storedCounts(deps: {
  db: { prisma: { $queryRaw: (...a: any[]) => Promise<any> } };
}): Promise<{ batches: number; calls: number }> {
  const rows = await deps.db.prisma.$queryRaw`SELECT (SELECT count(*) FROM batches)::int AS batches, (SELECT count(*) FROM calls)::int AS calls`;
  return { batches: Number(rows[0].batches), calls: Number(rows[0].calls) };
}
