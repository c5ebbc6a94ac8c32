// Live progress for one API process. Writers (API, any worker process) never talk to this hub:
// database triggers NOTIFY `batch_changed` / `calls_changed` at commit (migration
// 20261122033735_live_progress) and the process's one LISTEN session hands the notifications here.
//
// Per watched batch there is one channel that reads the batch row at most once per tick, whatever
// the number of notifications or subscribers, and broadcasts the row to every subscriber of the
// batch (and to the account's batch streams). Reads of one batch never overlap, so what
// subscribers receive never goes back in time; the counters come from one row read by one
// statement, so they always satisfy the sum rule.
//
// Calls are found by `updated_at`: a read takes the calls of the batch updated since a cursor and
// emits those whose status/results signature differs from the last one seen. Writers stamp
// updated_at with their own clock before they commit, so a row can become visible with a stamp a
// little older than one already read: the cursor trails the newest stamp by `callOverlapMs` and the
// signatures seen in that window suppress repeats.
//
// A new call subscriber first gets the latest state of the calls that changed shortly before it
// joined: a client that read a page of calls and then subscribed cannot miss a change that landed
// between the two (it may see a state it already has; every value is a call's whole latest state).
import type { Logger } from 'pino';
import type { Database } from '../db/client.ts';
import { batchNotFound } from '../errors.ts';
import { createListener, type Channel, type Listener } from './listener.ts';
import { LatestByKeyQueue } from './queue.ts';
import { SerialReader } from './serial-reader.ts';
import { runStatement } from '../db/sql-statement.ts';

export interface BatchSnapshot {
  id: string;
  accountId: string;
  status: string;
  startMode: string;
  agentId: string;
  totalContacts: number;
  acceptedContacts: number;
  rejectedContacts: number;
  queued: number;
  inProgress: number;
  completed: number;
  failed: number;
  cancelled: number;
  callbacks: number;
  createdAt: Date;
  startedAt: Date | null;
  completedAt: Date | null;
  /** Stamped by the writer of the last change. */
  updatedAt: Date;
}

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
}

/** The subject of a subscription: the API key's account. */
export interface Subscriber {
  id: string;
}

export interface EventHubOptions {
  /** Most one read per batch (and one per batch's calls) per this many ms. */
  tickMs?: number;
  /** How far behind the newest updated_at seen the call cursor stays. */
  callOverlapMs?: number;
  /** An unwatched channel is dropped after this long. */
  idleMs?: number;
}

export interface EventHubStats {
  channels: number;
  progressSubscribers: number;
  callSubscribers: number;
  accountSubscribers: number;
  notifications: number;
  batchReads: number;
  callReads: number;
}

const BATCH_SQL = `
SELECT id, account_id, status, start_mode, agent_id, total_contacts, accepted_contacts, rejected_contacts,
       queued, in_progress, completed, failed, cancelled, callbacks, created_at, started_at, completed_at, updated_at
  FROM batches WHERE id = $1`;

// A call still `pending` has never changed (no call returns to it); leaving those out is what lets
// both reads use the partial (batch_id, updated_at) index, which new calls don't enter.
const CALLS_TOP_SQL = `SELECT max(updated_at) AS top FROM calls WHERE batch_id = $1 AND status <> 'pending'`;

const CALL_SIGNATURES_SQL = `
SELECT id, status, transcript_status, recording_available, updated_at
  FROM calls WHERE batch_id = $1 AND status <> 'pending' AND updated_at >= $2::timestamptz`;

const CALL_COLUMNS = `id, batch_id, account_id, seq, external_id, name, COALESCE(dialed_number, phone_number) AS phone_number,
       status, transcript_status, duration_seconds, answer_duration_seconds, "timestamp", created_at, completed_at,
       updated_at, hangup_by, disconnect_reason, summary, outcomes, recording_available, llm_transcript`;

const CALL_ROWS_SQL = `
SELECT ${CALL_COLUMNS}
  FROM calls WHERE batch_id = $1 AND id = ANY($2::text[])
 ORDER BY updated_at, seq`;

/** What a joining call subscriber is sent first: how far back, and at most how many calls. */
export const CALL_REPLAY_WINDOW_MS = 30_000;
export const CALL_REPLAY_MAX = 1_000;

