// Use case: an operator starts, pauses, resumes or cancels a batch (both API surfaces).
//
// Each operation is a conditional update (`status` must be one the operation accepts, per
// applyBatchOperation), so an operation racing the worker either applies to the status it checked
// or fails with a conflict. Cancel moves every not-yet-dialled call to `cancelled` in the same
// transaction as the batch and its counters; calls already dialled belong to their worker, which
// sees the cancelled batch on its next tick and hangs them up (they end with hangup_by `system`).
// Like every writer, cancel locks calls before their batch row (see claim-calls.ts).
import type { AppDeps } from '../../deps.ts';
import { applyBatchOperation, BATCH_STATUSES, isBatchStatus, type BatchOperation, type BatchStatus } from '../../domain/batch-state.ts';
import { counterDelta } from '../../domain/call-state.ts';
import { AppError, batchNotFound } from '../../errors.ts';
import type { Account, Batch } from '../../generated/prisma/client.ts';
import { closeFinishedBatches } from '../calls/call-transitions.ts';
import { enqueueBatchEvents } from '../webhooks/enqueue-batch-events.ts';
import { withSqlTransaction, type SqlTx } from '../../db/sql-transaction.ts';

const CANCEL = counterDelta('queued', 'cancelled');

/** Statuses an operation accepts, and the one it leads to (from the domain rule). */
function transition(op: BatchOperation): { from: BatchStatus[]; to: BatchStatus } {
  const from = BATCH_STATUSES.filter((s) => applyBatchOperation(s, op).ok);
  const r = applyBatchOperation(from[0], op);
  if (!r.ok) throw new Error(`no status accepts ${op}`);
  return { from, to: r.status };
}

/** Why a conditional update did not apply: the batch is not the account's, or its status forbids it. */
async function refusal(tx: SqlTx, accountId: string, batchId: string, op: BatchOperation): Promise<AppError> {
  const rows = await tx.query<{ status: string }>('SELECT status FROM batches WHERE id = $1 AND account_id = $2', [batchId, accountId]);
  if (rows.length === 0) return batchNotFound();
  const current = rows[0].status;
  const r = isBatchStatus(current) ? applyBatchOperation(current, op) : null;
  return new AppError('CONFLICT', r && !r.ok ? r.message : `Cannot ${op} a batch that is ${current}`);
}

export async function operateBatch(deps: AppDeps, account: Account, batchId: string, op: BatchOperation): Promise<Batch> {
  const now = deps.clock.now();
  const nowIso = now.toISOString();
  const { from, to } = transition(op);
  await withSqlTransaction(deps.db, async (tx) => {
    let cancelledCalls = 0;
    if (op === 'cancel') {
      // Not yet dialled = pending/queued. A call a worker is claiming right now is locked: this
      // waits for that claim, after which the call is ringing and no longer matches.
      const moved = await tx.query<{ n: number }>(
        `WITH sel AS (
           SELECT c.id, c.status FROM calls c
             JOIN batches b ON b.id = c.batch_id AND b.account_id = $3 AND b.status = ANY($4::text[])
            WHERE c.batch_id = $1 AND c.status IN ('pending', 'queued')
            FOR UPDATE OF c
         ), upd AS (
           UPDATE calls c SET status = 'cancelled', completed_at = $2::timestamptz, lease_owner = NULL,
                  lease_expires_at = NULL, updated_at = $2::timestamptz
             FROM sel WHERE c.id = sel.id
           RETURNING c.id, c.account_id, sel.status AS old_status
         ), ev AS (
           INSERT INTO call_events (account_id, call_id, from_status, to_status, detail, at)
           SELECT account_id, id, old_status, 'cancelled', '{"event":"batch_cancelled"}'::jsonb, $2::timestamptz FROM upd
           RETURNING 1
         )
         SELECT count(*)::int AS n FROM upd`,
        [batchId, nowIso, account.id, from],
      );
      cancelledCalls = moved[0]?.n ?? 0;
    }
    const updated = await tx.query<{ id: string }>(
      `UPDATE batches SET status = $3, queued = queued + $4::int, cancelled = cancelled + $5::int, updated_at = $6::timestamptz
        WHERE id = $1 AND account_id = $2 AND status = ANY($7::text[])
        RETURNING id`,
      [batchId, account.id, to, (CANCEL.queued ?? 0) * cancelledCalls, (CANCEL.cancelled ?? 0) * cancelledCalls, nowIso, from],
    );
    // Not found, or its status changed: the transaction (and any call it cancelled) rolls back.
    if (updated.length === 0) throw await refusal(tx, account.id, batchId, op);
    if (op === 'cancel') {
      // Nothing in flight: a cancelled batch is finished right away.
      await closeFinishedBatches(tx, [batchId], now);
      await enqueueBatchEvents(tx, 'batch.cancelled', [batchId], now);
    }
  });
  deps.logger.info({ batchId, accountId: account.id, operation: op, status: to }, 'batch operation');
  const batch = await deps.db.prisma.batch.findFirst({ where: { id: batchId, accountId: account.id } });
  if (!batch) throw batchNotFound();
  return batch;
}
