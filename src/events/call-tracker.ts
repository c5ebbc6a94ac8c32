// The calls of one watched batch, for the callUpdated subscribers of one API process.
//
// Calls are found by `updated_at`: a read takes the calls of the batch updated since a cursor and
// emits those whose status/results signature differs from the last one seen. Writers stamp
// updated_at with their own clock before they commit, so a row can become visible with a stamp a
// little older than one already read: the cursor trails the newest stamp by `overlapMs` and the
// signatures seen in that window suppress repeats.
//
// A new subscriber first gets the latest state of the calls that changed shortly before it
// joined: a client that read a page of calls and then subscribed cannot miss a change that landed
// between the two (it may see a state it already has; every value is a call's whole latest state).
import { waitReasonOf, type WaitReason } from '../domain/wait-reason.ts';
import type { Database } from '../db/client.ts';
import { runStatement } from '../db/sql-statement.ts';
import type { LatestByKeyQueue } from './queue.ts';
import { SerialReader } from './serial-reader.ts';
import { asDate, asDateOrNull } from './row-dates.ts';
import { retryReason } from '../domain/call-attempts.ts';

export interface CallSnapshot {
  id: string;
  batchId: string;
  accountId: string;
  seq: number;
  externalId: string;
  name: string | null;
  phoneNumber: string;
  status: string;
  transcriptStatus: string | null;
  durationSeconds: number | null;
  answerDurationSeconds: number | null;
  timestamp: Date | null;
  createdAt: Date;
  completedAt: Date | null;
  updatedAt: Date;
  hangupBy: string | null;
  disconnectReason: string | null;
  summary: string | null;
  outcomes: Record<string, string> | null;
  recordingAvailable: boolean | null;
  llmTranscript: string | null;
  attemptCount: number;
  nextAttemptAt: Date | null;
  retryReason: string | null;
  timezone: string | null;
  waitReason: WaitReason | null;
}

export interface TrackerHost {
  readonly db: Database;
  readonly counters: { callReads: number };
}

// A call still `pending` has never changed (no call returns to it); leaving those out is what lets
// both reads use the partial (batch_id, updated_at) index, which new calls don't enter.
const CALLS_TOP_SQL = `SELECT max(updated_at) AS top FROM calls WHERE batch_id = $1 AND status <> 'pending'`;

const CALL_SIGNATURES_SQL = `
SELECT id, status, transcript_status, recording_available, updated_at
  FROM calls WHERE batch_id = $1 AND status <> 'pending' AND updated_at >= $2::timestamptz`;

// Why a call waits for a retry lives in its history, not its row: for a waiting call only, the
// newest entry that put it back in line, one probe of call_events (call_id, id) in the same statement.
const CALL_COLUMNS = `id, batch_id, account_id, seq, external_id, name, COALESCE(dialed_number, phone_number) AS phone_number,
       status, transcript_status, duration_seconds, answer_duration_seconds, "timestamp", created_at, completed_at,
       updated_at, hangup_by, disconnect_reason, summary, outcomes, recording_available, llm_transcript,
       attempts, next_attempt_at, timezone, wait_reason,
       CASE WHEN status = 'queued' AND next_attempt_at IS NOT NULL THEN
         (SELECT e.detail FROM call_events e
           WHERE e.call_id = calls.id AND e.detail->>'event' = 'retry_scheduled' ORDER BY e.id DESC LIMIT 1)
       END AS retry_detail`;

const CALL_ROWS_SQL = `
SELECT ${CALL_COLUMNS}
  FROM calls WHERE batch_id = $1 AND id = ANY($2::text[])
 ORDER BY updated_at, seq`;

/**
 * What a joining call subscriber is sent first: how far back, and at most how many calls — the
 * largest page of calls, so a join costs what one page read costs (joins within a tick share it).
 */
const CALL_REPLAY_WINDOW_MS = 30_000;
const CALL_REPLAY_MAX = 200;

const CALL_RECENT_SQL = `
SELECT ${CALL_COLUMNS}
  FROM calls WHERE batch_id = $1 AND status <> 'pending' AND updated_at >= $2::timestamptz
 ORDER BY updated_at DESC, seq DESC LIMIT $3`;

/** The tracker's statements, for bench/calls-indexes.ts, which EXPLAINs every read of calls. */
export const CALL_READS = { top: CALLS_TOP_SQL, signatures: CALL_SIGNATURES_SQL, rows: CALL_ROWS_SQL, recent: CALL_RECENT_SQL } as const;

interface SignatureRow {
  id: string;
  status: string;
  transcript_status: string | null;
  recording_available: boolean | null;
  updated_at: Date;
}

interface CallRow extends SignatureRow {
  batch_id: string;
  account_id: string;
  seq: number;
  external_id: string;
  name: string | null;
  phone_number: string;
  duration_seconds: number | null;
  answer_duration_seconds: number | null;
  timestamp: Date | null;
  created_at: Date;
  completed_at: Date | null;
  hangup_by: string | null;
  disconnect_reason: string | null;
  summary: string | null;
  outcomes: Record<string, string> | null;
  llm_transcript: string | null;
  attempts: number;
  next_attempt_at: Date | string | null;
  timezone: string | null;
  wait_reason: string | null;
  retry_detail: unknown;
}