const CALL_RECENT_SQL = `
SELECT ${CALL_COLUMNS}
  FROM calls WHERE batch_id = $1 AND status <> 'pending' AND updated_at >= $2::timestamptz
 ORDER BY updated_at DESC, seq DESC LIMIT $3`;

interface BatchRow {
  id: string;
  account_id: string;
  status: string;
  start_mode: string;
  agent_id: string;
  total_contacts: number;
  accepted_contacts: number;
  rejected_contacts: number;
  queued: number;
  in_progress: number;
  completed: number;
  failed: number;
  cancelled: number;
  callbacks: number;
  created_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
  updated_at: Date;
}

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
}

const asDate = (v: Date | string): Date => (v instanceof Date ? v : new Date(v));
const asDateOrNull = (v: Date | string | null): Date | null => (v == null ? null : asDate(v));

function toBatchSnapshot(r: BatchRow): BatchSnapshot {
  return {
    id: r.id,
    accountId: r.account_id,
    status: r.status,
    startMode: r.start_mode,
    agentId: r.agent_id,
    totalContacts: r.total_contacts,
    acceptedContacts: r.accepted_contacts,
    rejectedContacts: r.rejected_contacts,
    queued: r.queued,
    inProgress: r.in_progress,
    completed: r.completed,
    failed: r.failed,
    cancelled: r.cancelled,
    callbacks: r.callbacks,
    createdAt: asDate(r.created_at),
    startedAt: asDateOrNull(r.started_at),
    completedAt: asDateOrNull(r.completed_at),
    updatedAt: asDate(r.updated_at),
  };
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
  };
}

/** What a subscriber can see change: status, counters and the start/end stamps. */
function sameProgress(a: BatchSnapshot, b: BatchSnapshot): boolean {
  return (
    a.status === b.status &&
    a.queued === b.queued &&
    a.inProgress === b.inProgress &&
    a.completed === b.completed &&
    a.failed === b.failed &&
    a.cancelled === b.cancelled &&
    a.callbacks === b.callbacks &&
    a.startedAt?.getTime() === b.startedAt?.getTime() &&
    a.completedAt?.getTime() === b.completedAt?.getTime()
  );
}

const signature = (r: SignatureRow) => `${r.status}|${r.transcript_status ?? ''}|${r.recording_available ?? ''}`;

/** The calls of one batch, followed while someone subscribes to them. */
class CallTracker {
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
    private readonly hub: EventHub,
    private readonly batchId: string,
    private readonly overlapMs: number,
    tickMs: number,
    onError: (e: unknown) => void,
  ) {
    this.reader = new SerialReader(tickMs, () => this.read(), onError);
  }

  private async read(): Promise<void> {
    this.hub.counters.callReads++;
    if (this.primed) await this.emitChanges();
    else await this.prime();
    if (this.joining.size > 0) await this.replay();
    this.advance();
  }

  /** Changes before the first subscriber are history, not news: remembered, not emitted (joiners get the replay). */
  private async prime(): Promise<void> {
    const db = this.hub.db;
    const [top] = await runStatement<{ top: Date | string | null }>(db, CALLS_TOP_SQL, [this.batchId]);
    this.newest = top?.top ? asDate(top.top).getTime() : 0;
    this.cursor = Math.max(0, this.newest - this.overlapMs);
    const rows = await runStatement<SignatureRow>(db, CALL_SIGNATURES_SQL, [this.batchId, new Date(this.cursor).toISOString()]);
    for (const r of rows) this.see(r.id, signature(r), asDate(r.updated_at).getTime());
    this.primed = true;
  }

  private async emitChanges(): Promise<void> {
    const db = this.hub.db;
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
    const rows = await runStatement<CallRow>(this.hub.db, CALL_RECENT_SQL, [this.batchId, since, CALL_REPLAY_MAX]);
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
    for (const q of [...this.subs]) q.close();
  }
}

/** One watched batch. */
class BatchChannel {
  /** undefined: never read; null: no such batch. */
  snapshot: BatchSnapshot | null | undefined;
  readonly progress = new Set<LatestByKeyQueue<BatchSnapshot>>();
  calls: CallTracker | undefined;
  /** Subscriptions holding (or opening) this channel. */
  refs = 0;
  lastUsed = Date.now();
  readonly reader: SerialReader;

