// One watched batch in one API process: its row read at most once per tick, whatever the number
// of notifications or subscribers, and broadcast to every subscriber of the batch (and to the
// account's batch streams). Reads of one batch never overlap, so what subscribers receive never
// goes back in time; the counters come from one row read by one statement, so they always satisfy
// the sum rule.
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
}

export interface ChannelHost {
  readonly db: Database;
  readonly counters: { batchReads: number };
  /** Broadcast of a batch change to the account's batch streams. */
  toAccount(snapshot: BatchSnapshot): void;
}

const BATCH_SQL = `
SELECT id, account_id, status, start_mode, agent_id, total_contacts, accepted_contacts, rejected_contacts,
       queued, in_progress, completed, failed, cancelled, callbacks, created_at, started_at, completed_at, updated_at
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

/**
 * Whether no change can follow this snapshot: a terminal status (completed, cancelled) with every
 * call ended. A cancel commits while calls are still in flight; their ends move the counters after.
 */
export function isFinalSnapshot(s: BatchSnapshot): boolean {
  const ended = s.queued === 0 && s.inProgress === 0 && s.completed + s.failed + s.cancelled >= s.acceptedContacts;
  return ended && isBatchStatus(s.status) && isBatchTerminal(s.status);
}

/** One watched batch. */
export class BatchChannel {
  /** undefined: never read; null: no such batch. */
  snapshot: BatchSnapshot | null | undefined;
  readonly progress = new Set<LatestByKeyQueue<BatchSnapshot>>();
  calls: CallTracker | undefined;
  /** Subscriptions holding (or opening) this channel. */
  refs = 0;
  lastUsed = Date.now();
  readonly reader: SerialReader;

  constructor(
    private readonly host: ChannelHost,
    readonly batchId: string,
    intervalMs: () => number,
    onError: (e: unknown) => void,
  ) {
    this.reader = new SerialReader(intervalMs, () => this.read(), onError);
  }

  private async read(): Promise<void> {
    this.host.counters.batchReads++;
    const [row] = await runStatement<BatchRow>(this.host.db, BATCH_SQL, [this.batchId]);
    const next = row ? toBatchSnapshot(row) : null;
    const prev = this.snapshot;
    this.snapshot = next;
    if (!next || (prev && sameProgress(prev, next))) return;
    const final = isFinalSnapshot(next);
    for (const q of [...this.progress]) {
      q.push(next);
      if (final) q.end();
    }
    this.host.toAccount(next);
  }

  close(): void {
    this.reader.close();
    this.calls?.close();
    for (const q of [...this.progress]) q.close();
  }
}
