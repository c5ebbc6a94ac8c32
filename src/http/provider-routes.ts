// POST /providers/<provider>/<path> — the endpoints voice providers push to (their webhooks), as
// each provider declares them (VoiceProviderModule.routes). Anyone can reach them, so this reads
// the body the same careful way for every provider before the provider sees it: a missing
// signature header refused before any byte is read, the body capped while it streams in (on the
// sender address's anonymous share), UTF-8 checked, and what JSON.parse would build bounded.
import { AppError, ERROR_CODES } from '../errors.ts';
import type { ProviderDeps, ProviderRoute, VoiceProviderModule } from '../dispatch/voice/provider-module.ts';
import { json } from './responses.ts';
import { decodeUtf8, MAX_JSON_NESTING, readBodyBytes } from './body.ts';
import { jsonShapeFault } from './json-shape.ts';
import type { BodyBudget, BodyLease } from './body-budget.ts';

const PROVIDER_ROUTE_PREFIX = '/providers/';

export interface ProviderRoutes {
  /** The routes' paths (each is its own label in the request log). */
  readonly paths: readonly string[];
  handles(path: string): boolean;
  /** `bodies` opens a lease on the sender's anonymous share. */
  serve(request: Request, path: string, bodies: BodyBudget): Promise<Response>;
}

export function createProviderRoutes(modules: readonly VoiceProviderModule[], deps: ProviderDeps): ProviderRoutes {
  const byPath = new Map<string, ProviderRoute>();
  for (const m of modules) {
    for (const r of m.routes?.(deps) ?? []) {
      const path = `${PROVIDER_ROUTE_PREFIX}${m.name}/${r.path}`;
      if (byPath.has(path)) throw new Error(`two provider routes at ${path}`);
      byPath.set(path, r);
    }
  }
  return {
    paths: [...byPath.keys()],
    handles: (path) => byPath.has(path),
    serve(request, path, bodies) {
      return serveProviderRoute(byPath.get(path)!, request, bodies);
    },
  };
}

async function serveProviderRoute(route: ProviderRoute, request: Request, bodies: BodyBudget): Promise<Response> {
  if (request.method !== 'POST') return json(405, { detail: 'Method Not Allowed' });
  if (route.signatureHeader && !request.headers.get(route.signatureHeader)) return json(401, { detail: 'Missing signature' });
  const lease = bodies.open();
  try {
    return await readAndReceive(route, request, lease);
  } finally {
    lease.release();
  }
}

async function readAndReceive(route: ProviderRoute, request: Request, lease: BodyLease): Promise<Response> {
  let bytes: Uint8Array;
  try {
    bytes = await readBodyBytes(request, route.maxBodyBytes, lease);
  } catch (e) {
    if (e instanceof AppError && e.code === 'UNAVAILABLE') return json(503, { detail: 'Service Unavailable' }, e.headers);
    if (e instanceof AppError && e.code === 'PAYLOAD_TOO_LARGE') return json(413, { detail: 'Payload Too Large' });
    // Over the address's share (429), too slow (408), gone (499): their status, in this route's form.
    if (e instanceof AppError) return json(ERROR_CODES[e.code].status, { detail: e.message }, e.headers);
    throw e;
  }
  const raw = decodeUtf8(bytes);
  if (raw === null) return json(400, { detail: 'Invalid UTF-8' });
  // Anyone may send this, signed or not: what JSON.parse would build is bounded first.
  const shape = jsonShapeFault(bytes, MAX_JSON_NESTING);
  if (shape) return json(400, { detail: `JSON ${shape}` });
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    return json(400, { detail: 'Invalid JSON' });
  }
  const reply = await route.receive({ raw, body, header: (name) => request.headers.get(name) });
  return reply.detail === undefined ? new Response(null, { status: reply.status }) : json(reply.status, { detail: reply.detail });
}
