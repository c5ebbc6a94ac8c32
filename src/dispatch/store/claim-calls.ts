// Use case: a worker takes the next calls to dial for one account, within the batch and account
// concurrency limits, and marks them dialled before it places them.
//
// Safe across processes: claims of one account are serialised by a lock on its accounts row (a
// worker that finds it taken skips the account this round), the in-flight count is read after that
// lock (only claims raise it, so a stale read can only be too high), and the calls themselves are
// picked with FOR UPDATE SKIP LOCKED. Calls are marked dialled (status ringing, lease,
// dialed_number, attempts+1) and counted in the same transaction, before any provider is asked: a
// crash after this point can never lead to a second dial.
//
// Lock order, shared by every writer of calls and batch counters (claims, worker writes, recovery,
// cancel): calls first, their batch row last, so the hottest row is held only until the commit
// right after. A write group spanning several batches locks those first, in id order, and claims
// never wait for a call (SKIP LOCKED) nor for the account lock (SKIP LOCKED): no two writers can
// wait on each other in a cycle.
import type { AppDeps } from '../../deps.ts';
import { counterDelta } from '../../domain/call-state.ts';
import { allocateSlots, type BatchDemand } from '../../domain/fair-share.ts';
import { enqueueBatchEvents, type WebhookDeps } from '../../services/webhooks/enqueue-batch-events.ts';
import { enqueueCallWebhooks } from '../../services/webhooks/outbox.ts';
import { ALTERNATE_WINDOW_WAIT } from '../../domain/wait-reason.ts';
import { closeFinishedBatches } from '../../services/calls/call-transitions.ts';
import { SUPPRESSED_DISCONNECT_REASON } from '../../domain/suppressions.ts';
import { FREQUENCY_CAP_WAIT_REASON, frequencyCapOf, type FrequencyCap } from '../../domain/frequency-cap.ts';
import { runStatement } from '../../db/sql-statement.ts';
import { withSqlTransaction } from '../../db/sql-transaction.ts';
import { loadNamedSql } from '../../db/named-sql.ts';

/** Batch statuses in which calls are dialled. */
export const DISPATCHING_STATUSES = ['queued', 'dispatching', 'running'] as const;

export interface ClaimedCall {
  id: string;
  batchId: string;
  accountId: string;
  seq: number;
  phoneNumber: string;
  alternatePhone: string | null;
  externalId: string;
  name: string | null;
  metadata: Record<string, unknown>;
  attempts: number;
  /** calls.timezone: the zones its calling windows are judged in; null without a window. */
  timezone: string | null;
  /** calls.contact_timezone: the contact's own zone, which judges the alternate number too. */
  contactTimezone: string | null;
  /** The number this claim dials: the primary, or the alternate of a call that waited for its window. */
  dialledNumber: string;
  usedAlternate: boolean;
  /** The batch's windows version when claimed: settings loaded for an older one are stale. */
  windowsVersion: number;
  dialledAt: Date;
}

export interface ClaimInput {
  accountId: string;
  workerId: string;
  /**
   * Read after the in-flight count, so a dial's timestamp is never earlier than the end of a call
   * whose slot it took (in-flight windows reconstructed from history never overlap beyond the limit).
   */
  clock: () => Date;
  leaseMs: number;
  /** Most calls this worker will take now. */
  budget: number;
  /** Round-robin offset for equal batches (see allocateSlots). */
  rotate?: number;
  /**
   * Lowers how many calls to take per batch after the fair share is computed (dial pacing per
   * from-number); it must never raise them.
   */
  limitAllocation?: (alloc: ReadonlyMap<string, number>) => Map<string, number>;
}

export interface ClaimResult {
  /** Another worker was claiming for this account. */
  skipped: boolean;
  claimed: ClaimedCall[];
  /** More calls could have been taken but the budget ran out. */
  budgetExhausted: boolean;
}

/** Accounts with at least one batch that has calls waiting and may dial. */
export async function accountsWithWaitingCalls(deps: Pick<AppDeps, 'db'>): Promise<string[]> {
  const rows = await runStatement<{ account_id: string }>(
    deps.db,
    `SELECT DISTINCT account_id FROM batches WHERE status = ANY($1::text[]) AND queued > 0`,
    [DISPATCHING_STATUSES],
  );
  return rows.map((r) => r.account_id);
}

interface ClaimRow {
  id: string;
  batch_id: string;
  account_id: string;
  seq: number;
  phone_number: string;
  alternate_phone: string | null;
  external_id: string;
  name: string | null;
  metadata: Record<string, unknown> | null;
  attempts: number;
  timezone: string | null;
  windows_version: number;
  /** Cancelled by the claim: its number is on the account's do-not-call list. */
  suppressed: boolean;
  dialled_number: string;
  alternate: boolean;
  contact_timezone: string | null;
}

interface BatchRow {
  id: string;
  status: string;
  concurrency: number;
  in_progress: number;
  queued: number;
  started_at: Date | null;
  windowed: boolean;
  resetting: boolean;
}

const DIAL = counterDelta('queued', 'ringing');
const SUPPRESS = counterDelta('queued', 'cancelled');

