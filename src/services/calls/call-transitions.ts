// Use case: record what happened to calls. Every call state change commits together with its batch
// counter update, its call_events history rows and its recording: one statement for a whole group
// of calls (the worker buffers writes for a moment), plus the webhook outbox in the same
// transaction when the batch has a callback_url. A batch whose last call just ended is closed right
// after; the worker's periodic sweep (closeFinishedBatches) closes any the process missed by dying.
import type { AppDeps } from '../../deps.ts';
import { counterDelta, type CallStatus } from '../../domain/call-state.ts';
import { isoUtc as iso } from '../../domain/text-forms.ts';
import { boundOutcomes, MAX_PROVIDER_TEXT_LENGTH, MAX_SUMMARY_LENGTH, MAX_TRANSCRIPT_LENGTH, truncateText } from '../../domain/limits.ts';
import { enqueueBatchEvents, enqueueCallWriteWebhooks, type WebhookDeps } from '../webhooks/enqueue-batch-events.ts';
import { addOptOuts } from '../suppressions/add-opt-outs.ts';
import { autocommit } from '../../db/sql-statement.ts';
import { withSqlTransaction, type SqlTx } from '../../db/sql-transaction.ts';
import type { DialAudit } from '../../domain/dial-audit.ts';

export interface CallEventInput {
  from: CallStatus | null;
  to: CallStatus;
  at: Date;
  detail?: Record<string, unknown> | null;
}

/** Column changes; an absent (undefined) field keeps its stored value. */
export interface CallFieldChanges {
  dialedNumber?: string;
  usedAlternate?: boolean;
  /** The current dial's provider call. A write that adds a dial (attemptsIncrement > 0) clears it unless it sets it: the older dial's is not this one's. */
  providerCallId?: string;
  /** Added to `attempts`. */
  attemptsIncrement?: number;
  /** Kept when already set: it records the first dial. */
  timestamp?: Date;
  completedAt?: Date;
  hangupBy?: string;
  disconnectReason?: string;
  durationSeconds?: number;
  answerDurationSeconds?: number;
  llmTranscript?: string;
  transcriptStatus?: string;
  summary?: string;
  outcomes?: Record<string, string>;
  recordingAvailable?: boolean;
  /** A retry: when the call, put back in line, may be dialled again. */
  nextAttemptAt?: Date;
  /** A retry in a windowed batch: when the window it waits for closes. */
  windowClosesAt?: Date;
  /** `calls.wait_reason` of a call put back in line (its alternate number waits for its window). */
  waitReason?: string;
}

export interface CallWrite {
  callId: string;
  batchId: string;
  accountId: string;
  /** The write applies only while this worker still holds the call's lease. */
  owner: string;
  /** Recovery of another worker's call: applies only if that lease expired before this instant. */
  leaseExpiredBefore?: Date;
  /** Status the call must have now; `to` may equal it (field-only writes). */
  from: CallStatus;
  to: CallStatus;
  events: CallEventInput[];
  set: CallFieldChanges;
  /** Clears lease_owner/lease_expires_at: the call needs no more work from anyone. */
  releaseLease?: boolean;
  /** The audio itself, or where the provider keeps it (served through our signed link only). */
  recording?: { contentType: string; data: Uint8Array } | { contentType: string; sourceUrl: string } | null;
  /** false: the batch is known to have no callback_url, so the outbox need not be consulted. */
  webhooks?: boolean;
  /** The analysis says the contact opted out: the dialled number goes on the do-not-call list in this write's transaction. */
  optOut?: boolean;
  /**
   * Evidence of the dial this write records (dial_audits), inserted in the same statement and only
   * when the write applies: a worker that lost the call's lease leaves none.
   */
  audits?: DialAudit[];
}

export interface ApplyCallWritesResult {
  /** Calls whose write applied; the others had moved on (lease lost, status changed). */
  applied: Set<string>;
  /** Batches whose last non-terminal call ended in this transaction. */
  finishedBatches: { id: string; status: string; completedAt: Date }[];
}