  constructor(
    private readonly hub: EventHub,
    readonly batchId: string,
    tickMs: number,
    onError: (e: unknown) => void,
  ) {
    this.reader = new SerialReader(tickMs, () => this.read(), onError);
  }

  private async read(): Promise<void> {
    this.hub.counters.batchReads++;
    const [row] = await runStatement<BatchRow>(this.hub.db, BATCH_SQL, [this.batchId]);
    const next = row ? toBatchSnapshot(row) : null;
    const prev = this.snapshot;
    this.snapshot = next;
    if (!next || (prev && sameProgress(prev, next))) return;
    for (const q of this.progress) q.push(next);
    this.hub.toAccount(next);
  }

  close(): void {
    this.reader.close();
    this.calls?.close();
    for (const q of [...this.progress]) q.close();
  }
}

export class EventHub {
  readonly ready: Promise<void>;
  readonly counters = { notifications: 0, batchReads: 0, callReads: 0 };
  private readonly channels = new Map<string, BatchChannel>();
  private readonly accountSubs = new Map<string, Set<LatestByKeyQueue<BatchSnapshot>>>();
  private readonly listener: Listener;
  private readonly sweepTimer: NodeJS.Timeout;
  private readonly tickMs: number;
  private readonly overlapMs: number;
  private readonly idleMs: number;
  private closed = false;

  constructor(
    readonly db: Database,
    private readonly logger: Logger,
    opts: EventHubOptions = {},
  ) {
    // One read per batch per 50 ms at most: ~10-20 values a second reach a client of a busy batch
    // (bench/subscriptions: p99 219-239 ms with 1,000 subscribers, against 176-282 ms at 100 ms).
    this.tickMs = opts.tickMs ?? 50;
    this.overlapMs = opts.callOverlapMs ?? 5_000;
    this.idleMs = opts.idleMs ?? 30_000;
    this.listener = createListener(db, logger, {
      notify: (channel, payload) => this.onNotify(channel, payload),
      resync: () => this.resync(),
    });
    this.ready = this.listener.start();
    this.sweepTimer = setInterval(() => this.sweep(), Math.max(1000, this.idleMs / 2));
    this.sweepTimer.unref();
  }

  /** The batch's progress now, then whenever its status or a counter changes. */
  async batchProgress(account: Subscriber, batchId: string): Promise<AsyncIterableIterator<BatchSnapshot>> {
    const ch = await this.open(account, batchId);
    const q = new LatestByKeyQueue<BatchSnapshot>(
      () => 'progress',
      () => {
        ch.progress.delete(q);
        this.unref(ch);
      },
    );
    q.push(ch.snapshot!);
    ch.progress.add(q);
    return q;
  }

  /** The calls of the batch that changed just before (see CALL_REPLAY_*), then each call whose status or results change (its latest state). */
  async callUpdates(account: Subscriber, batchId: string): Promise<AsyncIterableIterator<CallSnapshot>> {
    const ch = await this.open(account, batchId);
    const tracker = (ch.calls ??= new CallTracker(this, batchId, this.overlapMs, this.tickMs, (e) => this.readFailed(e, batchId)));
    tracker.refs++;
    const release = () => {
      if (--tracker.refs === 0 && ch.calls === tracker) {
        tracker.close();
        ch.calls = undefined;
      }
      this.unref(ch);
    };
    const q = new LatestByKeyQueue<CallSnapshot>(
      (c) => c.id,
      () => {
        tracker.subs.delete(q);
        tracker.joining.delete(q);
        release();
      },
    );
    tracker.joining.add(q);
    try {
      await tracker.reader.fresh();
    } catch (e) {
      q.close();
      throw e;
    }
    return q;
  }

  /** Every batch of the account whose status or counters change (and every batch created) from now on. */
  async accountBatches(account: Subscriber): Promise<AsyncIterableIterator<BatchSnapshot>> {
    await this.ready;
    let set = this.accountSubs.get(account.id);
    if (!set) this.accountSubs.set(account.id, (set = new Set()));
    const subs = set;
    const q = new LatestByKeyQueue<BatchSnapshot>(
      (b) => b.id,
      () => {
        subs.delete(q);
        if (subs.size === 0 && this.accountSubs.get(account.id) === subs) this.accountSubs.delete(account.id);
      },
    );
    subs.add(q);
    return q;
  }

