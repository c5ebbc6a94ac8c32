import type { DocumentNode, ExecutionResult } from 'graphql';
import { formatIssue, type PathIssue } from '../domain/field-issue.ts';
import { AppError, requestValidation } from '../errors.ts';
import type { Account } from '../generated/prisma/client.ts';
import type { Yoga } from '../graphql/yoga.ts';
import type { GraphQLContext } from '../graphql/context.ts';
import type { Logger } from 'pino';
import { errorResponse, internalError, json, success } from '../http/responses.ts';
import { restOperations } from './operations.ts';
import { decodeUtf8, jsonContentTypeProblem, MAX_JSON_NESTING, readBodyBytes } from '../http/body.ts';
import { jsonShapeFault } from '../http/json-shape.ts';
import type { BodyBudget, BodyLease } from '../http/body-budget.ts';
import { jsonHazards, queryHazards, textMayHoldHazards } from '../http/json-guard.ts';
import type { RequestScope } from '../http/request-scope.ts';
import { rateLimitHeaders } from '../services/auth/rate-limit.ts';
import { snakeCase } from '../domain/text-forms.ts';
import type { RouteDoc } from './openapi/route-doc.ts';
import type { MarkPhase } from '../phase-timer.ts';

export interface RouteInput {
  params: Record<string, string>;
  query: URLSearchParams;
  /** Parsed JSON body (POST/PUT), `undefined` otherwise. */
  body: unknown;
  /** The authenticated account (every route needs one). */
  account: Account;
}

interface RouteBase {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Path with `:name` segments. */
  path: string;
  /** The route in the OpenAPI document (/api/v1/openapi.json). */
  doc: RouteDoc;
}

/**
 * A route that answers with its own body (a streamed CSV file) from a use case rather than a
 * GraphQL document; it is authenticated and its budget spent exactly as a document route.
 */
export interface StreamRoute extends RouteBase {
  method: 'GET';
  stream: (input: RouteInput, ctx: GraphQLContext) => Promise<Response>;
}

export type RestRoute = DocumentRoute | StreamRoute;

export interface DocumentRoute extends RouteBase {
  operation: string;
  /**
   * Run the document compiled by graphql-jit (graphql/plugins/compiled-documents.ts): for long lists,
   * and batch details (0.32-0.44 against 0.42-0.53 ms of CPU a request, alternating runs). In a list,
   * only where the items' fields declare no `select` of columns: plugin-prisma looks such a field up
   * by its response path on every row, which graphql-jit builds anew for each field (slower than
   * graphql-js, whose path links are shared). docs/architecture.md, "Hot reads".
   */
  compiled?: boolean;
  /** The route takes no input in its body: an empty body is fine (a JSON one is still checked). */
  bodyOptional?: boolean;
  /**
   * GraphQL variables from the request, each fitting its GraphQL type; throws the contract's
   * AppError for input that does not (bad query values, a mistyped body).
   */
  variables?: (input: RouteInput) => Record<string, unknown>;
  /** How a validation issue of the operation is spelled to this route's client; default snake_case. */
  detail?: (issue: PathIssue, input: RouteInput) => string;
  // `any`: each route declares its own codegen type for `data`.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  respond: (data: any, input: RouteInput) => { status?: number; message: string; data: unknown };
}

type CompiledRoute = (DocumentRoute & { segments: string[]; document: DocumentNode }) | (StreamRoute & { segments: string[] });

const segmentsOf = (path: string) => path.split('/').filter(Boolean);

function compile(route: RestRoute): CompiledRoute {
  if ('stream' in route) return { ...route, segments: segmentsOf(route.path) };
  const document = restOperations.get(route.operation);
  if (!document) throw new Error(`REST route ${route.method} ${route.path}: unknown operation ${route.operation}`);
  return { ...route, segments: segmentsOf(route.path), document };
}

function match(route: { segments: string[] }, parts: string[]): Record<string, string> | null {
  if (route.segments.length !== parts.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < parts.length; i++) {
    const seg = route.segments[i];
    if (seg.startsWith(':')) params[seg.slice(1)] = parts[i];
    else if (seg !== parts[i]) return null;
  }
  return params;
}

/** The documents of the routes that run compiled, for Yoga (graphql/yoga.ts). */
export function compiledDocuments(routeTable: RestRoute[]): DocumentNode[] {
  return routeTable.flatMap((r) => ('operation' in r && r.compiled ? [restOperations.get(r.operation)!] : []));
}

/** Finds the route-table path (`:name` segments) a URL path matches, for logs; undefined if none. */
export function routePatterns(routeTable: RestRoute[]): (pathname: string) => string | undefined {
  const patterns = routeTable.map((r) => ({ path: r.path, segments: segmentsOf(r.path) }));
  return (pathname) => {
    const parts = segmentsOf(pathname);
    return patterns.find((r) => match(r, parts))?.path;
  };
}

export interface RestRouterOptions {
  maxBodyBytes: number;
  bodyBudget: BodyBudget;
  logger: Logger;
}

