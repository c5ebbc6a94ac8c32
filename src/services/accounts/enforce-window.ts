// An account's enforced calling window reaches the batches that are already there: each unfinished
// batch takes the new window in the transaction that sets it, and stops dialling until the
// worker has re-placed its waiting calls under it (dispatch/store/reset-windows.ts). Without this a
// batch created before a narrowing would go on calling at hours the operator has just ruled out.
import type { Database } from '../../db/client.ts';
import { withSqlTransaction } from '../../db/sql-transaction.ts';
import { UNFINISHED_BATCH_STATUSES } from '../../domain/batch-state.ts';
import type { CallingWindow } from '../../domain/calling-window.ts';


/**
 * Sets the account's enforced window (null clears it) and hands it to its unfinished batches.
 * A batch's first reset records whether its calls' zone keys are the recipients' (created under a
 * `recipient` window: its windows have not changed before), so a later reset never takes a
 * window's fixed zone for a recipient's. Returns how many batches took it.
 */
export async function setEnforcedWindow(db: Database, accountId: string, window: CallingWindow | null, now: Date): Promise<number> {
  const json = window === null ? null : JSON.stringify(window);
  return withSqlTransaction(db, async (tx) => {
    await tx.query(`UPDATE accounts SET enforced_calling_window = $2::jsonb WHERE id = $1`, [accountId, json]);
    const rows = await tx.query<{ id: string }>(
      `UPDATE batches SET enforced_window = $2::jsonb, windows_version = windows_version + 1, window_reset_cursor = 0,
              recipient_keys = COALESCE(recipient_keys, COALESCE(calling_window ->> 'timezone' = 'recipient', false)
                                                         OR COALESCE(enforced_window ->> 'timezone' = 'recipient', false)),
              updated_at = $4::timestamptz
        WHERE account_id = $1 AND status = ANY($3::text[]) AND enforced_window IS DISTINCT FROM $2::jsonb
       RETURNING id`,
      [accountId, json, UNFINISHED_BATCH_STATUSES, now.toISOString()],
    );
    return rows.length;
  });
}
