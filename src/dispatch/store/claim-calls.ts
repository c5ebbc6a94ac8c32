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

const ALT = `'${ALTERNATE_WINDOW_WAIT}'`;

/** Exported for bench/dispatch.ts, which EXPLAINs the very statement a worker runs. */
export const CLAIM_SQL = `
WITH alloc AS (
  -- A batch paused or cancelled since the read drops out here. Its row is not locked until the
  -- counter update at the very end (the order every writer uses: calls, then their batch), so the
  -- hottest row of a running batch stays locked only from there to the commit.
  -- An expired batch dials no more: the expiry sweep ends its waiting calls. Nor does one whose
  -- calls are being re-placed under a changed window (reset-windows.ts).
  SELECT a.*, b.windows_version FROM unnest($1::text[], $2::int[], $16::bool[]) AS a(batch_id, n, windowed)
    JOIN batches b ON b.id = a.batch_id AND b.status = ANY($8::text[])
                  AND (b.expires_at IS NULL OR b.expires_at > $3::timestamptz) AND b.window_reset_cursor IS NULL
),
picked AS (
  -- Calls put back in line (queued) go first, those due earliest first, as one range of
  -- calls_requeued_due_idx that ends at now: retries still waiting are never read. Then those
  -- never dialled (pending): in a plain batch in submission order straight off the
  -- (batch_id, status, seq) index; in a windowed batch (one of the two branches runs, the other's
  -- condition on a.windowed is a one-time filter) those whose window opened, open since the create
  -- first, then by opening, window close and submission, as the range of calls_window_open_idx
  -- that ends at now: calls waiting for their window are never read, windows closed and not yet
  -- swept are skipped inside the index. Under the outer LIMIT a branch only runs, and only locks
  -- rows, when those before it come up short.
  -- A number put on the account's do-not-call list after the create is never dialled: the call
  -- is cancelled here instead (one primary-key probe per claimed call). So is one the national
  -- registry or a reassignment refuses (registry_refuses_call, migration consent_and_registry:
  -- nothing for a number outside +1, a few primary-key probes for one inside). A retry that waited for
  -- its alternate number's window (wait_reason ${ALT}) dials the alternate: that number is the
  -- one checked, capped and dialled.
  SELECT p.id, p.status AS old_status, p.phone_number AS number, p.alternate,
         (EXISTS (SELECT 1 FROM suppressions s WHERE s.account_id = $9 AND s.phone_number = p.phone_number)
           OR registry_refuses_call(p.phone_number, p.id)) AS suppressed
    FROM alloc a
    CROSS JOIN LATERAL (
      SELECT * FROM (
        SELECT c.id, c.status, COALESCE(CASE WHEN c.wait_reason = ${ALT} THEN c.alternate_phone END, c.phone_number) AS phone_number,
               (c.wait_reason = ${ALT} AND c.alternate_phone IS NOT NULL) IS TRUE AS alternate
          FROM calls c
         WHERE c.batch_id = a.batch_id AND c.status = 'queued' AND c.lease_owner IS NULL
           AND COALESCE(c.next_attempt_at, '-infinity'::timestamptz) <= $3::timestamptz
           AND (c.window_closes_at IS NULL OR c.window_closes_at > $3::timestamptz)
         ORDER BY COALESCE(c.next_attempt_at, '-infinity'::timestamptz), c.seq
         LIMIT a.n
         FOR UPDATE SKIP LOCKED) requeued
      UNION ALL
      SELECT * FROM (
        SELECT c.id, c.status, c.phone_number, false FROM calls c
         WHERE NOT a.windowed AND c.batch_id = a.batch_id AND c.status = 'pending' AND c.lease_owner IS NULL
           AND (c.next_attempt_at IS NULL OR c.next_attempt_at <= $3::timestamptz)
         ORDER BY c.seq
         LIMIT a.n
         FOR UPDATE SKIP LOCKED) never_dialled
      UNION ALL
      SELECT * FROM (
        SELECT c.id, c.status, c.phone_number, false FROM calls c
         WHERE a.windowed AND c.batch_id = a.batch_id AND c.status = 'pending' AND c.lease_owner IS NULL
           AND c.window_closes_at IS NOT NULL AND c.window_closes_at > $3::timestamptz
           AND COALESCE(c.next_attempt_at, '-infinity'::timestamptz) <= $3::timestamptz
         ORDER BY COALESCE(c.next_attempt_at, '-infinity'::timestamptz), c.window_closes_at, c.seq
         LIMIT a.n
         FOR UPDATE SKIP LOCKED) in_window
      LIMIT a.n
    ) p
),
capped AS (
  -- The account's frequency cap ($13 dials per number in $14 seconds; both null without one, and
  -- then this reads nothing): a picked call whose number has had $13 dials in the period, counting
  -- the picks before it in this statement, is not dialled. It waits until enough of those dials
  -- leave the period: the k-th oldest's time + the period, or now + the period when the k-th is
  -- one of this statement's own. A range of number_dials' primary key per picked call (the dials
  -- in the period: at most $13 unless the cap was lowered), one more per call held back.
  SELECT w.id, w.phone_number,
         COALESCE((SELECT d.dialled_at FROM number_dials d
                    WHERE d.account_id = $9 AND d.phone_number = w.phone_number
                      AND d.dialled_at > $3::timestamptz - $14::int * interval '1 second'
                    ORDER BY d.dialled_at OFFSET w.k - 1 LIMIT 1), $3::timestamptz)
           + $14::int * interval '1 second' AS next_attempt_at
    FROM (
      SELECT c.id, p.number AS phone_number,
             n.dials + row_number() OVER (PARTITION BY p.number ORDER BY c.batch_id, c.seq) - $13::int AS k
        FROM picked p JOIN calls c ON c.id = p.id
        CROSS JOIN LATERAL (
          SELECT count(*)::int AS dials FROM number_dials d
           WHERE d.account_id = $9 AND d.phone_number = p.number
             AND d.dialled_at > $3::timestamptz - $14::int * interval '1 second') n
       WHERE $13::int IS NOT NULL AND NOT p.suppressed
    ) w
   WHERE w.k > 0
),
waits AS (
  -- Still waiting (pending or queued, in the queued counter), until the cap lets it through.
  UPDATE calls c SET next_attempt_at = k.next_attempt_at, updated_at = $3::timestamptz,
         wait_reason = CASE WHEN c.wait_reason = ${ALT} THEN c.wait_reason ELSE $15 END
    FROM capped k
   WHERE c.id = k.id
  RETURNING 1
),
upd AS (
  UPDATE calls c SET status = 'ringing', lease_owner = $4, lease_expires_at = $5::timestamptz,
         attempts = c.attempts + 1, dialed_number = p.number, used_alternate = p.alternate, next_attempt_at = NULL,
         "timestamp" = COALESCE(c."timestamp", $3::timestamptz), updated_at = $3::timestamptz,
         wait_reason = NULL, provider_call_id = NULL
    FROM picked p
   WHERE c.id = p.id AND NOT p.suppressed
     AND p.id NOT IN (SELECT id FROM capped)
  RETURNING c.id, c.batch_id, c.account_id, c.seq, c.phone_number, c.alternate_phone, c.external_id, c.name,
            c.metadata, c.attempts, c.timezone, p.old_status, p.number AS dialled_number, p.alternate, c.contact_timezone
),
sup AS (
  UPDATE calls c SET status = 'cancelled', completed_at = $3::timestamptz, disconnect_reason = $12,
         updated_at = $3::timestamptz,
         next_attempt_at = NULL, wait_reason = NULL
    FROM picked p
   WHERE c.id = p.id AND p.suppressed
  RETURNING c.id, c.batch_id, c.account_id, c.seq, c.phone_number, c.attempts, p.old_status, p.number AS dialled_number, p.alternate
),
dials AS (
  -- What the frequency cap counts: only written for an account that has one.
  INSERT INTO number_dials (account_id, phone_number, dialled_at, call_id)
  SELECT $9, dialled_number, $3::timestamptz, id FROM upd WHERE $13::int IS NOT NULL
  -- A call claimed again at the instant of its last dial (a clock that stands still) is one dial.
  ON CONFLICT DO NOTHING
  RETURNING 1
),
ev AS (
  INSERT INTO call_events (account_id, call_id, from_status, to_status, detail, at)
  SELECT account_id, id, old_status, to_status, detail, $3::timestamptz FROM (
    SELECT account_id, id, old_status, 'ringing' AS to_status, batch_id, seq,
           jsonb_build_object('event', 'dial', 'number', dialled_number, 'attempt', attempts, 'alternate', alternate, 'worker', $4::text) AS detail
      FROM upd
    UNION ALL
    SELECT account_id, id, old_status, 'cancelled', batch_id, seq, jsonb_build_object('event', 'suppressed', 'number', dialled_number)
      FROM sup
  ) e ORDER BY batch_id, seq
  RETURNING 1
),
cnt AS (
  -- n calls dialled, m cancelled as suppressed; the counters' sum is unchanged either way.
  UPDATE batches b SET
    queued = b.queued + $6::int * d.n + $10::int * d.m, in_progress = b.in_progress + $7::int * d.n,
    cancelled = b.cancelled + $11::int * d.m,
    status = CASE WHEN d.n > 0 AND b.status IN ('queued', 'dispatching') THEN 'running' ELSE b.status END,
    started_at = CASE WHEN d.n > 0 THEN COALESCE(b.started_at, $3::timestamptz) ELSE b.started_at END,
    updated_at = $3::timestamptz
  FROM (SELECT batch_id, count(*) FILTER (WHERE NOT s)::int AS n, count(*) FILTER (WHERE s)::int AS m
          FROM (SELECT batch_id, false AS s FROM upd UNION ALL SELECT batch_id, true FROM sup) x
         GROUP BY batch_id) d
  WHERE b.id = d.batch_id
  RETURNING 1
)
SELECT id, u.batch_id, account_id, seq, phone_number, alternate_phone, external_id, name, metadata, attempts, timezone,
       a.windows_version, false AS suppressed, dialled_number, alternate, contact_timezone
  FROM upd u JOIN alloc a ON a.batch_id = u.batch_id
UNION ALL
SELECT id, batch_id, account_id, seq, phone_number, NULL, NULL, NULL, NULL, attempts, NULL, 0, true, dialled_number, alternate, NULL FROM sup
ORDER BY batch_id, seq`;

