// Use case: contacts who opted out during their call go on the account's do-not-call list. Called
// inside the transaction that records the calls' analysis (services/calls/call-transitions.ts), so
// the result and the listing commit together; one statement for a group's opted-out calls.
import type { SqlTx } from '../../db/sql-transaction.ts';
import { OPT_OUT_REASON, optOutSource } from '../../domain/opt-out.ts';

// Every number of the contact: the person asked not to be called, not the line (issue 33), so
// the primary number, the alternate number and the number the conversation happened on (one of
// the two) are all listed, for every batch of the account. A number listed already keeps its
// entry, first reason and source. Not held to the list's size limit: an opt-out is never dropped,
// and each needs an answered call (at most two numbers each).
const INSERT_SQL = `
INSERT INTO suppressions (account_id, phone_number, reason, source, created_at)
SELECT DISTINCT ON (c.account_id, n.phone_number) c.account_id, n.phone_number, $3, o.source, $4::timestamptz
  FROM unnest($1::text[], $2::text[]) AS o(call_id, source)
  JOIN calls c ON c.id = o.call_id
  CROSS JOIN LATERAL (VALUES (c.phone_number), (c.alternate_phone), (c.dialed_number)) AS n(phone_number)
 WHERE n.phone_number IS NOT NULL
 ORDER BY c.account_id, n.phone_number, o.call_id
ON CONFLICT (account_id, phone_number) DO NOTHING`;

export async function addOptOuts(tx: SqlTx, callIds: readonly string[], now: Date): Promise<void> {
  if (callIds.length === 0) return;
  await tx.query(INSERT_SQL, [callIds, callIds.map(optOutSource), OPT_OUT_REASON, now.toISOString()]);
}
