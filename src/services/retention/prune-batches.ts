// Retention of batches (BATCH_RETENTION_DAYS): a batch that is finished (completed or cancelled)
// and whose last call ended (batches.completed_at, written when its last call ends) more than the
// retention ago is deleted with everything it owns: its calls, with their history (call_events)
// and recordings by ON DELETE CASCADE, and its webhook deliveries. Afterwards it answers like a
// batch that never existed. The do-not-call list is the account's and is never touched.
//
// Never one long transaction: a batch's deliveries and calls go a chunk per statement (each call
// takes its ~3 history rows and its recording along), found by keyset over their batch's index,
// and the batch row last, so nothing holds many locks for long; every statement is paced
// (chunks.ts). A batch whose analysis is still
// outstanding or that still owes its receiver a delivery (pending) is left for a later run.
// Several workers may prune at once: chunks are taken with SKIP LOCKED and the batch row goes
// only once it has no call left. While a batch is being deleted (seconds for 100k calls) a reader
// may see some of its calls gone before the batch itself.
import type { AppDeps } from '../../deps.ts';
import { runStatement } from '../../db/sql-statement.ts';
import { inChunks, paced } from './chunks.ts';
import { ANALYSIS_OUTSTANDING, FINISHED_BATCH_STATUSES, retentionCutoff } from '../../domain/retention.ts';

/**
 * Calls deleted per statement: each takes ~3.4 history rows and, if answered, its recording along.
 * Fewer on PGlite, whose statements run in this process's thread and hold up its API meanwhile.
 */
export const CALL_CHUNK = { postgres: 500, pglite: 100 } as const;
/** Webhook deliveries deleted per statement. */
export const DELIVERY_CHUNK = 2_000;
/** Batches looked at per candidate read. */
export const CANDIDATES = 100;

// Literal lists (constants from the domain, not input), so the planner can match the partial
// index batches_finished_idx (completed_at, id) WHERE status IN ('completed', 'cancelled').
const list = (values: readonly string[]) => values.map((v) => `'${v}'`).join(', ');
const FINISHED = list(FINISHED_BATCH_STATUSES);

/** Exported for bench/retention.ts, which EXPLAINs it. */
export const CANDIDATES_SQL = `
SELECT b.id, b.completed_at FROM batches b
 WHERE b.status IN (${FINISHED}) AND b.completed_at < $1::timestamptz
   AND (b.completed_at, b.id) > ($2::timestamptz, $3::text)
   AND NOT EXISTS (SELECT 1 FROM calls c WHERE c.batch_id = b.id AND c.transcript_status IN (${list(ANALYSIS_OUTSTANDING)}))
 ORDER BY b.completed_at, b.id
 LIMIT $4`;

const PENDING_DELIVERY_SQL = `SELECT EXISTS (SELECT 1 FROM webhook_deliveries WHERE batch_id = $1 AND status = 'pending') AS pending`;

// Rows are picked first and deleted by primary key (= ANY(ARRAY(...))): a join with the picked
// rows may be planned as a hash join over the whole table.
const DELIVERIES_SQL = `
WITH gone AS (
  DELETE FROM webhook_deliveries WHERE id = ANY(ARRAY(
    SELECT id FROM webhook_deliveries
     WHERE batch_id = $1 AND status <> 'pending' AND (created_at, id) > ($2::timestamptz, $3::text)
     ORDER BY created_at, id LIMIT $4
       FOR UPDATE SKIP LOCKED))
  RETURNING created_at, id)
SELECT count(*)::int AS n, (array_agg(created_at ORDER BY created_at DESC, id DESC))[1] AS last_at,
       (array_agg(id ORDER BY created_at DESC, id DESC))[1] AS last_id
  FROM gone`;

export const CALLS_SQL = `
WITH gone AS (
  DELETE FROM calls WHERE id = ANY(ARRAY(
    SELECT id FROM calls WHERE batch_id = $1 AND seq > $2 ORDER BY seq LIMIT $3 FOR UPDATE SKIP LOCKED))
  RETURNING seq)
SELECT count(*)::int AS n, COALESCE(max(seq), 0)::int AS last FROM gone`;

