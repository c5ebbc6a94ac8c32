// What every HTTP request passes before routing and every response after it: the client address,
// CORS (preflight and response headers), the failed-auth block per address, the body cap for
// GraphQL (REST reads its own body after authenticating), and security headers. Nothing that
// escapes a handler reaches the client as a stack trace.
import type { IncomingMessage } from 'node:http';
import type { AppDeps } from '../deps.ts';
import { AppError, ERROR_CODES } from '../errors.ts';
import { errorResponse, internalError, json } from '../rest/envelope.ts';
import { assertAddressNotBlocked } from '../services/rate-limit-guard.ts';
import { jsonContentTypeProblem, jsonNestsDeeperThan, MAX_JSON_NESTING, readBodyBytes } from './body.ts';
import { nodeClientAddress, normalizeAddress, setClientAddress } from './client-address.ts';
import { applyCors, corsPolicy, isPreflight, preflightResponse } from './cors.ts';
import { applySecurityHeaders } from './security-headers.ts';

/** What the Node adapter passes along (`req`), or what an in-process caller states. */
export interface RequestContext {
  req?: IncomingMessage;
  /** Overrides the socket address (tests, embedding). */
  clientAddress?: string;
}

export type Handler = (request: Request) => Promise<Response>;

const isGraphql = (path: string) => path === '/graphql' || path.startsWith('/graphql/');

/** An AppError in GraphQL-over-HTTP form, for refusals that happen before Yoga sees the request. */
function graphqlError(err: AppError): Response {
  const extensions = { code: err.code, ...(err.details.length ? { details: err.details } : {}) };
  return json(ERROR_CODES[err.code].status, { errors: [{ message: err.message, extensions }] }, err.headers);
}

/** The GraphQL request with its body read under the cap (Yoga itself would read any size). */
async function boundedGraphqlRequest(request: Request, maxBytes: number): Promise<Request> {
  if (request.method === 'GET' || request.method === 'HEAD') return request;
  // Yoga would also read form-encoded and multipart posts (which browsers send cross-site
  // without a preflight); this API takes JSON only.
  const typeProblem = jsonContentTypeProblem(request.headers.get('content-type'));
  if (typeProblem) throw new AppError('UNSUPPORTED_MEDIA_TYPE', typeProblem);
  if (!request.body) return request;
  const bytes = await readBodyBytes(request, maxBytes);
  if (jsonNestsDeeperThan(bytes, MAX_JSON_NESTING)) {
    throw new AppError('MISSING_PARAMETER', `Request body is nested too deeply (max depth ${MAX_JSON_NESTING})`);
  }
  return new Request(request.url, { method: request.method, headers: request.headers, body: bytes as Uint8Array<ArrayBuffer> });
}

export function createFrontDoor(deps: AppDeps, route: Handler) {
  const cors = corsPolicy(deps.config.CORS_ORIGIN);
  const hsts = deps.config.PUBLIC_URL?.startsWith('https:') ?? false;

  async function guarded(request: Request, address: string | undefined): Promise<Response> {
    const path = new URL(request.url).pathname;
    const graphql = isGraphql(path);
    try {
      // An address that spent its unauthenticated budget gets nothing read or parsed, whatever key
      // it presents now (a 200 here would tell a guesser which key is right).
      if (graphql || path.startsWith('/api/')) await assertAddressNotBlocked(deps, address);
      if (graphql) request = await boundedGraphqlRequest(request, deps.config.MAX_BODY_BYTES);
    } catch (e) {
      if (!(e instanceof AppError)) throw e;
      return graphql ? graphqlError(e) : errorResponse(e);
    }
    setClientAddress(request, address);
    return route(request);
  }

  return async function handle(request: Request, context?: RequestContext): Promise<Response> {
    const address = context?.clientAddress
      ? normalizeAddress(context.clientAddress)
      : nodeClientAddress(context?.req, deps.config.TRUST_PROXY);
    if (isPreflight(request)) return applySecurityHeaders(request, preflightResponse(request, cors), { hsts });
    let response: Response;
    try {
      response = await guarded(request, address);
    } catch (err) {
      deps.logger.error({ err, method: request.method, path: new URL(request.url).pathname }, 'request failed');
      response = internalError();
    }
    response = await applySecurityHeaders(request, response, { hsts });
    applyCors(request, response, cors);
    return response;
  };
}