/** CLAIM_SQL's parameters: `alloc` is how many calls to take per batch. */
export function claimParams(
  alloc: ReadonlyMap<string, number>,
  c: { accountId: string; workerId: string; now: Date; leaseExpiresAt: Date; frequencyCap?: FrequencyCap | null; windowed?: ReadonlySet<string> },
): unknown[] {
  const target = [...alloc.keys()].sort();
  return [
    target,
    target.map((id) => alloc.get(id)!),
    c.now.toISOString(),
    c.workerId,
    c.leaseExpiresAt.toISOString(),
    DIAL.queued ?? 0,
    DIAL.in_progress ?? 0,
    DISPATCHING_STATUSES,
    c.accountId,
    SUPPRESS.queued ?? 0,
    SUPPRESS.cancelled ?? 0,
    SUPPRESSED_DISCONNECT_REASON,
    c.frequencyCap?.maxCalls ?? null,
    c.frequencyCap?.periodSeconds ?? null,
    FREQUENCY_CAP_WAIT_REASON,
    target.map((id) => c.windowed?.has(id) ?? false),
  ];
}

/** The allocation of a second pass: the slots that batches coming up short left, shared by the others. */
function refill(demands: BatchDemand[], first: Map<string, number>, rows: ClaimRow[], free: number, budget: number, rotate: number): Map<string, number> {
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
    const frequencyCap = frequencyCapOf({ frequencyCapMaxCalls: acc[0].frequency_cap_max_calls, frequencyCapPeriodSeconds: acc[0].frequency_cap_period_seconds });
    const windowed = new Set(batches.filter((b) => b.windowed).map((b) => b.id));
    const claimSql = (alloc: Map<string, number>) =>
      tx.query<ClaimRow>(CLAIM_SQL, claimParams(alloc, { accountId: input.accountId, workerId: input.workerId, now, leaseExpiresAt: expires, frequencyCap, windowed }));
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
    const claimed: ClaimedCall[] = rows.filter((r) => !r.suppressed).map((r) => ({
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