/**
 * The claim's cost estimate grows with its batch: its LIMITs take their counts from the allocation,
 * unknown when planning, so PostgreSQL assumes a tenth of the due range, which it cannot estimate
 * either (no statistics on a partial index's expression). From about a million calls the estimate
 * passes jit_above_cost, and compiling the statement took 110-270 ms against a few ms to run it
 * (bench/dispatch.ts, scenario 4). Off for the claim's transaction only.
 */
export const CLAIM_JIT_OFF = 'SET LOCAL jit = off';

/** The claim statement (claim-calls.sql), read and made positional once, when this module loads. */
const CLAIM = loadNamedSql(new URL('./claim-calls.sql', import.meta.url), [
  'batch_ids',
  'batch_takes',
  'batch_windowed',
  'now',
  'worker_id',
  'lease_expires_at',
  'dial_queued_delta',
  'dial_in_progress_delta',
  'dispatching_statuses',
  'account_id',
  'suppress_queued_delta',
  'suppress_cancelled_delta',
  'suppressed_reason',
  'cap_max_calls',
  'cap_period_seconds',
  'cap_wait_reason',
  'alternate_wait_reason',
]);
/** Exported for bench/dispatch.ts, which EXPLAINs the very statement a worker runs. */
export const CLAIM_SQL = CLAIM.text;

/** CLAIM_SQL's parameters in order: `alloc` is how many calls to take per batch. */
export function claimParams(
  alloc: ReadonlyMap<string, number>,
  c: { accountId: string; workerId: string; now: Date; leaseExpiresAt: Date; frequencyCap?: FrequencyCap | null; windowed?: ReadonlySet<string> },
): unknown[] {
  const target = [...alloc.keys()].sort();
  return CLAIM.params({
    batch_ids: target,
    batch_takes: target.map((id) => alloc.get(id)!),
    batch_windowed: target.map((id) => c.windowed?.has(id) ?? false),
    now: c.now.toISOString(),
    worker_id: c.workerId,
    lease_expires_at: c.leaseExpiresAt.toISOString(),
    dial_queued_delta: DIAL.queued ?? 0,
    dial_in_progress_delta: DIAL.in_progress ?? 0,
    dispatching_statuses: DISPATCHING_STATUSES,
    account_id: c.accountId,
    suppress_queued_delta: SUPPRESS.queued ?? 0,
    suppress_cancelled_delta: SUPPRESS.cancelled ?? 0,
    suppressed_reason: SUPPRESSED_DISCONNECT_REASON,
    cap_max_calls: c.frequencyCap?.maxCalls ?? null,
    cap_period_seconds: c.frequencyCap?.periodSeconds ?? null,
    cap_wait_reason: FREQUENCY_CAP_WAIT_REASON,
    alternate_wait_reason: ALTERNATE_WINDOW_WAIT,
  });
}

/** The allocation of a second pass: the slots that batches coming up short left, shared by the others. */
function refill(
  demands: BatchDemand[],
  first: Map<string, number>,
  rows: ClaimRow[],
  free: number,
  budget: number,
  rotate: number,
): Map<string, number> {
  const taken = new Map<string, number>();
  for (const r of rows) taken.set(r.batch_id, (taken.get(r.batch_id) ?? 0) + 1);
  const short = (id: string) => first.has(id) && (taken.get(id) ?? 0) < first.get(id)!;
  if (!demands.some((d) => short(d.id))) return new Map();
  const others = demands
    .filter((d) => !short(d.id))
    .map((d) => ({ ...d, inFlight: d.inFlight + (taken.get(d.id) ?? 0), waiting: d.waiting - (taken.get(d.id) ?? 0) }));
  const dialled = rows.filter((r) => !r.suppressed).length;
  return allocateSlots(others, free - dialled, budget - rows.length, rotate);
}

