// Use case: contacts who opted out during their call go on the account's do-not-call list. Called
// inside the transaction that records the calls' analysis (services/calls/call-transitions.ts), so
// the result and the listing commit together; one statement for a group's opted-out calls.
import type { SqlTx } from '../../db/sql-transaction.ts';
import { OPT_OUT_REASON, optOutSource } from '../../domain/opt-out.ts';

// The number the conversation happened on: the alternate number when that was the one answered. A
// number listed already keeps its entry, first reason and source. Not held to the list's size
// limit: an opt-out is never dropped, and each needs an answered call.
const INSERT_SQL = `
INSERT INTO suppressions (account_id, phone_number, reason, source, created_at)
SELECT c.account_id, COALESCE(c.dialed_number, c.phone_number), $3, o.source, $4::timestamptz
  FROM unnest($1::text[], $2::text[]) AS o(call_id, source)
  JOIN calls c ON c.id = o.call_id
ON CONFLICT (account_id, phone_number) DO NOTHING`;

export async function addOptOuts(tx: SqlTx, callIds: readonly string[], now: Date): Promise<void> {
  if (callIds.length === 0) return;
  await tx.query(INSERT_SQL, [callIds, callIds.map(optOutSource), OPT_OUT_REASON, now.toISOString()]);
}
