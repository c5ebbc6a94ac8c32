// Batches that will dial no more while calls of theirs still wait: past their `expires_at` (those
// calls end cancelled with disconnect_reason `expired`), or cancelled while a retry was being put
// back in line (a worker's retry write racing the cancel). Each turn ends a bounded chunk per
// batch, in its own transaction with the batch's counters, and closes a batch left with nothing.
import type { AppDeps } from '../../deps.ts';
import { runStatement } from '../../db/sql-statement.ts';
import { withSqlTransaction } from '../../db/sql-transaction.ts';
import { CANCEL_WAITING, cancelWaitingCalls } from '../../services/calls/cancel-waiting-calls.ts';
import { closeFinishedBatches } from '../../services/calls/call-transitions.ts';
import { EXPIRED_DISCONNECT_REASON } from '../../domain/retry-policy.ts';
import type { WebhookDeps } from '../../services/webhooks/enqueue-batch-events.ts';

/**
 * Statuses in which an expired batch's waiting calls are ended. `paused` includes a manual batch
 * never started: its deadline holds all the same (docs/campaigns.md#expiry), so it completes
 * instead of sitting paused with calls counted as queued that can never be dialled. A scheduled
 * batch (`pending`) is started at its time, then expires here.
 */
const EXPIRING_STATUSES = ['queued', 'dispatching', 'running', 'paused'];
const BATCHES_PER_TURN = 20;
const CALLS_PER_BATCH_PER_TURN = 5_000;

export interface EndedUndialled {
  batchId: string;
  reason: 'expired' | 'batch_cancelled';
  calls: number;
}

export async function endUndialledCalls(deps: Pick<AppDeps, 'db'> & WebhookDeps, now: Date): Promise<EndedUndialled[]> {
  const due = await runStatement<{ id: string; cancelled: boolean }>(
    deps.db,
    `(SELECT id, false AS cancelled FROM batches
       WHERE expires_at <= $1::timestamptz AND queued > 0 AND status = ANY($2::text[]) LIMIT $3)
     UNION ALL
     (SELECT id, true FROM batches WHERE status = 'cancelled' AND completed_at IS NULL AND queued > 0 LIMIT $3)`,
    [now.toISOString(), EXPIRING_STATUSES, BATCHES_PER_TURN],
  );
  const out: EndedUndialled[] = [];
  for (const b of due) {
    const reason = b.cancelled ? 'batch_cancelled' : 'expired';
    const calls = await withSqlTransaction(deps.db, async (tx) => {
      const n = await cancelWaitingCalls(tx, deps, {
        batchId: b.id,
        now,
        event: reason,
        disconnectReason: b.cancelled ? null : EXPIRED_DISCONNECT_REASON,
        statuses: b.cancelled ? ['cancelled'] : EXPIRING_STATUSES,
        limit: CALLS_PER_BATCH_PER_TURN,
      });
      if (n === 0) return 0;
      await tx.query(`UPDATE batches SET queued = queued + $2::int, cancelled = cancelled + $3::int, updated_at = $4::timestamptz WHERE id = $1`, [
        b.id,
        (CANCEL_WAITING.queued ?? 0) * n,
        (CANCEL_WAITING.cancelled ?? 0) * n,
        now.toISOString(),
      ]);
      await closeFinishedBatches(tx, [b.id], now);
      return n;
    });
    if (calls > 0) out.push({ batchId: b.id, reason, calls });
  }
  return out;
}
