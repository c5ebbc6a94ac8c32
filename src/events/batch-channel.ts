// One watched batch in one API process. Its progress arrives with each change's notification
// (migration progress_in_notification) and is read from the database only when a channel opens or
// the LISTEN session was re-established. Values are numbered by `progress_seq` in commit order, so
// an older one reaching the channel late is dropped and subscribers never go back in time; each is
// one row as one statement left it, so it satisfies the sum rule. What changed is sent to every
// subscriber of the batch (and the account's batch streams) at most once per interval, the
// interval stretched to keep fan-outs from using more than half of a processor.
import type { Database } from '../db/client.ts';
import { runStatement } from '../db/sql-statement.ts';
import type { CallTracker } from './call-tracker.ts';
import type { LatestByKeyQueue } from './queue.ts';
import { SerialReader } from './serial-reader.ts';
import { asDate, asDateOrNull } from './row-dates.ts';
import { isBatchStatus, isBatchTerminal } from '../domain/batch-state.ts';

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
  /** Grows with every change of what a subscriber sees (commit order). */
  progressSeq: number;
}

export interface ChannelHost {
  readonly db: Database;
  readonly counters: { batchReads: number; fanOuts: number };
  /** Broadcast of a batch change to the account's batch streams. */
  toAccount(snapshot: BatchSnapshot): void;
  /** A value reached every subscriber's socket: how long the hub had it before the fan-out (wait) and how long the fan-out took, in ms. */
  fannedOut(waitMs: number, fanOutMs: number): void;
}

const BATCH_SQL = `
SELECT id, account_id, status, start_mode, agent_id, total_contacts, accepted_contacts, rejected_contacts,
       queued, in_progress, completed, failed, cancelled, callbacks, created_at, started_at, completed_at, updated_at, progress_seq
  FROM batches WHERE id = $1`;

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
  progress_seq: number;
}

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
    progressSeq: r.progress_seq,
  };
}

const NUMBER_FIELDS = [
  'progress_seq',
  'total_contacts',
  'accepted_contacts',
  'rejected_contacts',
  'queued',
  'in_progress',
  'completed',
  'failed',
  'cancelled',
  'callbacks',
] as const;
const TEXT_FIELDS = ['batch_id', 'account_id', 'status', 'start_mode', 'agent_id', 'created_at', 'updated_at'] as const;
const OPTIONAL_TEXT_FIELDS = ['started_at', 'completed_at'] as const;

/**
 * The progress a `batch_changed` payload carries (notify_batch_changed), or undefined for one that
 * carries none, as a trigger older than progress_in_notification sends: the channel reads instead.
 */
export function progressOfNotification(msg: Record<string, unknown>): BatchSnapshot | undefined {
  if (!NUMBER_FIELDS.every((k) => Number.isSafeInteger(msg[k]))) return undefined;
  if (!TEXT_FIELDS.every((k) => typeof msg[k] === 'string')) return undefined;
  if (!OPTIONAL_TEXT_FIELDS.every((k) => msg[k] === null || typeof msg[k] === 'string')) return undefined;
  return toBatchSnapshot({ ...(msg as unknown as BatchRow), id: msg.batch_id as string });
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

/**
 * Whether no change can follow this snapshot: a terminal status (completed, cancelled) with every
 * call ended. A cancel commits while calls are still in flight; their ends move the counters after.
 */
export function isFinalSnapshot(s: BatchSnapshot): boolean {
  const ended = s.queued === 0 && s.inProgress === 0 && s.completed + s.failed + s.cancelled >= s.acceptedContacts;
  return ended && isBatchStatus(s.status) && isBatchTerminal(s.status);
}

/**
 * A fan-out may use the processor for at most this share of the time between two fan-outs of the
 * batch. Its processor time, not its wall time: on a busy machine the wall time also counts other
 * processes' turns, and stretching by it put the p99 of 1,000 watchers past 250 ms.
 */
const FANOUT_SHARE = 0.5;

/** One watched batch. */
export class BatchChannel {
  /** The newest value known. undefined: never read; null: no such batch. */
  snapshot: BatchSnapshot | null | undefined;
  readonly progress = new Set<LatestByKeyQueue<BatchSnapshot>>();
  calls: CallTracker | undefined;
  /** Subscriptions holding (or opening) this channel. */
  refs = 0;
  lastUsed = Date.now();
  /** Reads the row: when the channel opens, and after the LISTEN session was re-established. */
  readonly reader: SerialReader;
  private readonly publisher: SerialReader;
  /** The value last sent to subscribers. */
  private sent: BatchSnapshot | undefined;
  /** When the hub got the newest value (performance.now()). */
  private snapshotAt = 0;
  private lastFanOutCpuMs = 0;

  constructor(
    private readonly host: ChannelHost,
    readonly batchId: string,
    intervalMs: () => number,
    onError: (e: unknown) => void,
  ) {
    this.reader = new SerialReader(intervalMs, () => this.read(), onError);
    this.publisher = new SerialReader(
      () => Math.max(intervalMs(), this.lastFanOutCpuMs / FANOUT_SHARE),
      () => this.publish(),
      onError,
    );
  }

  get idle(): boolean {
    return this.reader.idle && this.publisher.idle;
  }

  /** What a new subscriber starts from: the value the others have; none while the first is on its way to them. */
  get current(): BatchSnapshot | undefined {
    return this.sent;
  }

  /** A value from a notification or a read: kept if newer than the newest known, and sent on. */
  offer(next: BatchSnapshot | null): void {
    const prev = this.snapshot;
    if (next && prev && next.progressSeq <= prev.progressSeq) return;
    this.snapshot = next;
    this.snapshotAt = performance.now();
    if (!next || (this.sent && sameProgress(this.sent, next))) return;
    this.publisher.request();
  }

  private async read(): Promise<void> {
    this.host.counters.batchReads++;
    const [row] = await runStatement<BatchRow>(this.host.db, BATCH_SQL, [this.batchId]);
    this.offer(row ? toBatchSnapshot(row) : null);
  }

  /** Resolves once every subscriber's consumer has taken the value (the socket writes included). */
  private publish(): Promise<void> {
    const next = this.snapshot;
    if (!next || (this.sent && sameProgress(this.sent, next))) return Promise.resolve();
    const started = performance.now();
    const cpu = process.cpuUsage();
    const waited = started - this.snapshotAt;
    this.sent = next;
    this.host.counters.fanOuts++;
    const final = isFinalSnapshot(next);
    for (const q of [...this.progress]) {
      q.push(next);
      if (final) q.end();
    }
    this.host.toAccount(next);
    // Consumers run on the microtask queue; a macrotask runs once they all have.
    return new Promise((resolve) =>
      setImmediate(() => {
        const used = process.cpuUsage(cpu);
        this.lastFanOutCpuMs = (used.user + used.system) / 1000;
        this.host.fannedOut(waited, performance.now() - started);
        resolve();
      }),
    );
  }

  close(): void {
    this.reader.close();
    this.publisher.close();
    this.calls?.close();
    for (const q of [...this.progress]) q.close();
  }
}
