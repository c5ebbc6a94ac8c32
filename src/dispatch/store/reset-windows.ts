// The waiting calls of a batch whose enforced window changed (services/accounts/enforce-window.ts)
// are re-placed under its new windows, in submission order, a chunk per turn. The claim takes none
// of the batch's calls until this is done, and it starts only once the batch has no call in
// flight: a call placed under the old window records its retry under that window, so it must have
// ended before its turn comes. A call its new windows never open for ends cancelled
// (no_calling_window), as in the window sweep; a paused or not yet started batch is reset only once
// it dials again, so its calls keep waiting under whatever window is in force by then.
import type { AppDeps } from '../../deps.ts';
import { runStatement } from '../../db/sql-statement.ts';
import { isDeadlock, withSqlTransaction, type SqlTx } from '../../db/sql-transaction.ts';
import { openingsOf, replaceWaitingCall, type WaitingCall } from '../../domain/call-windows.ts';
import { effectiveWindows, storedWindow } from '../../domain/calling-window.ts';
import { zonesForNumber } from '../../domain/number-zones.ts';
import { UNFINISHED_BATCH_STATUSES } from '../../domain/batch-state.ts';
import { numberZoneTable } from '../../services/batches/number-zone-table.ts';
import type { WebhookDeps } from '../../services/webhooks/enqueue-batch-events.ts';
import { cancelUnplaceable } from './move-closed-windows.ts';

const BATCHES_PER_TURN = 20;
/** Statuses whose reset waits for the batch to start or resume (the claim takes none of their calls meanwhile). */
const NOT_DIALLING = ['pending', 'paused'];
/**
 * Calls re-placed per turn over all batches (the claim shares the tick); the batch re-placed
 * longest ago goes first, so batches reset at once take turns.
 */
export const RESET_CALLS_PER_TURN = 2_000;

export interface WindowReset {
  replaced: number;
  cancelled: number;
  /** Batches whose reset ended this turn: they dial again. */
  finished: string[];
}

interface ResetBatch {
  status: string;
  calling_window: unknown;
  enforced_window: unknown;
  windows_version: number;
  cursor: number;
  recipient_keys: boolean | null;
}

interface WaitingRow {
  id: string;
  seq: number;
  status: 'pending' | 'queued';
  phone_number: string;
  timezone: string | null;
  next_attempt_at: Date | null;
  wait_reason: string | null;
  contact_timezone: string | null;
}

/** Both statuses' ranges of (batch_id, status, seq) after the cursor, the first $3 in seq order. */
const WAITING_CHUNK_SQL = `
SELECT * FROM (
  (SELECT id, seq, status, phone_number, timezone, next_attempt_at, wait_reason, contact_timezone FROM calls
    WHERE batch_id = $1 AND status = 'pending' AND seq > $2 ORDER BY seq LIMIT $3)
  UNION ALL
  (SELECT id, seq, status, phone_number, timezone, next_attempt_at, wait_reason, contact_timezone FROM calls
    WHERE batch_id = $1 AND status = 'queued' AND seq > $2 ORDER BY seq LIMIT $3)
) w ORDER BY seq LIMIT $3`;

/** A concurrent change of the batch (a newer window, a call in flight): the turn is undone. */
class TurnSuperseded extends Error {}

export async function resetWindows(deps: Pick<AppDeps, 'db'> & WebhookDeps, now: Date, callsPerTurn = RESET_CALLS_PER_TURN): Promise<WindowReset> {
  const batches = await runStatement<{ id: string }>(
    deps.db,
    // A batch that is not dialling (paused, or not yet started) is reset when it starts or resumes:
    // reset now, a call its windows never open for would end cancelled, for good, while an
    // operator may yet change the window back.
    `SELECT id FROM batches WHERE window_reset_cursor IS NOT NULL AND in_progress = 0 AND status <> ALL($2::text[])
      ORDER BY updated_at, id LIMIT $1`,
    [BATCHES_PER_TURN, NOT_DIALLING],
  );
  const total: WindowReset = { replaced: 0, cancelled: 0, finished: [] };
  for (const { id } of batches) {
    const budget = callsPerTurn - total.replaced - total.cancelled;
    if (budget <= 0) break;
    try {
      const r = await withSqlTransaction(deps.db, (tx) => resetTurn(tx, deps, id, budget, now));
      total.replaced += r.replaced;
      total.cancelled += r.cancelled;
      total.finished.push(...r.finished);
    } catch (e) {
      // A cancel or expiry locking the same calls in another order: this batch's turn comes again.
      if (!(e instanceof TurnSuperseded) && !isDeadlock(e)) throw e;
    }
  }
  return total;
}

