// GET /metrics: the process's Prometheus text, for the holder of METRICS_TOKEN and no one else
// (the admin token is refused: a scraper's credential should not be the operator's, nor the
// reverse). Off (404, as if absent) when METRICS_TOKEN is not configured: a scrape runs database
// queries. A missing or wrong token is a failed authentication like a wrong API key: it spends
// the client address's AUTH_FAILURES_PER_MINUTE, and a spent address gets 429 before any check.
import type { AppDeps } from '../deps.ts';
import { AppError } from '../errors.ts';
import { bearerToken } from '../services/auth/api-keys.ts';
import { isMetricsToken } from '../services/auth/admin-token.ts';
import type { ApiDeps } from './app-services.ts';
import { assertAddressNotBlocked, countFailedAuthentication } from './authenticate-request.ts';
import { errorResponse, json } from './responses.ts';

export type MetricsDeps = Pick<AppDeps, 'config' | 'metrics'> & Pick<ApiDeps, 'rateLimiters'>;

/** `address`: the client's, as the front door found it (none in-process: not limited). */
export async function serveMetrics(deps: MetricsDeps, request: Request, address: string | undefined): Promise<Response> {
  if (!deps.config.METRICS_TOKEN) return json(404, { detail: 'Not Found' });
  if (request.method !== 'GET') return json(405, { detail: 'Method Not Allowed' });
  try {
    await assertAddressNotBlocked(deps, address);
  } catch (e) {
    if (e instanceof AppError) return errorResponse(e);
    throw e;
  }
  if (!isMetricsToken(deps, bearerToken(request.headers.get('authorization')))) {
    await countFailedAuthentication(deps, address);
    return json(401, { detail: 'Metrics need Authorization: Bearer <METRICS_TOKEN>' }, { 'www-authenticate': 'Bearer' });
  }
  const { registry } = deps.metrics;
  return new Response(await registry.metrics(), { status: 200, headers: { 'content-type': registry.contentType } });
}