async function readJsonBody(request: Request, maxBytes: number, lease: BodyLease, optional: boolean, mark?: MarkPhase): Promise<unknown> {
  const type = request.headers.get('content-type');
  const typeProblem = jsonContentTypeProblem(type);
  if (type && typeProblem) throw new AppError('UNSUPPORTED_MEDIA_TYPE', typeProblem);
  const bytes = await readBodyBytes(request, maxBytes, lease);
  mark?.('body');
  // Without a type only an empty body passes (a bodiless action, or "Field required" below).
  if (!type && bytes.byteLength > 0) throw new AppError('UNSUPPORTED_MEDIA_TYPE', typeProblem!);
  const text = decodeUtf8(bytes);
  if (text === null) throw requestValidation(['body: JSON decode error']);
  if (!text.trim()) {
    if (optional) return undefined;
    throw requestValidation(['body: Field required']);
  }
  // Nesting, keys of an object, objects and arrays: refused before JSON.parse builds them.
  const shape = jsonShapeFault(bytes, MAX_JSON_NESTING);
  if (shape) throw requestValidation([`body: JSON ${shape}`]);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw requestValidation(['body: JSON decode error']);
  }
  // Every body of the contract is an object; `null` could not even reach the operation's JSON! variable.
  if (body === null) throw requestValidation(['body: Input should be a valid dictionary']);
  // NUL, lone surrogates and prototype keys can't be stored faithfully: refuse before any write.
  const hazards = textMayHoldHazards(text) ? jsonHazards(body) : [];
  if (hazards.length) throw requestValidation(hazards);
  mark?.('parse');
  return body;
}

/** An error whose details name fields by path, re-spelled for the route's client. */
function inRouteSpelling(e: AppError, route: DocumentRoute, input: RouteInput): AppError {
  if (e.issues.length === 0) return e;
  const detail = route.detail ?? ((issue: PathIssue) => formatIssue(issue, snakeCase, 'body'));
  return new AppError(
    e.code,
    e.message,
    e.issues.map((issue) => detail(issue, input)),
    e.headers,
  );
}

/** The first AppError among the result's errors, or null when the failure was unexpected. */
function appErrorOf(result: ExecutionResult): AppError | null {
  for (const e of result.errors ?? []) {
    if (e instanceof AppError) return e;
    if (e.originalError instanceof AppError) return e.originalError;
  }
  return null;
}

export function createRestRouter(yoga: Yoga, routeTable: RestRoute[], opts: RestRouterOptions) {
  const compiled = routeTable.map(compile);

  async function run(
    route: CompiledRoute,
    request: Request,
    scope: RequestScope,
    url: URL,
    params: Record<string, string>,
    lease: BodyLease,
  ): Promise<Response> {
    const operationParams = { operationName: 'operation' in route ? route.operation : undefined, variables: {} as Record<string, unknown> };
    // Same envelop pipeline (context, auth, plugins, masking) as POST /graphql.
    const { execute, contextFactory, schema } = yoga.getEnveloped({ request, scope, params: operationParams });
    const contextValue = (await contextFactory()) as unknown as GraphQLContext;
    // Every route needs the account: authenticate (and spend one unit of its rate limit) before
    // reading anything else the client sent, so anonymous or throttled clients cost no body parsing.
    const account = await contextValue.account();
    const mark = scope.timing?.mark;
    mark?.('auth');
    const queryProblems = queryHazards(url.searchParams);
    if (queryProblems.length) throw requestValidation(queryProblems);
    const body =
      request.method === 'POST' || request.method === 'PUT'
        ? await readJsonBody(request, opts.maxBodyBytes, lease, ('bodyOptional' in route && route.bodyOptional) || false, mark)
        : undefined;
    scope.inputVetted = true;
    const input: RouteInput = { params, query: url.searchParams, body, account };
    if ('stream' in route) return route.stream(input, contextValue);
    const variables = route.variables?.(input) ?? {};
    operationParams.variables = variables;
    mark?.('rest');
    const result = (await execute({
      schema,
      document: route.document,
      variableValues: variables,
      contextValue,
      operationName: route.operation,
    })) as ExecutionResult;
    mark?.('result');
    if (result.errors?.length) {
      const appError = appErrorOf(result);
      if (appError) return errorResponse(inRouteSpelling(appError, route, input));
      opts.logger.error({ errors: result.errors.map((e) => e.message), route: route.path }, 'REST operation failed');
      return internalError();
    }
    const out = route.respond(result.data, input);
    const response = success(out.status ?? 200, out.message, out.data);
    mark?.('answer');
    return response;
  }

  /** Every response of an authenticated request reports the account's remaining budget. */
  function withRateLimitHeaders(scope: RequestScope, response: Response): Response {
    const state = scope.rateLimit;
    if (state) for (const [name, value] of Object.entries(rateLimitHeaders(state))) response.headers.set(name, value);
    return response;
  }

  return async function handleRest(request: Request, url: URL, scope: RequestScope): Promise<Response> {
    const parts = segmentsOf(url.pathname);
    const allowed: string[] = [];
    for (const route of compiled) {
      const params = match(route, parts);
      if (!params) continue;
      allowed.push(route.method);
      if (route.method !== request.method) continue;
      // Its bytes count on the account that authenticates before the body is read (body-budget.ts).
      const lease = opts.bodyBudget.open(scope);
      try {
        return withRateLimitHeaders(scope, await run(route, request, scope, url, params, lease));
      } catch (e) {
        if (e instanceof AppError) return withRateLimitHeaders(scope, errorResponse(e));
        opts.logger.error({ err: e, route: route.path }, 'REST route crashed');
        return withRateLimitHeaders(scope, internalError(e));
      } finally {
        lease.release();
      }
    }
    if (allowed.length === 0) return json(404, { detail: 'Not Found' });
    const response = json(405, { detail: 'Method Not Allowed' });
    response.headers.set('Allow', allowed.sort().join(', '));
    return response;
  };
}
