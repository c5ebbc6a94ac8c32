// One CORS policy for every path (REST and GraphQL), from CORS_ORIGIN. Keys travel in the
// Authorization header, never in cookies, so credentials are never allowed and `*` is safe to offer.

export type CorsPolicy = { kind: 'none' } | { kind: 'any' } | { kind: 'list'; origins: ReadonlySet<string> };

const ALLOWED_METHODS = 'GET, POST, PUT, DELETE, OPTIONS';
/** Request headers a browser may send cross-origin (lower-case). */
const ALLOWED_HEADERS: ReadonlySet<string> = new Set(['authorization', 'content-type', 'accept', 'last-event-id']);
/** Response headers the dashboard may read. */
const EXPOSED_HEADERS = 'RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After, X-Request-Id';
const PREFLIGHT_MAX_AGE_S = '600';

export function corsPolicy(value: string | undefined): CorsPolicy {
  const entries = (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (entries.length === 0) return { kind: 'none' };
  if (entries.includes('*')) return { kind: 'any' };
  return { kind: 'list', origins: new Set(entries.map((o) => o.replace(/\/+$/, '').toLowerCase())) };
}

/** The Access-Control-Allow-Origin value for `origin`, or null when not allowed. */
function allowOrigin(policy: CorsPolicy, origin: string | null): string | null {
  if (!origin || policy.kind === 'none') return null;
  if (policy.kind === 'any') return '*';
  return policy.origins.has(origin.toLowerCase()) ? origin : null;
}

export function isPreflight(request: Request): boolean {
  return request.method === 'OPTIONS' && request.headers.has('origin') && request.headers.has('access-control-request-method');
}

/** 204 for a preflight; CORS headers only when the origin, method and headers are all allowed. */
export function preflightResponse(request: Request, policy: CorsPolicy): Response {
  const headers = new Headers({ vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers' });
  const allowed = allowOrigin(policy, request.headers.get('origin'));
  const method = (request.headers.get('access-control-request-method') ?? '').toUpperCase();
  const requested = (request.headers.get('access-control-request-headers') ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean);
  if (allowed && ALLOWED_METHODS.split(', ').includes(method) && requested.every((h) => ALLOWED_HEADERS.has(h))) {
    headers.set('access-control-allow-origin', allowed);
    headers.set('access-control-allow-methods', ALLOWED_METHODS);
    headers.set('access-control-allow-headers', [...ALLOWED_HEADERS].join(', '));
    headers.set('access-control-max-age', PREFLIGHT_MAX_AGE_S);
  }
  return new Response(null, { status: 204, headers });
}

/** CORS headers on an actual (non-preflight) response. */
export function applyCors(request: Request, response: Response, policy: CorsPolicy): void {
  if (policy.kind === 'none') return;
  if (policy.kind === 'list') response.headers.append('vary', 'Origin');
  const allowed = allowOrigin(policy, request.headers.get('origin'));
  if (!allowed) return;
  response.headers.set('access-control-allow-origin', allowed);
  response.headers.set('access-control-expose-headers', EXPOSED_HEADERS);
}
