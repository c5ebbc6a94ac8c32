import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServerAdapter } from '@whatwg-node/server';
import type { AppDeps } from './deps.ts';
import { createYogaServer, type Yoga } from './graphql/yoga.ts';
import { compiledDocuments, createRestRouter, routePatterns } from './rest/router.ts';
import { routes } from './rest/routes.ts';
import { json } from './http/responses.ts';
import { serveRecording } from './http/recordings.ts';
import { createProviderRoutes } from './http/provider-routes.ts';
import { VOICE_PROVIDERS } from './dispatch/voice/registry.ts';
import type { VoiceProviderModule } from './dispatch/voice/provider-module.ts';
import { attachWebSocketServer } from './graphql/ws.ts';
import { createFrontDoor, type RequestContext } from './http/front-door.ts';
import type { RequestScope } from './http/request-scope.ts';
import { createAppServices, type ApiDeps } from './http/app-services.ts';
import { createDashboard, DASHBOARD_ASSETS } from './http/dashboard.ts';
import { createGraphiql, GRAPHIQL_ASSETS } from './http/graphiql.ts';
import { trustedDocuments } from './http/trusted-documents.ts';
import { createApiDocs, DOCS_ASSETS, DOCS_PAGE } from './http/api-docs.ts';
import { buildOpenApiDocument, OPENAPI_PATH } from './rest/openapi/document.ts';
import { createLiveSessions } from './graphql/live-sessions.ts';
import { configuredBodyBudget } from './http/body-budget.ts';
import { guardConnections, httpServerOptions } from './http/connection-guard.ts';
import { serveMetrics } from './http/metrics-endpoint.ts';
import { handleRegistryImport, REGISTRY_NUMBERS_PATH, REGISTRY_REASSIGNED_PATH } from './http/registry-import.ts';
import { serveOperatorProof } from './http/operator-proof.ts';
import { OPERATOR_PROOF_PATH } from './services/auth/operator-proof.ts';
import { bodyBudgetCheck, processReadiness, type ReadinessCheck } from './http/readiness.ts';
import { FAVICON_PATH, serveFavicon } from './http/favicon.ts';

export interface App {
  /** The process's dependencies and the objects this app shares between its requests. */
  deps: ApiDeps;
  yoga: Yoga;
  /** Handles one request without a port (what most tests use); `context.clientAddress` stands in for the peer. */
  fetch(request: Request, context?: RequestContext): Promise<Response>;
  /** Listens on config PORT/HOST (PORT 0 = any free port); resolves to the base URL. */
  listen(): Promise<string>;
  stop(): Promise<void>;
}

/** HEAD answers like GET: same status and headers, no body (a proxied one is not read on). */
async function withoutBody(response: Response): Promise<Response> {
  await response.body?.cancel().catch(() => {});
  return new Response(null, { status: response.status, headers: response.headers });
}

export interface AppOptions {
  /** More reasons for /readyz to say not ready (e.g. this process's worker loop), beside the database's. */
  readiness?: ReadinessCheck[];
  /** The token this process wrote to DATA_DIR/operator-token: it answers the CLI's proof challenges. */
  operatorToken?: string;
  /** The voice providers whose routes, settings and recordings this app serves; default: all this build ships. */
  voiceProviders?: readonly VoiceProviderModule[];
}

