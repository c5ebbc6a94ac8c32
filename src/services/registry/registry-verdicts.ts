// What the national do-not-call registry and the reassigned-number results say about a create's
// numbers: one statement per chunk of contacts, a primary-key probe and a bit test per number
// (the rules of the SQL functions of migration consent_and_registry, which the claim uses).
import type { SqlTx } from '../../db/sql-transaction.ts';
import { reassignedKey, registryQuestions, type RegistryVerdicts } from '../../domain/registry.ts';
import type { NormalizedContact } from '../../domain/contacts.ts';

const NONE: RegistryVerdicts = { listed: new Set(), reassigned: new Set() };

export async function registryVerdicts(tx: SqlTx, accepted: readonly NormalizedContact[]): Promise<RegistryVerdicts> {
  const { numbers, since } = registryQuestions(accepted);
  if (numbers.length === 0) return NONE;
  // Joins rather than the per-number SQL functions (which the claim uses): the planner sees the
  // probes, ~10x cheaper a number at 10,000 (bench/registry.ts). Only +1 numbers of the US shape
  // are asked (registryQuestions), so the casts cannot fail.
  const rows = await tx.query<{ phone: string; since: Date | string | null; listed: boolean; reassigned: boolean }>(
    `SELECT q.phone, q.since,
            COALESCE(get_bit(b.bits, substr(q.phone, 9, 4)::int) = 1, false) AS listed,
            COALESCE(r.reassigned_on >= (q.since AT TIME ZONE 'UTC')::date, false) AS reassigned
       FROM unnest($1::text[], $2::timestamptz[]) AS q(phone, since)
       LEFT JOIN dnc_registry_blocks b ON b.prefix = substr(q.phone, 3, 6)::int
       LEFT JOIN reassigned_numbers r ON q.since IS NOT NULL AND r.number = substr(q.phone, 3)::bigint
      WHERE get_bit(b.bits, substr(q.phone, 9, 4)::int) = 1 OR r.reassigned_on >= (q.since AT TIME ZONE 'UTC')::date`,
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
