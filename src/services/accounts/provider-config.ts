// Use case: an account's voice provider and its secret configuration. The config is JSON sealed
// with the app secret (same AES-GCM box as webhook signing secrets), so a database dump alone
// holds no provider API key. What the config holds is the provider's business: the caller has it
// validated by the provider first (dispatch/voice/account-config.ts).
import type { AppDeps } from '../../deps.ts';
import { withSqlTransaction } from '../../db/sql-transaction.ts';
import { notFound } from '../../errors.ts';
import { openSecret, sealSecret } from '../webhooks/secrets.ts';

type Deps = Pick<AppDeps, 'db' | 'appSecret'>;

/**
 * Names the account's provider and replaces its sealed config (null: none). A route the account had
 * (account-route.ts) is dropped: the account dials through this provider alone.
 */
export async function setAccountProvider(deps: Deps, accountId: string, provider: string, config: object | null): Promise<void> {
  const sealed = config ? sealSecret(deps.appSecret, JSON.stringify(config)) : null;
  await withSqlTransaction(deps.db, async (tx) => {
    const n = await tx.query<{ id: string }>('UPDATE accounts SET provider = $2, provider_config = $3 WHERE id = $1 RETURNING id', [
      accountId,
      provider,
      sealed,
    ]);
    if (n.length === 0) throw notFound(`Account ${accountId} not found`);
    await tx.query('DELETE FROM account_providers WHERE account_id = $1', [accountId]);
  });
}

/**
 * The account's provider config, opened; null when it has none, or, given `provider`, when neither
 * the account's route lists that provider nor the account names it (its config is another's, not
 * the caller's). Its shape is the provider's.
 */
export async function accountProviderConfig<T>(deps: Deps, accountId: string, provider?: string): Promise<T | null> {
  // A routed provider keeps its own config in the route (the first one's is also the account's).
  if (provider !== undefined) {
    const routed = await deps.db.prisma.$queryRaw<{ config: string | null }[]>`
      SELECT config FROM account_providers WHERE account_id = ${accountId} AND provider = ${provider}`;
    if (routed[0]) return routed[0].config ? (JSON.parse(openSecret(deps.appSecret, routed[0].config)) as T) : null;
  }
  const rows = await deps.db.prisma.$queryRaw<{ provider: string; provider_config: string | null }[]>`
    SELECT provider, provider_config FROM accounts WHERE id = ${accountId}`;
  const row = rows[0];
  if (!row?.provider_config || (provider !== undefined && row.provider !== provider)) return null;
  return JSON.parse(openSecret(deps.appSecret, row.provider_config)) as T;
}

/** Each account's voice provider name (the worker paces dials by it before claiming). */
export async function accountProviders(deps: Pick<AppDeps, 'db'>, accountIds: string[]): Promise<Map<string, string>> {
  if (accountIds.length === 0) return new Map();
  const rows = await deps.db.prisma.$queryRaw<{ id: string; provider: string }[]>`
    SELECT id, provider FROM accounts WHERE id = ANY(${accountIds}::text[])`;
  return new Map(rows.map((r) => [r.id, r.provider]));
}

/** The account that placed a provider call (for lookups of calls placed by another worker). */
export async function accountForProviderCall(deps: Pick<AppDeps, 'db'>, providerCallId: string): Promise<string | null> {
  const rows = await deps.db.prisma.$queryRaw<{ account_id: string }[]>`
    SELECT account_id FROM calls WHERE provider_call_id = ${providerCallId} LIMIT 1`;
  return rows[0]?.account_id ?? null;
}

/** The provider's agent id and version for our agent and prompt version (null fields: the number's default agent). */
export async function providerAgentRef(
  deps: Pick<AppDeps, 'db'>,
  agentId: string,
  promptVersionId: string,
): Promise<{ agentId: string | null; agentVersion: number | null }> {
  const rows = await deps.db.prisma.$queryRaw<{ provider_agent_id: string | null; provider_agent_version: number | null }[]>`
    SELECT a.provider_agent_id, p.provider_agent_version
      FROM agents a LEFT JOIN prompt_versions p ON p.id = ${promptVersionId} AND p.agent_id = a.id
     WHERE a.id = ${agentId}`;
  return { agentId: rows[0]?.provider_agent_id ?? null, agentVersion: rows[0]?.provider_agent_version ?? null };
}