async function resetTurn(tx: SqlTx, deps: WebhookDeps, batchId: string, limit: number, now: Date): Promise<WindowReset> {
  const none: WindowReset = { replaced: 0, cancelled: 0, finished: [] };
  // One worker per batch at a time; another skips it this turn.
  const [lock] = await tx.query<{ ok: boolean }>(`SELECT pg_try_advisory_xact_lock(hashtext($1)) AS ok`, [batchId]);
  if (!lock.ok) return none;
  const [b] = await tx.query<ResetBatch>(
    `SELECT status, calling_window, enforced_window, windows_version, window_reset_cursor AS cursor, recipient_keys
       FROM batches WHERE id = $1 AND window_reset_cursor IS NOT NULL`,
    [batchId],
  );
  if (!b) return none;
  if (!UNFINISHED_BATCH_STATUSES.includes(b.status)) {
    await tx.query(`UPDATE batches SET window_reset_cursor = NULL WHERE id = $1`, [batchId]);
    return none;
  }
  const rows = await tx.query<WaitingRow>(WAITING_CHUNK_SQL, [batchId, b.cursor, limit]);
  const windows = effectiveWindows(storedWindow(b.calling_window), storedWindow(b.enforced_window));
  const table = numberZoneTable();
  const input = { windows, recipientKeys: b.recipient_keys === true, zonesOf: (e164: string) => zonesForNumber(table, e164), now };
  const openingOf = openingsOf(windows, now);
  const placed: { id: string; timezone: string | null; next: string | null; closes: string | null }[] = [];
  const never: string[] = [];
  for (const r of rows) {
    const call: WaitingCall = {
      status: r.status,
      phoneNumber: r.phone_number,
      timezone: r.timezone,
      nextAttemptAt: r.next_attempt_at,
      waitReason: r.wait_reason,
      contactZone: r.contact_timezone,
    };
    const p = replaceWaitingCall(call, input, openingOf);
    if (p === null) never.push(r.id);
    else
      placed.push({ id: r.id, timezone: p.timezone, next: p.nextAttemptAt?.toISOString() ?? null, closes: p.windowClosesAt?.toISOString() ?? null });
  }
  await writePlacements(tx, placed, now);
  const cancelled = never.length > 0 ? await cancelUnplaceable(tx, deps, batchId, never, now) : 0;
  const done = rows.length < limit;
  const advanced = await tx.query(
    `UPDATE batches SET window_reset_cursor = $2, updated_at = $4::timestamptz
      WHERE id = $1 AND windows_version = $3 AND in_progress = 0 AND window_reset_cursor IS NOT NULL RETURNING 1`,
    [batchId, done ? null : rows[rows.length - 1].seq, b.windows_version, now.toISOString()],
  );
  if (advanced.length === 0) throw new TurnSuperseded();
  return { replaced: placed.length, cancelled, finished: done ? [batchId] : [] };
}

/** A waiting call keeps its frequency-cap reason only while its time is the cap's. */
async function writePlacements(tx: SqlTx, placed: { id: string; timezone: string | null; next: string | null; closes: string | null }[], now: Date) {
  if (placed.length === 0) return;
  await tx.query(
    `UPDATE calls c SET timezone = u.timezone, next_attempt_at = u.next, window_closes_at = u.closes,
            wait_reason = CASE WHEN u.next IS NOT DISTINCT FROM c.next_attempt_at THEN c.wait_reason END,
            updated_at = $5::timestamptz
       FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::timestamptz[]) AS u(id, timezone, next, closes)
      WHERE c.id = u.id AND c.status IN ('pending', 'queued') AND c.lease_owner IS NULL`,
    [placed.map((p) => p.id), placed.map((p) => p.timezone), placed.map((p) => p.next), placed.map((p) => p.closes), now.toISOString()],
  );
}
