// Use case: an account's provider route (docs/providers.md "Routing and failover"): the providers
// its dials go through in order, each with a weight and its own config sealed like
// accounts.provider_config. The first entry is also written as the account's provider and config,
// so what reads one provider (dial pacing, `provider set`'s readers) sees the primary.
import type { AppDeps } from '../../deps.ts';
import { withSqlTransaction } from '../../db/sql-transaction.ts';
import type { RouteEntry } from '../../domain/provider-route.ts';
import { notFound } from '../../errors.ts';
import { sealSecret } from '../webhooks/secrets.ts';

type Deps = Pick<AppDeps, 'db' | 'appSecret'>;

export interface RouteSetting extends RouteEntry {
  /** The provider's settings, as its accountConfig made them (null: none). */
  config: object | null;
}

/** Replaces the account's route (checked by the caller: domain/provider-route.ts routeFaults). */
export async function setAccountRoute(deps: Deps, accountId: string, route: readonly RouteSetting[]): Promise<void> {
  const sealed = route.map((r) => (r.config ? sealSecret(deps.appSecret, JSON.stringify(r.config)) : null));
  await withSqlTransaction(deps.db, async (tx) => {
    const n = await tx.query<{ id: string }>('UPDATE accounts SET provider = $2, provider_config = $3 WHERE id = $1 RETURNING id', [
      accountId,
      route[0].provider,
      sealed[0],
    ]);
    if (n.length === 0) throw notFound(`Account ${accountId} not found`);
    await tx.query('DELETE FROM account_providers WHERE account_id = $1', [accountId]);
    await tx.query(
      `INSERT INTO account_providers (account_id, provider, position, weight, config)
       SELECT $1, p, ord::int, w, c FROM unnest($2::text[], $3::int[], $4::text[]) WITH ORDINALITY AS r(p, w, c, ord)`,
      [accountId, route.map((r) => r.provider), route.map((r) => r.weight), sealed],
    );
  });
}

/** Each account's route; an account without one dials through its provider alone (weight 1). */
export async function accountRoutes(deps: Pick<AppDeps, 'db'>, accountIds: string[]): Promise<Map<string, RouteEntry[]>> {
  if (accountIds.length === 0) return new Map();
  const rows = await deps.db.prisma.$queryRaw<{ id: string; provider: string; routed: string | null; weight: number | null }[]>`
    SELECT a.id, a.provider, p.provider AS routed, p.weight
      FROM accounts a LEFT JOIN account_providers p ON p.account_id = a.id
     WHERE a.id = ANY(${accountIds}::text[])
     ORDER BY a.id, p.position`;
  const out = new Map<string, RouteEntry[]>();
  for (const r of rows) {
    const list = out.get(r.id) ?? [];
    list.push(r.routed === null ? { provider: r.provider, weight: 1 } : { provider: r.routed, weight: r.weight ?? 1 });
    out.set(r.id, list);
  }
  return out;
}