export function buildApp(processDeps: AppDeps, opts: AppOptions = {}): App {
  const deps: ApiDeps = { ...processDeps, ...createAppServices(processDeps, opts.voiceProviders ?? VOICE_PROVIDERS) };
  // Subscriptions and sockets re-check their key: a revoked key or disabled account ends them.
  const sessions = createLiveSessions(deps.db, deps.logger, deps.config.CREDENTIAL_RECHECK_MS);
  const graphiql = createGraphiql();
  // The dashboard's documents, run by hash (docs/api.md#trusted-documents).
  const trusted = trustedDocuments();
  const yoga = createYogaServer(deps, sessions, graphiql, trusted, compiledDocuments(routes));
  // Bodies held in memory at once, counted by every reader of a body on its sender's share.
  const bodies = configuredBodyBudget(deps.config);
  const handleRest = createRestRouter(yoga, routes, { maxBodyBytes: deps.config.MAX_BODY_BYTES, bodyBudget: bodies, logger: deps.logger });
  const dashboard = createDashboard(deps, trusted.idsByOperation);
  const providerRoutes = createProviderRoutes(deps.voiceProviders, deps);
  const apiDocs = createApiDocs(OPENAPI_PATH, () => buildOpenApiDocument(routes));
  const removeSubscriptionSource = deps.metrics.addSubscriptionSource(() => {
    const st = deps.events.started()?.stats();
    return st ? st.progressSubscribers + st.callSubscribers + st.accountSubscribers : 0;
  });
  const removeExportSource = deps.metrics.addExportSource(() => deps.exports.held());
  const removeBodyBytesSource = deps.metrics.addBodyBytesSource(() => bodies.held());
  const readiness = processReadiness(deps.db, [bodyBudgetCheck(bodies), ...(opts.readiness ?? [])]);

  async function route(request: Request, scope: RequestScope): Promise<Response> {
    const url = new URL(request.url);
    const p = url.pathname;
    if (p === '/graphql' || p.startsWith('/graphql/')) return yoga.fetch(request, { scope });
    // Public: the document and its reference page need no key.
    if (apiDocs.handles(p)) return apiDocs.serve(request, p);
    if (p.startsWith('/api/')) return handleRest(request, url, scope);
    if (p.startsWith('/recordings/') && (request.method === 'GET' || request.method === 'HEAD')) {
      return request.method === 'HEAD' ? withoutBody(await serveRecording(deps, url)) : serveRecording(deps, url);
    }
    // Anyone may post here: its bytes count on the client address's anonymous share.
    if (providerRoutes.handles(p)) return providerRoutes.serve(request, p, { ...bodies, open: () => bodies.open(scope) });
    if (p === '/healthz') return json(200, { status: 'ok' });
    if (p === FAVICON_PATH) return serveFavicon(request);
    if (p === '/readyz') return readiness();
    if (p === '/metrics') return serveMetrics(deps, request, scope.clientAddress);
    if (p === OPERATOR_PROOF_PATH) return serveOperatorProof(opts.operatorToken, request, url);
    if (p === REGISTRY_NUMBERS_PATH || p === REGISTRY_REASSIGNED_PATH) return handleRegistryImport(deps, request, url);
    if (dashboard.handles(p)) return dashboard.serve(request, p);
    if (graphiql.handles(p)) return graphiql.serve(request, p);
    return json(404, { detail: 'Not Found' });
  }

  const restPatternOf = routePatterns(routes);
  /** The route table's pattern, never the raw path: ids and signed tokens stay out of the log. */
  function routeLabel(p: string): string {
    if (p === '/graphql' || p.startsWith('/graphql/')) return '/graphql';
    if (p === OPENAPI_PATH || p === DOCS_PAGE) return p;
    if (p.startsWith(DOCS_ASSETS)) return `${DOCS_ASSETS}:asset`;
    if (p.startsWith('/api/')) return restPatternOf(p) ?? '/api/(unmatched)';
    if (p.startsWith('/recordings/')) return '/recordings/:file';
    if (p.startsWith(DASHBOARD_ASSETS)) return `${DASHBOARD_ASSETS}:asset`;
    if (graphiql.handles(p)) return `${GRAPHIQL_ASSETS}:asset`;
    if (providerRoutes.handles(p)) return p;
    if (
      [
        '/healthz',
        '/readyz',
        '/metrics',
        OPERATOR_PROOF_PATH,
        REGISTRY_NUMBERS_PATH,
        REGISTRY_REASSIGNED_PATH,
        FAVICON_PATH,
        '/',
        '/dashboard',
        '/dashboard/',
      ].includes(p)
    )
      return p;
    return '(unmatched)';
  }

  // CORS, client address, anonymous budget per address, GraphQL body cap, security headers, request log.
  const handle = createFrontDoor(deps, route, bodies, routeLabel);
  const adapter = createServerAdapter<RequestContext>(handle);
  let server: http.Server | undefined;
  let closeWebSockets: (() => Promise<void>) | undefined;

  return {
    deps,
    yoga,
    fetch: handle,
    async listen() {
      // Header and request deadlines, and connections per address (a body's own pace is its reader's).
      server = http.createServer(httpServerOptions(deps.config), adapter);
      guardConnections(server, deps.config, deps.metrics);
      closeWebSockets = attachWebSocketServer(server, yoga, deps, sessions);
      await new Promise<void>((resolve, reject) => {
        server!.once('error', reject);
        server!.listen(deps.config.PORT, deps.config.HOST, () => resolve());
      });
      const { port } = server.address() as AddressInfo;
      return `http://${deps.config.HOST}:${port}`;
    },
    async stop() {
      removeSubscriptionSource();
      removeExportSource();
      removeBodyBytesSource();
      await closeWebSockets?.();
      sessions.close();
      await deps.events.close();
      if (server) {
        const s = server;
        server = undefined;
        s.closeIdleConnections?.();
        await new Promise<void>((resolve) => s.close(() => resolve()));
      }
    },
  };
}