  stats(): EventHubStats {
    let progressSubscribers = 0;
    let callSubscribers = 0;
    for (const ch of this.channels.values()) {
      progressSubscribers += ch.progress.size;
      callSubscribers += ch.calls?.subs.size ?? 0;
    }
    let accountSubscribers = 0;
    for (const s of this.accountSubs.values()) accountSubscribers += s.size;
    return { channels: this.channels.size, progressSubscribers, callSubscribers, accountSubscribers, ...this.counters };
  }

  /** Ends every subscription (they complete) and the LISTEN session. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.sweepTimer);
    for (const ch of [...this.channels.values()]) ch.close();
    this.channels.clear();
    for (const set of [...this.accountSubs.values()]) for (const q of [...set]) q.close();
    this.accountSubs.clear();
    await this.listener.stop();
  }

  /** @internal Broadcast of a batch change to the account's batch streams. */
  toAccount(snapshot: BatchSnapshot): void {
    const set = this.accountSubs.get(snapshot.accountId);
    if (set) for (const q of set) q.push(snapshot);
  }

  /** A channel on a batch the subscriber's account owns; a missing or foreign batch is NOT_FOUND. */
  private async open(account: Subscriber, batchId: string): Promise<BatchChannel> {
    await this.ready;
    if (this.closed) throw new Error('event hub closed');
    const ch = this.channel(batchId);
    ch.refs++;
    try {
      // A live channel's snapshot is current: every change since it was read has a notification
      // on its way, and the read it triggers reaches this subscriber too.
      if (ch.snapshot === undefined || ch.snapshot === null) await ch.reader.fresh();
      if (!ch.snapshot || ch.snapshot.accountId !== account.id) throw batchNotFound();
      return ch;
    } catch (e) {
      this.unref(ch);
      if (ch.refs === 0 && !ch.snapshot) this.drop(ch);
      throw e;
    }
  }

  private channel(batchId: string): BatchChannel {
    let ch = this.channels.get(batchId);
    if (!ch) {
      ch = new BatchChannel(this, batchId, this.tickMs, (e) => this.readFailed(e, batchId));
      this.channels.set(batchId, ch);
    }
    return ch;
  }

  private unref(ch: BatchChannel): void {
    ch.refs--;
    ch.lastUsed = Date.now();
  }

  private drop(ch: BatchChannel): void {
    if (this.channels.get(ch.batchId) === ch) this.channels.delete(ch.batchId);
    ch.close();
  }

  private onNotify(channel: Channel, payload: string): void {
    if (this.closed) return;
    this.counters.notifications++;
    let msg: { batch_id?: unknown; account_id?: unknown };
    try {
      msg = JSON.parse(payload);
    } catch {
      return;
    }
    if (typeof msg.batch_id !== 'string') return;
    if (channel === 'batch_changed') {
      let ch = this.channels.get(msg.batch_id);
      // Batches nobody watches by id are read only for an account whose batch list is open.
      if (!ch && typeof msg.account_id === 'string' && this.accountSubs.has(msg.account_id)) ch = this.channel(msg.batch_id);
      if (!ch) return;
      ch.lastUsed = Date.now();
      ch.reader.request();
    } else {
      this.channels.get(msg.batch_id)?.calls?.reader.request();
    }
  }

  /** After the LISTEN session was re-established: whatever changed meanwhile went unannounced. */
  private resync(): void {
    for (const ch of this.channels.values()) {
      ch.reader.request();
      ch.calls?.reader.request();
    }
  }

  private readFailed(err: unknown, batchId: string): void {
    if (this.closed) return;
    this.logger.warn({ err, batchId }, 'live progress read failed');
  }

  private sweep(): void {
    const now = Date.now();
    for (const ch of this.channels.values()) {
      if (ch.refs > 0 || !ch.reader.idle || now - ch.lastUsed < this.idleMs) continue;
      if (ch.snapshot && this.accountSubs.has(ch.snapshot.accountId)) continue;
      this.drop(ch);
    }
  }
}
