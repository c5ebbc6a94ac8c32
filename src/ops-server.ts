// A worker-only process's own small HTTP listener (WORKER_PORT): /healthz, /readyz (the database,
// migrations and this process's loops) and /metrics, so workers are probed and scraped like API
// processes. It reads no request bodies and serves nothing else.
import http, { type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServerAdapter } from '@whatwg-node/server';
import type { AppDeps } from './deps.ts';
import type { StartedBackground } from './background.ts';
import { json } from './http/responses.ts';
import { processReadiness } from './http/readiness.ts';
import { serveMetrics } from './http/metrics-endpoint.ts';
import { nodeClientAddress } from './http/client-address.ts';
import { createRateLimiters } from './services/auth/rate-limit.ts';

export interface OpsListener {
  url: string;
  close(): Promise<void>;
}

export async function listenForOps(deps: AppDeps, background: StartedBackground, port: number): Promise<OpsListener> {
  const readiness = processReadiness(deps.db, [() => background.problem()]);
  // Failed /metrics tokens are counted per client address here as on the API port.
  const metricsDeps = { ...deps, rateLimiters: createRateLimiters(deps) };
  const route = async (request: Request, context: { req?: IncomingMessage }): Promise<Response> => {
    const { pathname } = new URL(request.url);
    if (pathname === '/metrics') return serveMetrics(metricsDeps, request, nodeClientAddress(context.req, deps.config.TRUST_PROXY));
    if (request.method !== 'GET' && request.method !== 'HEAD') return json(405, { detail: 'Method Not Allowed' });
    if (pathname === '/healthz') return json(200, { status: 'ok' });
    if (pathname === '/readyz') return readiness();
    return json(404, { detail: 'Not Found' });
  };
  const server = http.createServer(createServerAdapter<{ req?: IncomingMessage }>(route));
  // Probes are short: a client that opens a socket and says nothing is dropped.
  server.requestTimeout = 10_000;
  server.headersTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, deps.config.HOST, () => resolve());
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://${deps.config.HOST}:${bound}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