const APPLY_SQL = `
WITH u AS (
  SELECT * FROM unnest($2::text[], $3::text[], $4::timestamptz[], $5::text[], $6::text[], $7::bool[], $8::int[],
                       $9::text[], $10::bool[], $11::text[], $12::timestamptz[], $13::timestamptz[], $14::text[],
                       $15::text[], $16::int[], $17::int[], $18::text[], $19::text[], $20::text[], $21::jsonb[],
                       $22::bool[], $23::int[], $24::int[], $25::int[], $26::int[], $27::int[], $39::timestamptz[], $40::timestamptz[], $41::text[])
    AS u(id, owner, expired_before, from_status, to_status, release, att_inc,
         dialed_number, used_alternate, provider_call_id, ts, completed_at, hangup_by,
         disconnect_reason, duration_seconds, answer_duration_seconds, llm_transcript, transcript_status, summary, outcomes,
         recording_available, dq, dip, dc, df, dx, next_attempt_at, window_closes_at, wait_reason)
),
upd AS (
  UPDATE calls c SET
    status = u.to_status,
    lease_owner = CASE WHEN u.release THEN NULL ELSE c.lease_owner END,
    lease_expires_at = CASE WHEN u.release THEN NULL ELSE c.lease_expires_at END,
    attempts = c.attempts + u.att_inc,
    dialed_number = COALESCE(u.dialed_number, c.dialed_number),
    used_alternate = COALESCE(u.used_alternate, c.used_alternate),
    provider_call_id = CASE WHEN u.att_inc > 0 THEN u.provider_call_id ELSE COALESCE(u.provider_call_id, c.provider_call_id) END,
    "timestamp" = COALESCE(c."timestamp", u.ts),
    completed_at = COALESCE(u.completed_at, c.completed_at),
    hangup_by = COALESCE(u.hangup_by, c.hangup_by),
    disconnect_reason = COALESCE(u.disconnect_reason, c.disconnect_reason),
    duration_seconds = COALESCE(u.duration_seconds, c.duration_seconds),
    answer_duration_seconds = COALESCE(u.answer_duration_seconds, c.answer_duration_seconds),
    llm_transcript = COALESCE(u.llm_transcript, c.llm_transcript),
    transcript_status = COALESCE(u.transcript_status, c.transcript_status),
    summary = COALESCE(u.summary, c.summary),
    outcomes = COALESCE(u.outcomes, c.outcomes),
    recording_available = COALESCE(u.recording_available, c.recording_available),
    next_attempt_at = COALESCE(u.next_attempt_at, c.next_attempt_at),
    window_closes_at = COALESCE(u.window_closes_at, c.window_closes_at),
    wait_reason = COALESCE(u.wait_reason, c.wait_reason),
    updated_at = $1::timestamptz
  FROM u
  WHERE c.id = u.id
    AND c.status = u.from_status
    AND c.lease_owner = u.owner
    AND (u.expired_before IS NULL OR c.lease_expires_at < u.expired_before)
  RETURNING c.id, c.batch_id, u.dq, u.dip, u.dc, u.df, u.dx
),
ev AS (
  INSERT INTO call_events (account_id, call_id, from_status, to_status, detail, at)
  SELECT e.account_id, e.call_id, e.from_status, e.to_status, e.detail, e.at
    FROM unnest($28::text[], $29::text[], $30::text[], $31::text[], $32::jsonb[], $33::timestamptz[])
      WITH ORDINALITY AS e(account_id, call_id, from_status, to_status, detail, at, ord)
   WHERE e.call_id IN (SELECT id FROM upd)
   ORDER BY e.ord
  RETURNING 1
),
aud AS (
  INSERT INTO dial_audits (account_id, batch_id, call_id, attempt, number, alternate, dialled_at, allowed_by, zones, closes_at, detail)
  SELECT a.account_id, a.batch_id, a.call_id, a.attempt, a.number, a.alternate, a.dialled_at, a.allowed_by,
         string_to_array(a.zones, ','), a.closes_at, a.detail
    FROM unnest($42::text[], $43::text[], $44::text[], $45::int[], $46::text[], $47::bool[], $48::timestamptz[], $49::text[],
                $50::text[], $51::timestamptz[], $52::jsonb[])
      WITH ORDINALITY AS a(account_id, batch_id, call_id, attempt, number, alternate, dialled_at, allowed_by, zones, closes_at, detail, ord)
   WHERE a.call_id IN (SELECT id FROM upd)
   ORDER BY a.ord
  RETURNING 1
),
rec AS (
  -- Base64 text: PGlite does not accept bytea[] parameters.
  INSERT INTO recordings (call_id, account_id, content_type, data, source_url, created_at)
  SELECT r.call_id, r.account_id, r.content_type, decode(r.data, 'base64'), r.source_url, $1::timestamptz
    FROM unnest($34::text[], $35::text[], $36::text[], $37::text[], $38::text[]) AS r(call_id, account_id, content_type, data, source_url)
   WHERE r.call_id IN (SELECT id FROM upd)
  ON CONFLICT (call_id) DO NOTHING
  RETURNING 1
),
d AS (
  SELECT batch_id, sum(dq)::int AS dq, sum(dip)::int AS dip, sum(dc)::int AS dc, sum(df)::int AS df, sum(dx)::int AS dx
    FROM upd GROUP BY batch_id
),
cnt AS (
  -- Last, after the calls (the lock order every writer uses, see claim-calls.ts): the hot batch
  -- row stays locked only from here to the commit.
  UPDATE batches b SET
    queued = b.queued + d.dq, in_progress = b.in_progress + d.dip, completed = b.completed + d.dc,
    failed = b.failed + d.df, cancelled = b.cancelled + d.dx, updated_at = $1::timestamptz
  FROM d
  WHERE b.id = d.batch_id AND (d.dq <> 0 OR d.dip <> 0 OR d.dc <> 0 OR d.df <> 0 OR d.dx <> 0)
  RETURNING b.id, b.queued, b.in_progress, b.completed_at
)
SELECT 'call' AS kind, id, 0 AS queued, 0 AS in_progress FROM upd
UNION ALL
SELECT 'batch', id, queued, in_progress FROM cnt WHERE queued = 0 AND in_progress = 0 AND completed_at IS NULL`;

