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
import { loadNamedSql } from '../../db/named-sql.ts';
import { addDidStats, type DidAttemptStat } from '../number-health/did-stats.ts';
import { giveBackCallerIdDials, type CallerIdReturn } from './caller-id-returns.ts';

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
  /** The provider that placed the current dial (calls.provider), written with providerCallId. */
  provider?: string;
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
  /** The attempt reached voicemail: whether it left the batch's message. */
  voicemailLeft?: boolean;
  /** The caller-ID number the dial was placed from (docs/campaigns.md "Caller-ID pools and local presence"). */
  fromNumber?: string;
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
  /**
   * Attempts this write ends, for their caller-ID numbers' health (did_daily_stats): added in the
   * same transaction, only when the write applies.
   */
  didStats?: DidAttemptStat[];
  /**
   * Caller-ID dials counted at the choice but not placed (caller-id-returns.ts): given back in the
   * same transaction, only when the write applies.
   */
  callerIdReturns?: CallerIdReturn[];
}

export interface ApplyCallWritesResult {
  /** Calls whose write applied; the others had moved on (lease lost, status changed). */
  applied: Set<string>;
  /** Batches whose last non-terminal call ended in this transaction. */
  finishedBatches: { id: string; status: string; completedAt: Date }[];
}

const APPLY = loadNamedSql(new URL('./apply-call-writes.sql', import.meta.url), [
  'now',
  'call_ids',
  'owners',
  'expired_before',
  'from_statuses',
  'to_statuses',
  'releases',
  'attempt_increments',
  'dialed_numbers',
  'used_alternates',
  'provider_call_ids',
  'timestamps',
  'completed_ats',
  'hangup_bys',
  'disconnect_reasons',
  'durations',
  'answer_durations',
  'llm_transcripts',
  'transcript_statuses',
  'summaries',
  'outcomes',
  'recording_availables',
  'voicemail_lefts',
  'from_numbers',
  'delta_queued',
  'delta_in_progress',
  'delta_completed',
  'delta_failed',
  'delta_cancelled',
  'event_account_ids',
  'event_call_ids',
  'event_froms',
  'event_tos',
  'event_details',
  'event_ats',
  'recording_call_ids',
  'recording_account_ids',
  'recording_content_types',
  'recording_data',
  'recording_source_urls',
  'next_attempt_ats',
  'window_closes_ats',
  'wait_reasons',
  'providers',
  'audit_account_ids',
  'audit_batch_ids',
  'audit_call_ids',
  'audit_attempts',
  'audit_numbers',
  'audit_alternates',
  'audit_dialled_ats',
  'audit_allowed_bys',
  'audit_zones',
  'audit_closes_ats',
  'audit_details',
]);

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
  return APPLY.params({
    now: now.toISOString(),
    call_ids: col((w) => w.callId),
    owners: col((w) => w.owner),
    expired_before: col((w) => iso(w.leaseExpiredBefore)),
    from_statuses: col((w) => w.from),
    to_statuses: col((w) => w.to),
    releases: col((w) => !!w.releaseLease),
    attempt_increments: col((w) => w.set.attemptsIncrement ?? 0),
    dialed_numbers: col((w) => orNull(w.set.dialedNumber)),
    used_alternates: col((w) => orNull(w.set.usedAlternate)),
    provider_call_ids: col((w) => truncateText(w.set.providerCallId, MAX_PROVIDER_TEXT_LENGTH)),
    providers: col((w) => truncateText(w.set.provider, MAX_PROVIDER_TEXT_LENGTH)),
    timestamps: col((w) => iso(w.set.timestamp)),
    completed_ats: col((w) => iso(w.set.completedAt)),
    hangup_bys: col((w) => truncateText(w.set.hangupBy, MAX_PROVIDER_TEXT_LENGTH)),
    disconnect_reasons: col((w) => truncateText(w.set.disconnectReason, MAX_PROVIDER_TEXT_LENGTH)),
    durations: col((w) => orNull(w.set.durationSeconds)),
    answer_durations: col((w) => orNull(w.set.answerDurationSeconds)),
    llm_transcripts: col((w) => truncateText(w.set.llmTranscript, MAX_TRANSCRIPT_LENGTH)),
    transcript_statuses: col((w) => orNull(w.set.transcriptStatus)),
    summaries: col((w) => truncateText(w.set.summary, MAX_SUMMARY_LENGTH)),
    outcomes: col((w) => (w.set.outcomes === undefined ? null : JSON.stringify(boundOutcomes(w.set.outcomes)))),
    recording_availables: col((w) => orNull(w.set.recordingAvailable)),
    voicemail_lefts: col((w) => orNull(w.set.voicemailLeft)),
    from_numbers: col((w) => orNull(w.set.fromNumber)),
    delta_queued: deltas.map((d) => d.queued ?? 0),
    delta_in_progress: deltas.map((d) => d.in_progress ?? 0),
    delta_completed: deltas.map((d) => d.completed ?? 0),
    delta_failed: deltas.map((d) => d.failed ?? 0),
    delta_cancelled: deltas.map((d) => d.cancelled ?? 0),
    event_account_ids: events.map(({ w }) => w.accountId),
    event_call_ids: events.map(({ w }) => w.callId),
    event_froms: events.map(({ e }) => e.from),
    event_tos: events.map(({ e }) => e.to),
    event_details: events.map(({ e }) => (e.detail ? JSON.stringify(e.detail) : null)),
    event_ats: events.map(({ e }) => e.at.toISOString()),
    recording_call_ids: recordings.map((w) => w.callId),
    recording_account_ids: recordings.map((w) => w.accountId),
    recording_content_types: recordings.map((w) => w.recording!.contentType),
    recording_data: recordings.map((w) => ('data' in w.recording! ? Buffer.from(w.recording.data).toString('base64') : null)),
    recording_source_urls: recordings.map((w) => ('sourceUrl' in w.recording! ? w.recording.sourceUrl : null)),
    next_attempt_ats: col((w) => iso(w.set.nextAttemptAt)),
    window_closes_ats: col((w) => iso(w.set.windowClosesAt)),
    wait_reasons: col((w) => orNull(w.set.waitReason)),
    audit_account_ids: audits.map(({ w }) => w.accountId),
    audit_batch_ids: audits.map(({ w }) => w.batchId),
    audit_call_ids: audits.map(({ w }) => w.callId),
    audit_attempts: audits.map(({ a }) => a.attempt),
    audit_numbers: audits.map(({ a }) => a.number),
    audit_alternates: audits.map(({ a }) => a.alternate),
    audit_dialled_ats: audits.map(({ a }) => a.dialledAt.toISOString()),
    audit_allowed_bys: audits.map(({ a }) => a.allowedBy),
    // Zone names hold no comma (IANA names); string_to_array splits them back.
    audit_zones: audits.map(({ a }) => a.zones.join(',')),
    audit_closes_ats: audits.map(({ a }) => iso(a.closesAt)),
    audit_details: audits.map(({ a }) =>
      JSON.stringify({ local_times: a.localTimes, windows: a.windows, rules: a.rules, rules_version: a.rulesVersion, lists: a.lists }),
    ),
  });
}

