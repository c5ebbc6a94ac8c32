// Buffers a worker's call writes for a moment and commits them in groups: one transaction per group
// instead of one per state change. Writes for the same call are merged in order (ringing ->
// answered -> in_progress -> completed becomes one row update carrying three history events).
// Several groups may be committing at once, but never two holding the same call: a call's next
// write waits until its previous one committed, so its changes always land in the order they happened.

import { isDatabaseUnreachable } from '../../db/unreachable.ts';
import type { ApplyCallWritesResult, CallWrite } from '../../services/calls/call-transitions.ts';
import { delay, realScheduler, type Scheduler } from '../../scheduler.ts';

/** Failures of a group (the database answered with an error) before it is dropped. */
const MAX_ATTEMPTS = 6;
/**
 * While the database cannot be reached, a group is tried again this often, for as long as it takes:
 * its writes are conditional on the lease, so after a long outage they apply only to calls nobody
 * took over. Short, so the batch moves within moments of the database coming back.
 */
const UNREACHABLE_RETRY_MS = 200;

interface Pending {
  write: CallWrite;
  waiters: Array<(applied: boolean) => void>;
}

export interface WriteQueueOptions {
  apply(writes: CallWrite[]): Promise<ApplyCallWritesResult>;
  /** After each committed group (logging, capacity kicks, batch completion). */
  onCommitted?(writes: CallWrite[], result: ApplyCallWritesResult): void;
  onError?(err: unknown, attempt: number): void;
  /** An error that is waited out, never counted against the group (default: the database is unreachable). */
  isTransient?(err: unknown): boolean;
  /** Most writes per transaction. */
  maxGroup?: number;
  /** Most transactions committing at once. */
  parallel?: number;
  /** Timers of deferred writes and retries (default: the real ones). */
  scheduler?: Scheduler;
}

function dropProviderCallIdIf(drop: boolean, set: CallWrite['set']): CallWrite['set'] {
  if (!drop || set.providerCallId === undefined) return set;
  const { providerCallId: _older, ...rest } = set;
  return rest;
}

/** `newer` continues where `older` left off; the result does both. */
export function mergeWrites(older: CallWrite, newer: CallWrite): CallWrite {
  const inc = (older.set.attemptsIncrement ?? 0) + (newer.set.attemptsIncrement ?? 0);
  return {
    ...older,
    to: newer.to,
    events: [...older.events, ...newer.events],
    // A newer dial (the alternate number) has a provider call of its own: the older dial's id is not its.
    set: { ...dropProviderCallIdIf((newer.set.attemptsIncrement ?? 0) > 0, older.set), ...newer.set, ...(inc ? { attemptsIncrement: inc } : {}) },
    releaseLease: !!(older.releaseLease || newer.releaseLease),
    recording: newer.recording ?? older.recording ?? null,
    ...(older.optOut || newer.optOut ? { optOut: true } : {}),
    ...(older.audits || newer.audits ? { audits: [...(older.audits ?? []), ...(newer.audits ?? [])] } : {}),
    ...(older.didStats || newer.didStats ? { didStats: [...(older.didStats ?? []), ...(newer.didStats ?? [])] } : {}),
    ...(older.callerIdReturns || newer.callerIdReturns
      ? { callerIdReturns: [...(older.callerIdReturns ?? []), ...(newer.callerIdReturns ?? [])] }
      : {}),
  };
}

export class WriteQueue {
  private pending = new Map<string, Pending>();
  /** Calls with a write being committed right now. */
  private busy = new Set<string>();
  private running = 0;
  private scheduled = false;
  private idleWaiters: Array<() => void> = [];
  private readonly maxGroup: number;
  private readonly parallel: number;
  private readonly scheduler: Scheduler;

  constructor(private readonly opts: WriteQueueOptions) {
    this.maxGroup = opts.maxGroup ?? 2000;
    this.parallel = Math.max(1, opts.parallel ?? 1);
    this.scheduler = opts.scheduler ?? realScheduler;
  }