const orNull = <T>(v: T | undefined): T | null => (v === undefined ? null : v);

/**
 * Closes batches with no call left to dial or in flight: running/paused ones become `completed`
 * (queuing batch.completed), a cancelled one keeps its status and gets its completed_at once its
 * last in-flight call ended. Without ids: every such batch (the worker's sweep).
 */
export async function closeFinishedBatches(tx: SqlTx, batchIds: string[] | null, now: Date): Promise<ApplyCallWritesResult['finishedBatches']> {
  if (batchIds && batchIds.length === 0) return [];
  const rows = await tx.query<{ id: string; status: string; completed_at: Date }>(
    `UPDATE batches SET status = CASE WHEN status = 'cancelled' THEN status ELSE 'completed' END,
            completed_at = $2::timestamptz, updated_at = $2::timestamptz
      WHERE ($1::text[] IS NULL OR id = ANY($1::text[])) AND queued = 0 AND in_progress = 0 AND completed_at IS NULL
        AND status IN ('queued', 'dispatching', 'running', 'paused', 'cancelled')
      RETURNING id, status, completed_at`,
    [batchIds, now.toISOString()],
  );
  const finished = rows.map((r) => ({ id: r.id, status: r.status, completedAt: new Date(r.completed_at) }));
  await enqueueBatchEvents(
    tx,
    'batch.completed',
    finished.filter((b) => b.status === 'completed').map((b) => b.id),
    now,
  );
  return finished;
}

/** Closes every finished batch in one transaction with its webhooks (the worker's periodic sweep). */
export async function sweepFinishedBatches(deps: Pick<AppDeps, 'db'>, now: Date): Promise<ApplyCallWritesResult['finishedBatches']> {
  return withSqlTransaction(deps.db, (tx) => closeFinishedBatches(tx, null, now));
}

function applyParams(writes: CallWrite[], now: Date): unknown[] {
  const n = writes.length;
  const col = <T>(f: (w: CallWrite) => T): T[] => {
    const out = new Array<T>(n);
    for (let i = 0; i < n; i++) out[i] = f(writes[i]);
    return out;
  };
  const deltas = writes.map((w) => counterDelta(w.from, w.to));
  const events = writes.flatMap((w) => w.events.map((e) => ({ w, e })));
  const recordings = writes.filter((w) => w.recording);
  const audits = writes.flatMap((w) => (w.audits ?? []).map((a) => ({ w, a })));
  return [
    now.toISOString(),
    col((w) => w.callId),
    col((w) => w.owner),
    col((w) => iso(w.leaseExpiredBefore)),
    col((w) => w.from),
    col((w) => w.to),
    col((w) => !!w.releaseLease),
    col((w) => w.set.attemptsIncrement ?? 0),
    col((w) => orNull(w.set.dialedNumber)),
    col((w) => orNull(w.set.usedAlternate)),
    col((w) => truncateText(w.set.providerCallId, MAX_PROVIDER_TEXT_LENGTH)),
    col((w) => iso(w.set.timestamp)),
    col((w) => iso(w.set.completedAt)),
    col((w) => truncateText(w.set.hangupBy, MAX_PROVIDER_TEXT_LENGTH)),
    col((w) => truncateText(w.set.disconnectReason, MAX_PROVIDER_TEXT_LENGTH)),
    col((w) => orNull(w.set.durationSeconds)),
    col((w) => orNull(w.set.answerDurationSeconds)),
    col((w) => truncateText(w.set.llmTranscript, MAX_TRANSCRIPT_LENGTH)),
    col((w) => orNull(w.set.transcriptStatus)),
    col((w) => truncateText(w.set.summary, MAX_SUMMARY_LENGTH)),
    col((w) => (w.set.outcomes === undefined ? null : JSON.stringify(boundOutcomes(w.set.outcomes)))),
    col((w) => orNull(w.set.recordingAvailable)),
    deltas.map((d) => d.queued ?? 0),
    deltas.map((d) => d.in_progress ?? 0),
    deltas.map((d) => d.completed ?? 0),
    deltas.map((d) => d.failed ?? 0),
    deltas.map((d) => d.cancelled ?? 0),
    events.map(({ w }) => w.accountId),
    events.map(({ w }) => w.callId),
    events.map(({ e }) => e.from),
    events.map(({ e }) => e.to),
    events.map(({ e }) => (e.detail ? JSON.stringify(e.detail) : null)),
    events.map(({ e }) => e.at.toISOString()),
    recordings.map((w) => w.callId),
    recordings.map((w) => w.accountId),
    recordings.map((w) => w.recording!.contentType),
    recordings.map((w) => ('data' in w.recording! ? Buffer.from(w.recording.data).toString('base64') : null)),
    recordings.map((w) => ('sourceUrl' in w.recording! ? w.recording.sourceUrl : null)),
    col((w) => iso(w.set.nextAttemptAt)),
    col((w) => iso(w.set.windowClosesAt)),
    col((w) => orNull(w.set.waitReason)),
    audits.map(({ w }) => w.accountId),
    audits.map(({ w }) => w.batchId),
    audits.map(({ w }) => w.callId),
    audits.map(({ a }) => a.attempt),
    audits.map(({ a }) => a.number),
    audits.map(({ a }) => a.alternate),
    audits.map(({ a }) => a.dialledAt.toISOString()),
    audits.map(({ a }) => a.allowedBy),
    // Zone names hold no comma (IANA names); string_to_array splits them back.
    audits.map(({ a }) => a.zones.join(',')),
    audits.map(({ a }) => iso(a.closesAt)),
    audits.map(({ a }) =>
      JSON.stringify({ local_times: a.localTimes, windows: a.windows, rules: a.rules, rules_version: a.rulesVersion, lists: a.lists }),
    ),
  ];
}

