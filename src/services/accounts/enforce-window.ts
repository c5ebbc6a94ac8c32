// An account's enforced calling window reaches the batches that are already there: each unfinished
// batch takes the new window in the transaction that sets it, and stops dialling until the
// worker has re-placed its waiting calls under it (dispatch/store/reset-windows.ts). Without this a
// batch created before a narrowing would go on calling at hours the operator has just ruled out.
import type { Database } from '../../db/client.ts';
import { withSqlTransaction, type SqlTx } from '../../db/sql-transaction.ts';
import { UNFINISHED_BATCH_STATUSES } from '../../domain/batch-state.ts';
import type { CallingWindow } from '../../domain/calling-window.ts';

/**
 * A batch takes a new enforced window: the workers' version moves, its reset starts. Its
 * first reset records whether its calls' zone keys are the recipients' (the windows it was created
 * under, read before this SET, used `recipient`), so a later reset never takes a window's fixed
 * zone for a recipient's.
 */
const takeEnforcedWindow = (window: string) => `enforced_window = ${window}, windows_version = windows_version + 1, window_reset_cursor = 0,
  recipient_keys = COALESCE(recipient_keys, COALESCE(calling_window ->> 'timezone' = 'recipient', false)
                                            OR COALESCE(enforced_window ->> 'timezone' = 'recipient', false))`;

/** Sets the account's enforced window (null clears it) and hands it to its unfinished batches; returns how many took it. */
export async function setEnforcedWindow(db: Database, accountId: string, window: CallingWindow | null, now: Date): Promise<number> {
  const json = window === null ? null : JSON.stringify(window);
  return withSqlTransaction(db, async (tx) => {
    await tx.query(`UPDATE accounts SET enforced_calling_window = $2::jsonb WHERE id = $1`, [accountId, json]);
    const rows = await tx.query<{ id: string }>(
      // Batch rows locked in id order, as every writer of several batches locks them.
      `WITH t AS (
         SELECT id FROM batches WHERE account_id = $1 AND status = ANY($3::text[]) AND enforced_window IS DISTINCT FROM $2::jsonb
          ORDER BY id FOR NO KEY UPDATE)
       UPDATE batches b SET ${takeEnforcedWindow('$2::jsonb')}, updated_at = $4::timestamptz
         FROM t WHERE b.id = t.id
       RETURNING b.id`,
      [accountId, json, UNFINISHED_BATCH_STATUSES, now.toISOString()],
    );
    return rows.length;
  });
}

/**
 * The last statement of a batch's create: the account's enforced window may have changed since the
 * request read it, before the batch was there for the change to reach. Read under a share lock
 * (a change in progress is waited for; a later one waits for this commit and reaches the batch),
 * it is taken now if it differs. Returns whether it did.
 */
export async function catchUpEnforcedWindow(tx: SqlTx, batchId: string, accountId: string, now: Date): Promise<boolean> {
  const rows = await tx.query(
    `UPDATE batches b SET ${takeEnforcedWindow('a.w')}, updated_at = $3::timestamptz
       FROM (SELECT enforced_calling_window AS w FROM accounts WHERE id = $2 FOR SHARE) a
      WHERE b.id = $1 AND b.enforced_window IS DISTINCT FROM a.w
     RETURNING 1`,
    [batchId, accountId, now.toISOString()],
  );
  return rows.length > 0;
}