  /**
   * Resolves once the write committed (true) or turned out stale (false: the call moved on).
   * `deferMs`: the write is not urgent; it rides along with the next group, or goes on its own
   * after that long (saves a row update per call when more news about the call comes soon).
   */
  enqueue(write: CallWrite, opts: { deferMs?: number } = {}): Promise<boolean> {
    return new Promise((resolve) => {
      const existing = this.pending.get(write.callId);
      if (existing) {
        existing.write = mergeWrites(existing.write, write);
        existing.waiters.push(resolve);
      } else {
        this.pending.set(write.callId, { write, waiters: [resolve] });
      }
      if (opts.deferMs) this.scheduleLater(opts.deferMs);
      else this.schedule();
    });
  }

  private later = false;

  private scheduleLater(ms: number) {
    if (this.later) return;
    this.later = true;
    this.scheduler.setTimeout(
      () => {
        this.later = false;
        this.schedule();
      },
      ms,
      { background: true },
    );
  }

  get idle(): boolean {
    return this.running === 0 && !this.scheduled && this.pending.size === 0;
  }

  private closed = false;

  /** The worker stopped: writes still waiting for an unreachable database give up (their leases lapse; recovery settles them). */
  close() {
    this.closed = true;
  }

  /** Commits deferred writes now (tests and shutdown should not wait for them). */
  flushDeferred() {
    if (this.pending.size > 0) this.schedule();
  }

  get size(): number {
    return this.pending.size;
  }

  /** Resolves when everything enqueued so far (and since) has been committed. */
  whenIdle(): Promise<void> {
    if (this.idle) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private schedule() {
    // A deferred write's timer may fire after its write already went out with another group.
    if (this.pending.size === 0 || this.scheduled || this.running >= this.parallel) return;
    this.scheduled = true;
    // setImmediate lets the events of the current turn (often several per call) join the group.
    setImmediate(() => {
      this.scheduled = false;
      this.startGroups();
      // Another group's completion may have taken this turn's writes already.
      this.notifyIfIdle();
    });
  }

  private notifyIfIdle() {
    if (!this.idle) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  private startGroups() {
    while (this.running < this.parallel) {
      const group = this.takeGroup();
      if (group.length === 0) break;
      this.running += 1;
      void this.commit(group).finally(() => {
        this.running -= 1;
        for (const p of group) this.busy.delete(p.write.callId);
        if (this.pending.size > 0) this.startGroups();
        this.notifyIfIdle();
      });
    }
  }

  private takeGroup(): Pending[] {
    const group: Pending[] = [];
    for (const [id, p] of this.pending) {
      if (this.busy.has(id)) continue;
      group.push(p);
      this.pending.delete(id);
      this.busy.add(id);
      if (group.length >= this.maxGroup) break;
    }
    return group;
  }

  private async commit(group: Pending[]) {
    const transient = this.opts.isTransient ?? isDatabaseUnreachable;
    for (let attempt = 1, unreachable = 0; ;) {
      const writes = group.map((p) => p.write);
      let result: ApplyCallWritesResult;
      try {
        result = await this.opts.apply(writes);
      } catch (err) {
        // Nothing was committed: retry (leases keep the calls ours meanwhile). An unreachable
        // database is waited out - dropping the writes would lose answered calls' results and
        // leave their slots taken until the leases lapsed. A group the database keeps refusing is
        // dropped so that one bad write cannot stall the worker: its calls' leases lapse and
        // recovery settles them. Writes that arrived meanwhile wait in `pending` behind this one.
        if (transient(err) && !this.closed) {
          // Logged once per outage and then every ~10 s, not on every try.
          if (unreachable++ % 50 === 0) this.opts.onError?.(err, attempt);
          await delay(this.scheduler, UNREACHABLE_RETRY_MS);
          continue;
        }
        this.opts.onError?.(err, attempt);
        if (attempt >= MAX_ATTEMPTS) {
          for (const p of group) for (const w of p.waiters) w(false);
          return;
        }
        await delay(this.scheduler, Math.min(1000, 20 * 2 ** attempt));
        attempt++;
        continue;
      }
      try {
        this.opts.onCommitted?.(writes, result);
      } finally {
        for (const p of group) for (const w of p.waiters) w(result.applied.has(p.write.callId));
      }
      return;
    }
  }
}
