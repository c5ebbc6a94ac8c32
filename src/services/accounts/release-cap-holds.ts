// Use case: the account's frequency cap changed (cleared, raised, shortened, or tightened): the
// calls it holds back are due again at once, and the next claim judges each under the cap now in
// force (dialled, or held again until the new cap lets it through). Without this a call held under
// a cap of 1 a week waited the rest of the week after the cap was cleared.
import type { Database } from '../../db/client.ts';
import { runStatement } from '../../db/sql-statement.ts';
import { UNFINISHED_BATCH_STATUSES } from '../../domain/batch-state.ts';
import { FREQUENCY_CAP_WAIT_REASON } from '../../domain/frequency-cap.ts';

/**
 * Held calls of the account's unfinished batches become due now; returns how many. They are found
 * through calls_frequency_cap_wait_idx (held calls only, migration frequency_cap_release). A call
 * whose window has closed meanwhile is moved to its next opening by the window sweep, as any.
 */
export async function releaseCapHolds(db: Database, accountId: string, now: Date): Promise<number> {
  const rows = await runStatement<{ n: number }>(
    db,
    `WITH r AS (
       UPDATE calls c SET next_attempt_at = $3::timestamptz, wait_reason = NULL, updated_at = $3::timestamptz
        WHERE c.batch_id IN (SELECT id FROM batches WHERE account_id = $1 AND status = ANY($2::text[]))
          AND c.wait_reason = $4 AND c.status IN ('pending', 'queued') AND c.lease_owner IS NULL
       RETURNING 1)
     SELECT count(*)::int AS n FROM r`,
    [accountId, UNFINISHED_BATCH_STATUSES, now.toISOString(), FREQUENCY_CAP_WAIT_REASON],
  );
  return rows[0]?.n ?? 0;
}
