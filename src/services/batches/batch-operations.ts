// Use case: an operator starts, pauses, resumes or cancels a batch (both API surfaces).
//
// Each operation is a conditional update (`status` must be one the operation accepts, per
// applyBatchOperation), so an operation racing the worker either applies to the status it checked
// or fails with a conflict. Cancel moves every call waiting to be dialled (never dialled, or
// waiting for a retry) to `cancelled` in the same transaction as the batch and its counters; calls
// already dialled belong to their worker, which sees the cancelled batch on its next tick and hangs
// them up (they end with hangup_by `system`).
import type { AppDeps } from '../../deps.ts';
import { applyBatchOperation, BATCH_STATUSES, isBatchStatus, type BatchOperation, type BatchStatus } from '../../domain/batch-state.ts';
import { AppError, batchNotFound } from '../../errors.ts';
import type { Account, Batch } from '../../generated/prisma/client.ts';
import { closeFinishedBatches } from '../calls/call-transitions.ts';
import { CANCEL_WAITING, cancelWaitingCalls } from '../calls/cancel-waiting-calls.ts';
import { enqueueBatchEvents } from '../webhooks/enqueue-batch-events.ts';
import { withSqlTransaction, type SqlTx } from '../../db/sql-transaction.ts';

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
      const waiting = { batchId, now, event: 'batch_cancelled', disconnectReason: null, accountId: account.id, statuses: from } as const;
      cancelledCalls = await cancelWaitingCalls(tx, deps, waiting);
    }
    const updated = await tx.query<{ id: string }>(
      `UPDATE batches SET status = $3, queued = queued + $4::int, cancelled = cancelled + $5::int, updated_at = $6::timestamptz
        WHERE id = $1 AND account_id = $2 AND status = ANY($7::text[])
        RETURNING id`,
      [batchId, account.id, to, (CANCEL_WAITING.queued ?? 0) * cancelledCalls, (CANCEL_WAITING.cancelled ?? 0) * cancelledCalls, nowIso, from],
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