// The guard repeats the candidate's conditions: a call skipped as locked, or a delivery queued
// (redelivered) meanwhile, keeps the batch for the next run.
const BATCH_SQL = `
DELETE FROM batches b
 WHERE b.id = $1 AND b.status IN (${FINISHED}) AND b.completed_at < $2::timestamptz
   AND NOT EXISTS (SELECT 1 FROM calls c WHERE c.batch_id = b.id)
   AND NOT EXISTS (SELECT 1 FROM webhook_deliveries w WHERE w.batch_id = b.id AND w.status = 'pending')
RETURNING 1`;

export interface PrunedBatches {
  batches: number;
  calls: number;
  deliveries: number;
  /** Old enough but kept for now: a delivery still pending. */
  waiting: number;
}

type Deps = Pick<AppDeps, 'config' | 'db' | 'clock'>;
interface Chunks {
  calls: number;
  deliveries: number;
}

/**
 * Deletes every finished batch whose last call ended before now − BATCH_RETENTION_DAYS, with its
 * calls, history, recordings and deliveries. Nothing with a retention of 0 (keep forever).
 */
export async function pruneFinishedBatches(deps: Deps, chunks: Partial<Chunks> = {}): Promise<PrunedBatches> {
  const out: PrunedBatches = { batches: 0, calls: 0, deliveries: 0, waiting: 0 };
  const cutoff = retentionCutoff(deps.clock.now(), deps.config.BATCH_RETENTION_DAYS);
  if (!cutoff) return out;
  const size: Chunks = { calls: chunks.calls ?? CALL_CHUNK[deps.db.kind], deliveries: chunks.deliveries ?? DELIVERY_CHUNK };
  let after = { at: '-infinity', id: '' };
  for (;;) {
    const candidates = await paced(() =>
      runStatement<{ id: string; completed_at: Date }>(deps.db, CANDIDATES_SQL, [cutoff.toISOString(), after.at, after.id, CANDIDATES]),
    );
    for (const b of candidates) {
      const r = await deleteBatch(deps, b.id, cutoff, size);
      out.calls += r.calls;
      out.deliveries += r.deliveries;
      if (r.deleted) out.batches += 1;
      else if (r.waiting) out.waiting += 1;
    }
    if (candidates.length < CANDIDATES) return out;
    const last = candidates[candidates.length - 1]!;
    after = { at: new Date(last.completed_at).toISOString(), id: last.id };
  }
}

async function deleteBatch(deps: Deps, batchId: string, cutoff: Date, size: Chunks) {
  const [{ pending } = { pending: false }] = await paced(() => runStatement<{ pending: boolean }>(deps.db, PENDING_DELIVERY_SQL, [batchId]));
  if (pending) return { deleted: false, waiting: true, calls: 0, deliveries: 0 };
  let deliveries = 0;
  let after: { at: string; id: string } = { at: '-infinity', id: '' };
  await inChunks(async () => {
    const [r] = await runStatement<{ n: number; last_at: Date | null; last_id: string | null }>(deps.db, DELIVERIES_SQL, [
      batchId,
      after.at,
      after.id,
      size.deliveries,
    ]);
    deliveries += r?.n ?? 0;
    if (!r || r.n < size.deliveries) return false;
    after = { at: new Date(r.last_at!).toISOString(), id: r.last_id! };
    return true;
  });
  let calls = 0;
  let seq = 0;
  await inChunks(async () => {
    const [r] = await runStatement<{ n: number; last: number }>(deps.db, CALLS_SQL, [batchId, seq, size.calls]);
    calls += r?.n ?? 0;
    if (!r || r.n < size.calls) return false;
    seq = r.last;
    return true;
  });
  const deleted = (await paced(() => runStatement(deps.db, BATCH_SQL, [batchId, cutoff.toISOString()]))).length > 0;
  return { deleted, waiting: false, calls, deliveries };
}
