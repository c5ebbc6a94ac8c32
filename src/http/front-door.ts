// What every HTTP request passes before routing and every response after it: the client address,
// CORS (preflight and response headers), the anonymous budget per address, the body cap for
// GraphQL and the sender whose share its bytes count on (REST reads its own body after
// authenticating), and security headers. Nothing that escapes a handler reaches the client as a
// stack trace.
import type { IncomingMessage } from 'node:http';
import { Request as ServerRequest } from '@whatwg-node/fetch';
import type { ApiDeps } from './app-services.ts';
import { AppError, ERROR_CODES } from '../errors.ts';
import { errorResponse, internalError, json } from './responses.ts';
import { unavailableFor } from '../db/unreachable.ts';
import { assertAnonymousBudgetLeft, authenticatedKey } from './authenticate-request.ts';
import { logRequest, requestIdOf } from './request-log.ts';
import { bearerToken } from '../services/auth/api-keys.ts';
import { isAdminToken } from '../services/auth/admin-token.ts';
import { jsonContentTypeProblem, MAX_JSON_NESTING, readBodyBytes } from './body.ts';
import { jsonShapeFault } from './json-shape.ts';
import { OPERATOR_PARTY, type BodyBudget, type BodyLease } from './body-budget.ts';
import { nodeClientAddress, normalizeAddress } from './client-address.ts';
import { newRequestScope, type RequestScope } from './request-scope.ts';
import { PhaseTimer } from '../phase-timer.ts';
import { applyCors, corsPolicy, isPreflight, preflightResponse } from './cors.ts';
import { applySecurityHeaders } from './security-headers.ts';

/** What the Node adapter passes along (`req`), or what an in-process caller states. */
export interface RequestContext {
  req?: IncomingMessage;
  /** Overrides the socket address (tests, embedding). */
  clientAddress?: string;
}

export type Handler = (request: Request, scope: RequestScope) => Promise<Response>;

/** The route pattern a request is logged under (e.g. `/api/v1/public/call-batches/:batch_id`). */
export type RouteLabel = (pathname: string) => string;

const isGraphql = (path: string) => path === '/graphql' || path.startsWith('/graphql/');

/** An AppError in GraphQL-over-HTTP form, for refusals that happen before Yoga sees the request. */
function graphqlError(err: AppError): Response {
  const extensions = { code: err.code, ...(err.details.length ? { details: err.details } : {}) };
  return json(ERROR_CODES[err.code].status, { errors: [{ message: err.message, extensions }] }, err.headers);
}

/**
 * Bytes of a GraphQL body whose sender has not shown a key that authenticates: anonymous clients
 * only introspect. A larger (or unsized) body is read only after its key checks out.
 */
export const ANONYMOUS_GRAPHQL_BODY_BYTES = 64 * 1024;

/** A GET whose `variables` / `extensions` are not JSON objects is the client's 400 (Yoga answers 500). */
function checkedGraphqlGet(request: Request): Request {
  const params = new URL(request.url).searchParams;
  for (const name of ['variables', 'extensions']) {
    const raw = params.get(name);
    if (raw === null) continue;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      throw new AppError('BAD_REQUEST', `The ${name} parameter is not valid JSON`);
    }
    if (value !== null && (typeof value !== 'object' || Array.isArray(value))) {
      throw new AppError('BAD_REQUEST', `The ${name} parameter must be a JSON object`);
    }
  }
  return request;
}

/** The body lease's party, completed once the key (if any) has been checked. */
type Sender = { clientAddress: string | undefined; accountId?: string };

/** Who sends a GraphQL body and how large it may be. */
interface GraphqlSender {
  cap: number;
  accountId?: string;
}

/**
 * A key is checked before any byte of the body is read (the check is memoised for Yoga, and a key
 * that authenticated recently is cached), so a keyed body counts on its account's share, never on
 * what anonymous senders may take. A key that fails still has a small body read: Yoga answers the
 * refusal in GraphQL's form; a larger (or unsized) one gets its 401/403/429 before reading.
 */
async function graphqlSender(deps: ApiDeps, request: Request, scope: RequestScope): Promise<GraphqlSender> {
  const token = bearerToken(request.headers.get('authorization'));
  if (!token) return { cap: ANONYMOUS_GRAPHQL_BODY_BYTES };
  if (isAdminToken(deps, token)) return { cap: deps.config.MAX_BODY_BYTES, accountId: OPERATOR_PARTY };
  const declared = Number(request.headers.get('content-length') ?? NaN);
  try {
    const account = await authenticatedKey(deps, scope, token);
    return { cap: deps.config.MAX_BODY_BYTES, accountId: account.id };
  } catch (e) {
    const refused = e instanceof AppError && e.code === 'RATE_LIMITED';
    if (!refused && declared <= ANONYMOUS_GRAPHQL_BODY_BYTES) return { cap: ANONYMOUS_GRAPHQL_BODY_BYTES };
    throw e;
  }
}

