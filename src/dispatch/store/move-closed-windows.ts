// Calls of windowed batches whose window closed before they were dialled (pending, or put back in
// line for a retry) move to their next opening; the claim never reads a closed window's pending
// calls, and reads its retries only until this sweep has moved them. Each turn handles a bounded
// chunk per batch, so a window closing on a million calls is worked through over several turns.
// A call whose windows no longer meet at all ends cancelled (no_calling_window). A batch whose
// windows changed is left to its reset (reset-windows.ts).
import type { AppDeps } from '../../deps.ts';
import { runStatement } from '../../db/sql-statement.ts';
import { withSqlTransaction, type SqlTx } from '../../db/sql-transaction.ts';
import {
  effectiveWindows,
  nextOpening,
  NO_WINDOW_DISCONNECT_REASON,
  recipientZonesOf,
  storedWindow,
  type CallingWindow,
} from '../../domain/calling-window.ts';
import { CANCEL_WAITING, cancelWaitingCalls } from '../../services/calls/cancel-waiting-calls.ts';
import { closeFinishedBatches } from '../../services/calls/call-transitions.ts';
import { UNFINISHED_BATCH_STATUSES } from '../../domain/batch-state.ts';
import { ALTERNATE_WINDOW_WAIT } from '../../domain/wait-reason.ts';
import { zonesOfDial } from '../../domain/dial-permission.ts';
import { zoneKey, type NumberZones } from '../../domain/number-zones.ts';
import { numberZoneTable } from '../../services/batches/number-zone-table.ts';
import type { WebhookDeps } from '../../services/webhooks/enqueue-batch-events.ts';

const SWEPT_STATUSES = UNFINISHED_BATCH_STATUSES;
const BATCHES_PER_TURN = 50;
/**
 * Small turns: moving a call rewrites its row and index entries, and the claim shares the tick.
 * At 5,000 a turn took 0.3-1.3 s and the claim fell to ~700 calls/s meanwhile (bench:dispatch
 * scenario 5); the calls waiting to be moved cost the claim nothing, so there is no hurry.
 */
export const CALLS_PER_BATCH_PER_TURN = 1_000;

export interface WindowSweep {
  moved: number;
  /** Ended: their windows no longer open. */
  cancelled: number;
}

export async function moveClosedWindows(deps: Pick<AppDeps, 'db'> & WebhookDeps, now: Date): Promise<WindowSweep> {
  const batches = await runStatement<{ id: string; calling_window: unknown; enforced_window: unknown; windows_version: number }>(
    deps.db,
    `SELECT id, calling_window, enforced_window, windows_version FROM batches
      WHERE (calling_window IS NOT NULL OR enforced_window IS NOT NULL) AND status = ANY($1::text[]) AND queued > 0
        AND window_reset_cursor IS NULL
      LIMIT $2`,
    [SWEPT_STATUSES, BATCHES_PER_TURN],
  );
  const total: WindowSweep = { moved: 0, cancelled: 0 };
  for (const b of batches) {
    const windows = effectiveWindows(storedWindow(b.calling_window), storedWindow(b.enforced_window));
    if (windows.length === 0) continue;
    const r = await sweepBatch(deps, { id: b.id, windowsVersion: b.windows_version }, windows, now);
    total.moved += r.moved;
    total.cancelled += r.cancelled;
  }
  return total;
}

/**
 * A chunk of one batch's calls whose window closed. Both statuses are ranges of
 * calls_batch_id_status_window_closes_at_seq_idx ending at now. Exported for bench/dispatch.ts,
 * which EXPLAINs it.
 */
export const CLOSED_WINDOW_CALLS_SQL = `
SELECT id, timezone, wait_reason, alternate_phone, contact_timezone FROM calls
 WHERE batch_id = $1 AND status IN ('pending', 'queued') AND window_closes_at IS NOT NULL
   AND window_closes_at <= $2::timestamptz AND lease_owner IS NULL
 LIMIT $3`;

interface ClosedCall {
  id: string;
  timezone: string | null;
  wait_reason: string | null;
  alternate_phone: string | null;
  contact_timezone: string | null;
}

