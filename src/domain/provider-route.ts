// An account's provider route (docs/providers.md "Routing and failover"): the providers a dial may
// go through, in order, each with a weight. The first provider of a dial is drawn by weight among
// those with one (all weights equal: the listed first); the others follow in listed order, a
// weight-0 entry only ever as a fallback. Pure: the draw is passed in.

export interface RouteEntry {
  provider: string;
  weight: number;
}

/** Providers in a route at most (bounded operator input). */
export const MAX_ROUTE_PROVIDERS = 5;
/** Highest weight an entry may take. */
export const MAX_ROUTE_WEIGHT = 1000;

/** The order in which one dial tries the route's providers; `draw` is uniform in [0, 1). */
export function dialOrder(route: readonly RouteEntry[], draw: number): string[] {
  const names = route.map((r) => r.provider);
  const total = route.reduce((sum, r) => sum + r.weight, 0);
  if (route.length < 2 || total <= 0 || route.every((r) => r.weight === route[0].weight)) return names;
  let point = draw * total;
  const first = route.find((r) => (point -= r.weight) < 0) ?? route.find((r) => r.weight > 0)!;
  return [first.provider, ...names.filter((n) => n !== first.provider)];
}

/** What is wrong with a route as an operator gave it (empty: nothing). */
export function routeFaults(route: readonly RouteEntry[], known: readonly string[]): string[] {
  const faults: string[] = [];
  if (route.length === 0 || route.length > MAX_ROUTE_PROVIDERS) faults.push(`providers: Input should list 1 to ${MAX_ROUTE_PROVIDERS} providers`);
  const seen = new Set<string>();
  for (const [i, r] of route.entries()) {
    if (!known.includes(r.provider)) faults.push(`providers[${i}].provider: Input should be ${known.map((k) => `'${k}'`).join(' or ')}`);
    if (seen.has(r.provider)) faults.push(`providers[${i}].provider: '${r.provider}' is listed twice`);
    seen.add(r.provider);
    if (!(Number.isInteger(r.weight) && r.weight >= 0 && r.weight <= MAX_ROUTE_WEIGHT))
      faults.push(`providers[${i}].weight: Input should be an integer from 0 to ${MAX_ROUTE_WEIGHT}`);
  }
  if (route.length > 0 && route.every((r) => r.weight === 0)) faults.push('providers: at least one weight should be above 0');
  return faults;
}