function toCallSnapshot(r: CallRow): CallSnapshot {
  return {
    id: r.id,
    batchId: r.batch_id,
    accountId: r.account_id,
    seq: r.seq,
    externalId: r.external_id,
    name: r.name,
    phoneNumber: r.phone_number,
    status: r.status,
    transcriptStatus: r.transcript_status,
    durationSeconds: r.duration_seconds,
    answerDurationSeconds: r.answer_duration_seconds,
    timestamp: asDateOrNull(r.timestamp),
    createdAt: asDate(r.created_at),
    completedAt: asDateOrNull(r.completed_at),
    updatedAt: asDate(r.updated_at),
    hangupBy: r.hangup_by,
    disconnectReason: r.disconnect_reason,
    summary: r.summary,
    outcomes: r.outcomes,
    recordingAvailable: r.recording_available,
    llmTranscript: r.llm_transcript,
    attemptCount: r.attempts,
    nextAttemptAt: asDateOrNull(r.next_attempt_at),
    retryReason: r.retry_detail == null ? null : retryReason(r.retry_detail),
    timezone: r.timezone,
    waitReason: waitReasonOf({ status: r.status, waitReason: r.wait_reason, nextAttemptAt: r.next_attempt_at, timezone: r.timezone }),
  };
}

const signature = (r: SignatureRow) => `${r.status}|${r.transcript_status ?? ''}|${r.recording_available ?? ''}`;

/** The calls of one batch, followed while someone subscribes to them. */
export class CallTracker {
  readonly subs = new Set<LatestByKeyQueue<CallSnapshot>>();
  /** Subscribers waiting for their replay; the next read sends it and moves them to subs. */
  readonly joining = new Set<LatestByKeyQueue<CallSnapshot>>();
  refs = 0;
  primed = false;
  readonly reader: SerialReader;
  /** Signature and updated_at (ms) of each call seen inside the cursor window. */
  private readonly known = new Map<string, { sig: string; at: number }>();
  private newest = 0;
  private cursor = 0;

  constructor(
    private readonly host: TrackerHost,
    private readonly batchId: string,
    private readonly overlapMs: number,
    intervalMs: () => number,
    onError: (e: unknown) => void,
  ) {
    this.reader = new SerialReader(intervalMs, () => this.read(), onError);
  }

  private async read(): Promise<void> {
    this.host.counters.callReads++;
    if (this.primed) await this.emitChanges();
    else await this.prime();
    if (this.joining.size > 0) await this.replay();
    this.advance();
  }

  /** Changes before the first subscriber are history, not news: remembered, not emitted (joiners get the replay). */
  private async prime(): Promise<void> {
    const db = this.host.db;
    const [top] = await runStatement<{ top: Date | string | null }>(db, CALLS_TOP_SQL, [this.batchId]);
    this.newest = top?.top ? asDate(top.top).getTime() : 0;
    this.cursor = Math.max(0, this.newest - this.overlapMs);
    const rows = await runStatement<SignatureRow>(db, CALL_SIGNATURES_SQL, [this.batchId, new Date(this.cursor).toISOString()]);
    for (const r of rows) this.see(r.id, signature(r), asDate(r.updated_at).getTime());
    this.primed = true;
  }

  private async emitChanges(): Promise<void> {
    const db = this.host.db;
    const rows = await runStatement<SignatureRow>(db, CALL_SIGNATURES_SQL, [this.batchId, new Date(this.cursor).toISOString()]);
    const changed: string[] = [];
    for (const r of rows) {
      const at = asDate(r.updated_at).getTime();
      const prior = this.known.get(r.id);
      if (prior?.sig === signature(r)) prior.at = Math.max(prior.at, at);
      else changed.push(r.id);
      if (at > this.newest) this.newest = at;
    }
    if (changed.length > 0) {
      const full = await runStatement<CallRow>(db, CALL_ROWS_SQL, [this.batchId, changed]);
      for (const r of full) {
        const at = asDate(r.updated_at).getTime();
        if (at > this.newest) this.newest = at;
        // The full row may be newer than its signature row; remembering it avoids a repeat.
        this.see(r.id, signature(r), at);
        const snapshot = toCallSnapshot(r);
        for (const q of this.subs) q.push(snapshot);
      }
    }
  }

  /**
   * Inside the serial read, so a joiner never gets a state older than one already sent to it. The
   * rows are not remembered as seen: a change they carry that subs have not had yet still reaches
   * them on the next read.
   */
  private async replay(): Promise<void> {
    const since = new Date(Math.max(0, this.newest - CALL_REPLAY_WINDOW_MS)).toISOString();
    const rows = await runStatement<CallRow>(this.host.db, CALL_RECENT_SQL, [this.batchId, since, CALL_REPLAY_MAX]);
    const snapshots = rows.reverse().map(toCallSnapshot);
    for (const q of this.joining) {
      for (const s of snapshots) q.push(s);
      this.subs.add(q);
    }
    this.joining.clear();
  }

  private see(id: string, sig: string, at: number): void {
    this.known.set(id, { sig, at });
    if (at > this.newest) this.newest = at;
  }

  private advance(): void {
    this.cursor = Math.max(this.cursor, this.newest - this.overlapMs);
    for (const [id, k] of this.known) if (k.at < this.cursor) this.known.delete(id);
  }

  close(): void {
    this.reader.close();
    for (const q of [...this.subs, ...this.joining]) q.close();
  }
}
