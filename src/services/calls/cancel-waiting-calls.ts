// Calls of a batch that will dial no more, ended where they wait (pending, or queued for a retry):
// an operator's cancel, and the expiry of a batch's `expires_at`. Each becomes `cancelled` with one
// history entry; the caller moves the batch counters (queued -> cancelled) with its own batch write.
// A call dialled before (a retry waiting) gets its one terminal webhook, `call.cancelled`, in the
// same transaction: it had `call.retry_scheduled` and must not be left without an end.
// Like every writer, this locks calls before their batch row (see claim-calls.ts); a call a worker
// is claiming right now is locked, so this waits for that claim, after which it no longer matches.
import { counterDelta } from '../../domain/call-state.ts';
import type { SqlTx } from '../../db/sql-transaction.ts';
import type { WebhookDeps } from '../webhooks/enqueue-batch-events.ts';
import { enqueueCallWebhooks } from '../webhooks/outbox.ts';

export const CANCEL_WAITING = counterDelta('queued', 'cancelled');

export interface CancelWaiting {
  batchId: string;
  now: Date;
  /** The history entry's `event`. */
  event: 'batch_cancelled' | 'expired' | 'no_calling_window';
  disconnectReason: string | null;
  /** Only while the batch is the account's and in one of these statuses. */
  accountId?: string;
  statuses: readonly string[];
  /** At most this many calls (a sweep works through a large batch over several turns). */
  limit?: number;
  /** Only these calls. */
  callIds?: readonly string[];
  /** Only while the batch's windows are this version and not being reset (the window sweep). */
  windowsVersion?: number;
}

/** Returns how many calls it cancelled. */
export async function cancelWaitingCalls(tx: SqlTx, webhooks: WebhookDeps, c: CancelWaiting): Promise<number> {
  const rows = await tx.query<{ n: number; dialled: string[] | null }>(
    `WITH sel AS (
       SELECT c.id, c.status FROM calls c
         JOIN batches b ON b.id = c.batch_id AND ($3::text IS NULL OR b.account_id = $3) AND b.status = ANY($4::text[])
                       AND ($9::int IS NULL OR (b.windows_version = $9 AND b.window_reset_cursor IS NULL))
        WHERE c.batch_id = $1 AND c.status IN ('pending', 'queued') AND ($8::text[] IS NULL OR c.id = ANY($8::text[]))
        LIMIT $7
        FOR UPDATE OF c
     ), upd AS (
       UPDATE calls c SET status = 'cancelled', completed_at = $2::timestamptz, disconnect_reason = COALESCE($6, c.disconnect_reason),
              next_attempt_at = NULL, window_closes_at = NULL, wait_reason = NULL, lease_owner = NULL, lease_expires_at = NULL, updated_at = $2::timestamptz
         FROM sel WHERE c.id = sel.id
       RETURNING c.id, c.account_id, c.attempts, sel.status AS old_status
     ), ev AS (
       INSERT INTO call_events (account_id, call_id, from_status, to_status, detail, at)
       SELECT account_id, id, old_status, 'cancelled', jsonb_build_object('event', $5::text), $2::timestamptz FROM upd
       RETURNING 1
     )
     SELECT count(*)::int AS n, array_agg(id) FILTER (WHERE attempts > 0) AS dialled FROM upd`,
    [
      c.batchId,
      c.now.toISOString(),
      c.accountId ?? null,
      c.statuses,
      c.event,
      c.disconnectReason,
      c.limit ?? null,
      c.callIds ?? null,
      c.windowsVersion ?? null,
    ],
  );
  const dialled = rows[0]?.dialled ?? [];
  await enqueueCallWebhooks(
    tx,
    webhooks,
    dialled.map((callId) => ({ type: 'call.cancelled' as const, callId })),
    c.now,
  );
  return rows[0]?.n ?? 0;
}