/** The GraphQL request with its body read under its cap (Yoga itself would read any size). */
async function boundedGraphqlRequest(deps: ApiDeps, request: Request, scope: RequestScope, party: Sender, lease: BodyLease): Promise<Request> {
  if (request.method === 'GET' || request.method === 'HEAD') return checkedGraphqlGet(request);
  // Yoga would also read form-encoded and multipart posts (which browsers send cross-site
  // without a preflight); this API takes JSON only.
  const typeProblem = jsonContentTypeProblem(request.headers.get('content-type'));
  if (typeProblem) throw new AppError('UNSUPPORTED_MEDIA_TYPE', typeProblem);
  if (!request.body) return request;
  const sender = await graphqlSender(deps, request, scope);
  party.accountId = sender.accountId;
  const bytes = await readBodyBytes(request, sender.cap, lease);
  // Nesting, keys of an object (variables), objects and arrays: refused before JSON.parse builds them.
  const shape = jsonShapeFault(bytes, MAX_JSON_NESTING);
  if (shape) throw new AppError('MISSING_PARAMETER', `Request body ${shape}`);
  // The adapter's own Request class reads these bytes as they are; a global (undici) one would make
  // Yoga read them back through a web stream (~10 % of a small query's CPU).
  const bounded = new ServerRequest(request.url, { method: request.method, headers: request.headers, body: bytes as Uint8Array<ArrayBuffer> });
  // Parsed here, and kept by the request for Yoga: that class's parse error quotes the whole body,
  // which Yoga would send back (an echo of up to MAX_BODY_BYTES, secrets and all).
  try {
    await bounded.json();
  } catch {
    throw new AppError('BAD_REQUEST', 'POST body sent invalid JSON.');
  }
  return bounded;
}

function destroySocket(req: IncomingMessage | undefined): boolean {
  if (!req?.socket) return false;
  req.socket.destroy();
  return true;
}

export function createFrontDoor(deps: ApiDeps, route: Handler, bodies: BodyBudget, routeLabel: RouteLabel) {
  const cors = corsPolicy(deps.config.CORS_ORIGIN);
  const hsts = deps.config.PUBLIC_URL?.startsWith('https:') ?? false;
  const log = deps.logger.child({ component: 'http' });

  async function guarded(request: Request, path: string, scope: RequestScope, party: Sender, lease: BodyLease): Promise<Response> {
    const address = scope.clientAddress;
    const graphql = isGraphql(path);
    try {
      // A keyless request from an address that spent its anonymous budget gets nothing read or
      // parsed. A key is checked before any body is read (REST's handlers, graphqlSender), and a
      // wrong one past the address's failed-authentication budget is refused there.
      const keyless = !bearerToken(request.headers.get('authorization'));
      if (keyless && (graphql || path.startsWith('/api/'))) await assertAnonymousBudgetLeft(deps, address);
      if (graphql) request = await boundedGraphqlRequest(deps, request, scope, party, lease);
    } catch (e) {
      if (e instanceof AppError) return graphql ? graphqlError(e) : errorResponse(e);
      if (!graphql) throw e;
      deps.logger.error({ err: e, path }, 'request failed before GraphQL');
      const unavailable = unavailableFor(e);
      return unavailable ? graphqlError(unavailable) : json(500, { errors: [{ message: 'Unexpected error.' }] });
    }
    return route(request, scope);
  }

  async function answer(request: Request, path: string, scope: RequestScope): Promise<Response> {
    // A GraphQL body is held until its response is ready (REST and webhooks count their own).
    const party: Sender = { clientAddress: scope.clientAddress };
    const lease = bodies.open(party);
    try {
      return await guarded(request, path, scope, party, lease);
    } catch (err) {
      deps.logger.error({ err, method: request.method, path }, 'request failed');
      return internalError(err);
    } finally {
      lease.release();
    }
  }

  return async function handle(request: Request, context?: RequestContext): Promise<Response> {
    const startedAt = performance.now();
    const timing = deps.config.SERVER_TIMING ? new PhaseTimer() : undefined;
    const requestId = requestIdOf(request);
    const scope = newRequestScope(
      context?.clientAddress ? normalizeAddress(context.clientAddress) : nodeClientAddress(context?.req, deps.config.TRUST_PROXY),
      () => destroySocket(context?.req),
      requestId,
    );
    scope.timing = timing;
    const path = new URL(request.url).pathname;
    const preflight = isPreflight(request);
    let response = preflight ? preflightResponse(request, cors) : await answer(request, path, scope);
    response = await applySecurityHeaders(request, response, { hsts });
    if (!preflight) applyCors(request, response, cors);
    response.headers.set('x-request-id', requestId);
    // A body not read to its end (refused early, or cut for its pace) would keep the connection
    // while Node drains it: the connection closes with this answer instead.
    if (context?.req && !context.req.complete) response.headers.set('connection', 'close');
    if (timing) {
      timing.mark('headers');
      response.headers.set('server-timing', timing.header());
    }
    if (response.status === 408) deps.metrics.slowClients.inc({ phase: 'body' });
    const route = routeLabel(path);
    const ms = performance.now() - startedAt;
    logRequest(log, { requestId, method: request.method, route, status: response.status, ms, accountId: scope.accountId });
    deps.metrics.observeRequest(request.method, route, response.status, ms / 1000);
    return response;
  };
}
