// Each account's provider route, read for a dial and trusted for a few seconds (like the account's
// provider name in providers.ts): a worker dialling hundreds of calls a second reads it once.
import { accountRoutes } from '../../services/accounts/account-route.ts';
import type { RouteEntry } from '../../domain/provider-route.ts';
import type { LiveCall, WorkerState } from './state.ts';
import { isStale } from './state.ts';

/** How long an account's route is trusted before it is read again. */
const ROUTE_TTL_MS = 10_000;
/** Routes kept at most; the oldest go first past it. */
const ROUTES_MAX = 10_000;

/** The call's account's route; when it cannot be read, the provider its batch settings name. */
export async function routeOf(s: WorkerState, call: LiveCall): Promise<RouteEntry[]> {
  const now = s.clock.now().getTime();
  const hit = s.caches.routes.get(call.accountId);
  if (hit && !isStale(now - hit.at, ROUTE_TTL_MS)) return hit.route;
  try {
    const route = (await accountRoutes(s.deps, [call.accountId])).get(call.accountId);
    if (!route) return [{ provider: call.ctx.provider, weight: 1 }];
    if (s.caches.routes.size >= ROUTES_MAX) s.caches.routes.delete(s.caches.routes.keys().next().value!);
    s.caches.routes.set(call.accountId, { route, at: now });
    return route;
  } catch (err) {
    s.log.warn({ err, accountId: call.accountId }, 'could not read the provider route; dialling through the account provider');
    return hit?.route ?? [{ provider: call.ctx.provider, weight: 1 }];
  }
}