export async function applyCallWritesTx(tx: SqlTx, deps: WebhookDeps, writes: CallWrite[], now: Date): Promise<ApplyCallWritesResult> {
  if (writes.length === 0) return { applied: new Set(), finishedBatches: [] };
  const batchIds = [...new Set(writes.map((w) => w.batchId))].sort();
  // Several batches: locked up front in id order (as claims and operator operations lock them), so
  // two such groups can never each hold a batch the other waits for.
  if (batchIds.length > 1) await tx.query('SELECT id FROM batches WHERE id = ANY($1::text[]) ORDER BY id FOR NO KEY UPDATE', [batchIds]);
  const rows = await tx.query<{ kind: 'call' | 'batch'; id: string }>(APPLY_SQL, applyParams(writes, now));
  const applied = new Set(rows.filter((r) => r.kind === 'call').map((r) => r.id));
  await addOptOuts(
    tx,
    writes.filter((w) => w.optOut && applied.has(w.callId)).map((w) => w.callId),
    now,
  );
  await enqueueCallWriteWebhooks(tx, deps, writes, applied, now);
  const drained = rows.filter((r) => r.kind === 'batch').map((r) => r.id);
  const finishedBatches = drained.length > 0 ? await closeFinishedBatches(tx, drained.sort(), now) : [];
  return { applied, finishedBatches };
}

/**
 * Applies a group of writes. The common group (one batch, known to have no callback_url: every
 * write says `webhooks: false`, no opt-out) needs no outbox and no up-front lock, so it is one
 * autocommit statement; otherwise the statement, the locks, the webhooks and the opt-outs share a
 * transaction.
 */
export async function applyCallWrites(deps: Pick<AppDeps, 'db'> & WebhookDeps, writes: CallWrite[], now: Date): Promise<ApplyCallWritesResult> {
  if (writes.length === 0) return { applied: new Set(), finishedBatches: [] };
  const oneBatch = writes.every((w) => w.batchId === writes[0].batchId);
  if (oneBatch && writes.every((w) => w.webhooks === false && !w.optOut)) {
    const tx = autocommit(deps.db);
    const rows = await tx.query<{ kind: 'call' | 'batch'; id: string }>(APPLY_SQL, applyParams(writes, now));
    const applied = new Set(rows.filter((r) => r.kind === 'call').map((r) => r.id));
    const drained = rows.filter((r) => r.kind === 'batch').map((r) => r.id);
    // Its own transaction (batch.completed webhook); if this process dies first, the sweep closes it.
    const finishedBatches = drained.length > 0 ? await sweepBatches(deps, drained.sort(), now) : [];
    return { applied, finishedBatches };
  }
  return withSqlTransaction(deps.db, (tx) => applyCallWritesTx(tx, deps, writes, now));
}

const sweepBatches = (deps: Pick<AppDeps, 'db'>, ids: string[], now: Date) => withSqlTransaction(deps.db, (tx) => closeFinishedBatches(tx, ids, now));
