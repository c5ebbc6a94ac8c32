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
  // A probe per number by scalar subqueries (each an index scan of a primary key), rather than
  // joins: with an unnest the planner cannot count, a join chose a hash of the whole registry at
  // 10^8 numbers (bench/registry.ts). Only +1 numbers of the US shape are asked
  // (registryQuestions), so the casts cannot fail.
  const rows = await tx.query<{ phone: string; since: Date | string | null; listed: boolean | null; reassigned: boolean | null }>(
    `SELECT * FROM (
       SELECT q.phone, q.since,
              (SELECT get_bit(b.bits, substr(q.phone, 9, 4)::int) = 1 FROM dnc_registry_blocks b
                WHERE b.prefix = substr(q.phone, 3, 6)::int) AS listed,
              CASE WHEN q.since IS NOT NULL THEN
                (SELECT r.reassigned_on >= (q.since AT TIME ZONE 'UTC')::date FROM reassigned_numbers r
                  WHERE r.number = substr(q.phone, 3)::bigint) END AS reassigned
         FROM unnest($1::text[], $2::timestamptz[]) AS q(phone, since)
       OFFSET 0) v
      WHERE v.listed OR v.reassigned`,
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
