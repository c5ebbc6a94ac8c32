// What the national do-not-call registry and the reassigned-number results say about a create's
// numbers: one statement per chunk of contacts, a primary-key probe and a bit test per number
// (the SQL functions of migration consent_and_registry, which the claim uses too).
import type { SqlTx } from '../../db/sql-transaction.ts';
import { reassignedKey, registryQuestions, type RegistryVerdicts } from '../../domain/registry.ts';
import type { NormalizedContact } from '../../domain/contacts.ts';

const NONE: RegistryVerdicts = { listed: new Set(), reassigned: new Set() };

export async function registryVerdicts(tx: SqlTx, accepted: readonly NormalizedContact[]): Promise<RegistryVerdicts> {
  const { numbers, since } = registryQuestions(accepted);
  if (numbers.length === 0) return NONE;
  const rows = await tx.query<{ phone: string; since: Date | string | null; listed: boolean; reassigned: boolean }>(
    `SELECT q.phone, q.since, registry_listed(q.phone) AS listed, registry_reassigned_since(q.phone, q.since) AS reassigned
       FROM unnest($1::text[], $2::timestamptz[]) AS q(phone, since)
      WHERE registry_listed(q.phone) OR registry_reassigned_since(q.phone, q.since)`,
    [numbers, since],
  );
  if (rows.length === 0) return NONE;
  const listed = new Set<string>();
  const reassigned = new Set<string>();
  for (const r of rows) {
    if (r.listed) listed.add(r.phone);
    if (r.reassigned && r.since !== null) reassigned.add(reassignedKey(r.phone, new Date(r.since).toISOString()));
  }
  return { listed, reassigned };
}