export async function applyCallWritesTx(tx: SqlTx, deps: WebhookDeps, writes: CallWrite[], now: Date): Promise<ApplyCallWritesResult> {
  if (writes.length === 0) return { applied: new Set(), finishedBatches: [] };
  const batchIds = [...new Set(writes.map((w) => w.batchId))].sort();
  // Several batches: locked up front in id order (as claims and operator operations lock them), so
  // two such groups can never each hold a batch the other waits for.
  if (batchIds.length > 1) await tx.query('SELECT id FROM batches WHERE id = ANY($1::text[]) ORDER BY id FOR NO KEY UPDATE', [batchIds]);
  const rows = await tx.query<{ kind: 'call' | 'batch'; id: string }>(APPLY.text, applyParams(writes, now));
  const applied = new Set(rows.filter((r) => r.kind === 'call').map((r) => r.id));
  await addOptOuts(
    tx,
    writes.filter((w) => w.optOut && applied.has(w.callId)).map((w) => w.callId),
    now,
  );
  await enqueueCallWriteWebhooks(tx, deps, writes, applied, now);
  const drained = rows.filter((r) => r.kind === 'batch').map((r) => r.id);
  const finishedBatches = drained.length > 0 ? await closeFinishedBatches(tx, drained.sort(), now) : [];
  // Last: the stats rows are locked after every call and batch row (no lock cycle with other writers).
  await addDidStats(tx, writes, applied);
  await giveBackCallerIdDials(tx, writes, applied);
  return { applied, finishedBatches };
}

/**
 * Applies a group of writes. The common group (one batch, known to have no callback_url: every
 * write says `webhooks: false`, no opt-out, no attempt ended, no caller-ID count given back) needs
 * no outbox and no up-front lock, so it is one autocommit statement; otherwise the statement, the
 * locks, the webhooks and the opt-outs share a transaction.
 */
export async function applyCallWrites(deps: Pick<AppDeps, 'db'> & WebhookDeps, writes: CallWrite[], now: Date): Promise<ApplyCallWritesResult> {
  if (writes.length === 0) return { applied: new Set(), finishedBatches: [] };
  const oneBatch = writes.every((w) => w.batchId === writes[0].batchId);
  if (oneBatch && writes.every((w) => w.webhooks === false && !w.optOut && !w.didStats?.length && !w.callerIdReturns?.length)) {
    const tx = autocommit(deps.db);
    const rows = await tx.query<{ kind: 'call' | 'batch'; id: string }>(APPLY.text, applyParams(writes, now));
    const applied = new Set(rows.filter((r) => r.kind === 'call').map((r) => r.id));
    const drained = rows.filter((r) => r.kind === 'batch').map((r) => r.id);
    // Its own transaction (batch.completed webhook); if this process dies first, the sweep closes it.
    const finishedBatches = drained.length > 0 ? await sweepBatches(deps, drained.sort(), now) : [];
    return { applied, finishedBatches };
  }
  return withSqlTransaction(deps.db, (tx) => applyCallWritesTx(tx, deps, writes, now));
}

const sweepBatches = (deps: Pick<AppDeps, 'db'>, ids: string[], now: Date) => withSqlTransaction(deps.db, (tx) => closeFinishedBatches(tx, ids, now));
