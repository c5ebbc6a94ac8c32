// Why waiting calls wait (GraphQL Call.retryReason): the history entry that last put each call back
// in line, for any number of calls in one statement, so a page of calls costs one read of their
// history at most (none when no call on it waits).
import type { Database } from '../../db/client.ts';
import { runStatement } from '../../db/sql-statement.ts';
import { retryReason } from '../../domain/call-attempts.ts';

const LAST_RETRY_SQL = `
SELECT DISTINCT ON (call_id) call_id AS "callId", detail
  FROM call_events
 WHERE call_id = ANY($1::text[]) AND account_id = $2 AND detail->>'event' = 'retry_scheduled'
 ORDER BY call_id, id DESC`;

/** The account's calls' retry reasons in the order of `ids`; null for a call never put back in line. */
export async function retryReasonsByCallIds(db: Database, accountId: string, ids: readonly string[]): Promise<(string | null)[]> {
  const rows = await runStatement<{ callId: string; detail: unknown }>(db, LAST_RETRY_SQL, [[...new Set(ids)], accountId]);
  const byId = new Map(rows.map((r) => [r.callId, retryReason(r.detail)]));
  return ids.map((id) => byId.get(id) ?? null);
}