/**
 * The zone key a closed call's next opening is computed for: its own, or, for a call waiting to
 * dial its alternate number, the alternate's zones (dial-permission.ts).
 */
function groupKey(table: NumberZones, c: ClosedCall): string {
  if (c.wait_reason !== ALTERNATE_WINDOW_WAIT || c.alternate_phone === null) return c.timezone ?? '';
  return zoneKey(zonesOfDial(table, c.alternate_phone, c.contact_timezone) ?? []);
}

/** The batch as read, whose windows the sweep applies. */
interface SweptBatch {
  id: string;
  windowsVersion: number;
}

/**
 * Each write is made only while the batch's windows are still the ones read: one changed since
 * is the reset's to place (reset-windows.ts).
 */
async function sweepBatch(deps: Pick<AppDeps, 'db'> & WebhookDeps, batch: SweptBatch, windows: CallingWindow[], now: Date): Promise<WindowSweep> {
  const batchId = batch.id;
  const closed = await runStatement<ClosedCall>(deps.db, CLOSED_WINDOW_CALLS_SQL, [batchId, now.toISOString(), CALLS_PER_BATCH_PER_TURN]);
  if (closed.length === 0) return { moved: 0, cancelled: 0 };
  const groups = new Map<string, string[]>();
  const table = numberZoneTable();
  for (const c of closed) {
    const key = groupKey(table, c);
    const ids = groups.get(key) ?? [];
    ids.push(c.id);
    groups.set(key, ids);
  }
  const result: WindowSweep = { moved: 0, cancelled: 0 };
  const never: string[] = [];
  for (const [key, ids] of groups) {
    const opening = nextOpening(windows, recipientZonesOf(windows, key || null), now);
    if (!opening) {
      never.push(...ids);
      continue;
    }
    // Rechecked: a claim or a cancel may have taken a call since it was read.
    const moved = await runStatement<{ n: number }>(
      deps.db,
      `WITH m AS (
         UPDATE calls SET next_attempt_at = $2::timestamptz, window_closes_at = $3::timestamptz,
                wait_reason = CASE WHEN wait_reason = '${ALTERNATE_WINDOW_WAIT}' THEN wait_reason END, updated_at = $4::timestamptz
          WHERE id = ANY($1::text[]) AND status IN ('pending', 'queued') AND window_closes_at <= $4::timestamptz AND lease_owner IS NULL
            AND EXISTS (SELECT 1 FROM batches WHERE id = $5 AND windows_version = $6 AND window_reset_cursor IS NULL)
         RETURNING 1)
       SELECT count(*)::int AS n FROM m`,
      [ids, opening.opensAt.toISOString(), opening.closesAt.toISOString(), now.toISOString(), batchId, batch.windowsVersion],
    );
    result.moved += moved[0]?.n ?? 0;
  }
  if (never.length > 0)
    result.cancelled = await withSqlTransaction(deps.db, (tx) => cancelUnplaceable(tx, deps, batchId, never, now, batch.windowsVersion));
  return result;
}

/**
 * Ends these waiting calls `cancelled` / `no_calling_window` with their batch's counters; returns
 * how many. With `windowsVersion`, only while the batch's windows are still that version and not
 * being reset.
 */
export async function cancelUnplaceable(
  tx: SqlTx,
  webhooks: WebhookDeps,
  batchId: string,
  ids: string[],
  now: Date,
  windowsVersion?: number,
): Promise<number> {
  const n = await cancelWaitingCalls(tx, webhooks, {
    batchId,
    now,
    event: 'no_calling_window',
    disconnectReason: NO_WINDOW_DISCONNECT_REASON,
    statuses: SWEPT_STATUSES,
    callIds: ids,
    windowsVersion,
  });
  if (n === 0) return 0;
  await tx.query(`UPDATE batches SET queued = queued + $2::int, cancelled = cancelled + $3::int, updated_at = $4::timestamptz WHERE id = $1`, [
    batchId,
    (CANCEL_WAITING.queued ?? 0) * n,
    (CANCEL_WAITING.cancelled ?? 0) * n,
    now.toISOString(),
  ]);
  await closeFinishedBatches(tx, [batchId], now);
  return n;
}
