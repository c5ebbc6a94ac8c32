// GET /metrics: the process's Prometheus text, for the holder of METRICS_TOKEN (or ADMIN_TOKEN).
// Off (404, as if absent) when neither token is configured: a scrape runs database queries.
import type { AppDeps } from '../deps.ts';
import { bearerToken } from '../services/auth/api-keys.ts';
import { mayReadMetrics } from '../services/auth/admin-token.ts';
import { json } from './responses.ts';

export async function serveMetrics(deps: Pick<AppDeps, 'config' | 'metrics'>, request: Request): Promise<Response> {
  if (!deps.config.METRICS_TOKEN && !deps.config.ADMIN_TOKEN) return json(404, { detail: 'Not Found' });
  if (request.method !== 'GET') return json(405, { detail: 'Method Not Allowed' });
  if (!mayReadMetrics(deps, bearerToken(request.headers.get('authorization')))) {
    return json(401, { detail: 'Metrics need Authorization: Bearer <METRICS_TOKEN>' }, { 'www-authenticate': 'Bearer' });
  }
  const { registry } = deps.metrics;
  return new Response(await registry.metrics(), { status: 200, headers: { 'content-type': registry.contentType } });
}