export async function claimCalls(deps: Pick<AppDeps, 'db'> & WebhookDeps, input: ClaimInput): Promise<ClaimResult> {
  const empty = (skipped: boolean): ClaimResult => ({ skipped, claimed: [], budgetExhausted: false });
  if (input.budget <= 0) return { ...empty(false), budgetExhausted: true };
  return withSqlTransaction(deps.db, async (tx) => {
    // The account row is the claim lock (a worker that finds it taken skips the account).
    const acc = await tx.query<{ max_concurrent_calls: number; frequency_cap_max_calls: number | null; frequency_cap_period_seconds: number | null }>(
      `SELECT max_concurrent_calls, frequency_cap_max_calls, frequency_cap_period_seconds
         FROM accounts WHERE id = $1 FOR NO KEY UPDATE SKIP LOCKED`,
      [input.accountId],
    );
    if (acc.length === 0) return empty(true);
    // A separate statement, so its snapshot is taken after the lock: it sees every claim committed
    // before ours (one statement would read from a snapshot older than the lock and could see too
    // few calls in flight). Every batch that can hold calls in flight counts against the account
    // limit; a cancelled one until its last in-flight call has ended (completed_at set).
    const batches = await tx.query<BatchRow>(
      `SELECT id, status, concurrency, in_progress, queued, started_at,
              (calling_window IS NOT NULL OR enforced_window IS NOT NULL) AS windowed,
              window_reset_cursor IS NOT NULL AS resetting FROM batches
        WHERE account_id = $1
          AND (status IN ('paused', 'queued', 'dispatching', 'running') OR (status = 'cancelled' AND completed_at IS NULL))
        ORDER BY id`,
      [input.accountId],
    );
    const inFlight = batches.reduce((s, b) => s + b.in_progress, 0);
    const demands: BatchDemand[] = batches
      .filter((b) => (DISPATCHING_STATUSES as readonly string[]).includes(b.status) && b.queued > 0 && !b.resetting)
      .map((b) => ({ id: b.id, inFlight: b.in_progress, concurrency: b.concurrency, waiting: b.queued }));
    const free = acc[0].max_concurrent_calls - inFlight;
    const unlimited = allocateSlots(demands, free, Infinity, input.rotate ?? 0);
    const wanted = [...unlimited.values()].reduce((s, n) => s + n, 0);
    const now = input.clock();
    const expires = new Date(now.getTime() + input.leaseMs);
    const frequencyCap = frequencyCapOf({
      frequencyCapMaxCalls: acc[0].frequency_cap_max_calls,
      frequencyCapPeriodSeconds: acc[0].frequency_cap_period_seconds,
    });
    const windowed = new Set(batches.filter((b) => b.windowed).map((b) => b.id));
    const claimSql = (alloc: Map<string, number>) =>
      tx.query<ClaimRow>(
        CLAIM_SQL,
        claimParams(alloc, { accountId: input.accountId, workerId: input.workerId, now, leaseExpiresAt: expires, frequencyCap, windowed }),
      );
    const fair = allocateSlots(demands, free, input.budget, input.rotate ?? 0);
    const limited = input.limitAllocation ? input.limitAllocation(fair) : fair;
    const alloc = new Map([...limited].filter(([id, n]) => n > 0 && n <= (fair.get(id) ?? 0)));
    if (alloc.size === 0) return empty(false);
    await tx.query(CLAIM_JIT_OFF);
    const rows = await claimSql(alloc);
    // A batch whose waiting calls are not due (retries waiting for their time) comes up short, as
    // does one whose picks the frequency cap held back (they are not returned); the
    // slots it left go to the other batches in a second pass, so a batch of waiting retries cannot
    // halve the pace of the batches beside it. Dial pacing is decided once per round, so not then.
    if (!input.limitAllocation && rows.length < input.budget) {
      const second = refill(demands, alloc, rows, free, input.budget, input.rotate ?? 0);
      if (second.size > 0) rows.push(...(await claimSql(second)));
    }
    const suppressedBatches = [...new Set(rows.filter((r) => r.suppressed).map((r) => r.batch_id))].sort();
    // A call dialled before (a retry waiting) gets its terminal webhook; one never dialled none.
    const endedDialled = rows.filter((r) => r.suppressed && r.attempts > 0).map((r) => ({ type: 'call.cancelled' as const, callId: r.id }));
    await enqueueCallWebhooks(tx, deps, endedDialled, now);
    // A batch whose last waiting calls were all suppressed has nothing left to dial: close it now.
    if (suppressedBatches.length > 0) await closeFinishedBatches(tx, suppressedBatches, now);
    const claimed: ClaimedCall[] = rows
      .filter((r) => !r.suppressed)
      .map((r) => ({
        id: r.id,
        batchId: r.batch_id,
        accountId: r.account_id,
        seq: r.seq,
        phoneNumber: r.phone_number,
        alternatePhone: r.alternate_phone,
        externalId: r.external_id,
        name: r.name,
        metadata: r.metadata ?? {},
        attempts: r.attempts,
        timezone: r.timezone,
        contactTimezone: r.contact_timezone,
        dialledNumber: r.dialled_number,
        usedAlternate: r.alternate,
        windowsVersion: r.windows_version,
        dialledAt: now,
      }));
    const dialledBatches = new Set(claimed.map((c) => c.batchId));
    const firstDial = batches.filter((b) => b.started_at === null && dialledBatches.has(b.id)).map((b) => b.id);
    await enqueueBatchEvents(tx, 'batch.started', firstDial, now);
    return { skipped: false, claimed, budgetExhausted: wanted > claimed.length && claimed.length >= input.budget };
  });
}

/** Scheduled batches whose time has come (and immediate ones still pending) start dispatching. */
export async function startDueBatches(deps: Pick<AppDeps, 'db'>, now: Date): Promise<{ id: string; accountId: string; startMode: string }[]> {
  const rows = await runStatement<{ id: string; account_id: string; start_mode: string }>(
    deps.db,
    `UPDATE batches SET status = 'queued', updated_at = $1::timestamptz
      WHERE status = 'pending'
        AND (start_mode = 'immediate' OR (start_mode = 'scheduled' AND scheduled_at <= $1::timestamptz))
      RETURNING id, account_id, start_mode`,
    [now.toISOString()],
  );
  return rows.map((r) => ({ id: r.id, accountId: r.account_id, startMode: r.start_mode }));
}
