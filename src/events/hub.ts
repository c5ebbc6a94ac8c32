// Live progress for one API process. Writers (API, any worker process) never talk to this hub:
// database triggers NOTIFY `batch_changed` / `calls_changed` at commit (migration
// 20261122033735_live_progress) and the process's one LISTEN session hands the notifications here,
// to the channel of the batch (batch-channel.ts) and the tracker of its calls (call-tracker.ts).
import type { Logger } from 'pino';
import type { Database } from '../db/client.ts';
import { batchNotFound } from '../errors.ts';
import { BatchChannel, isFinalSnapshot, progressOfNotification, type BatchSnapshot } from './batch-channel.ts';
import { CallTracker, type CallSnapshot } from './call-tracker.ts';
import { createListener, type Channel, type Listener } from './listener.ts';
import { LatestByKeyQueue, type QueueOptions } from './queue.ts';
import { DeliveryBudget } from './delivery-budget.ts';

/** The subject of a subscription: the API key's account. */
export interface Subscriber {
  id: string;
}

export interface EventHubOptions {
  /** At most one value sent per batch (and one read of a batch's calls) per this many ms. */
  tickMs?: number;
  /** How far behind the newest updated_at seen the call cursor stays. */
  callOverlapMs?: number;
  /** An unwatched channel is dropped after this long. */
  idleMs?: number;
  /** Values one account's subscriptions receive per second in all (delivery-budget.ts); unbounded when absent. */
  deliveriesPerSecond?: number;
  /** Each value sent to a batch's subscribers: ms from the hub having it to the fan-out, and the fan-out's ms. */
  onFanOut?: (waitMs: number, fanOutMs: number) => void;
}

/**
 * Keys a call or batch-list stream keeps waiting for a slow consumer, at most: past it the one
 * that changed longest ago is dropped. As many as the replay sends (CALL_REPLAY_MAX) and more.
 */
export const STREAM_MAX_PENDING = 1_000;

/** One account's subscriptions in this process: their number and their shared delivery budget. */
interface AccountStreams {
  streams: number;
  budget: DeliveryBudget | undefined;
}

export interface EventHubStats {
  channels: number;
  progressSubscribers: number;
  callSubscribers: number;
  accountSubscribers: number;
  notifications: number;
  batchReads: number;
  callReads: number;
  fanOuts: number;
}

export class EventHub {
  readonly ready: Promise<void>;
  readonly counters = { notifications: 0, batchReads: 0, callReads: 0, fanOuts: 0 };
  private readonly channels = new Map<string, BatchChannel>();
  private readonly accountSubs = new Map<string, Set<LatestByKeyQueue<BatchSnapshot>>>();
  private readonly accounts = new Map<string, AccountStreams>();
  private readonly listener: Listener;
  private readonly sweepTimer: NodeJS.Timeout;
  private readonly tickMs: number;
  private readonly overlapMs: number;
  private readonly idleMs: number;
  private readonly deliveriesPerSecond: number | undefined;
  private readonly onFanOut: EventHubOptions['onFanOut'];
  private closed = false;

  constructor(
    readonly db: Database,
    private readonly logger: Logger,
    opts: EventHubOptions = {},
  ) {
    // Up to 50 values a second for a batch with few subscribers; with many, a fan-out's own
    // cost stretches the interval (batch-channel.ts).
    this.tickMs = opts.tickMs ?? 20;
    this.overlapMs = opts.callOverlapMs ?? 5_000;
    this.idleMs = opts.idleMs ?? 30_000;
    this.deliveriesPerSecond = opts.deliveriesPerSecond;
    this.onFanOut = opts.onFanOut;
    this.listener = createListener(db, logger, {
      notify: (channel, payload) => this.onNotify(channel, payload),
      resync: () => this.resync(),
    });
    this.ready = this.listener.start();
    this.sweepTimer = setInterval(() => this.sweep(), Math.max(1000, this.idleMs / 2));
    this.sweepTimer.unref();
  }

  /**
   * The batch's progress now, then whenever its status or a counter changes; the stream completes
   * after the value of a terminal status (at once for a batch that is already completed or cancelled).
   */
  async batchProgress(account: Subscriber, batchId: string): Promise<AsyncIterableIterator<BatchSnapshot>> {
    const ch = await this.open(account, batchId);
    const { options, leave } = this.enter(account.id);
    const q = new LatestByKeyQueue<BatchSnapshot>(
      () => 'progress',
      () => {
        ch.progress.delete(q);
        this.unref(ch);
        leave();
      },
      options,
    );
    const current = ch.current;
    ch.progress.add(q);
    if (current) q.push(current);
    if (current && isFinalSnapshot(current)) q.end();
    return q;
  }

  /** The calls of the batch that changed just before (see CALL_REPLAY_* in call-tracker.ts), then each call whose status or results change (its latest state). */
  async callUpdates(account: Subscriber, batchId: string): Promise<AsyncIterableIterator<CallSnapshot>> {
    const ch = await this.open(account, batchId);
    const tracker = (ch.calls ??= new CallTracker(
      this,
      batchId,
      this.overlapMs,
      () => this.intervalOf(ch),
      (e) => this.readFailed(e, batchId),
    ));
    tracker.refs++;
    const { options, leave } = this.enter(account.id);
    const release = () => {
      if (--tracker.refs === 0 && ch.calls === tracker) {
        tracker.close();
        ch.calls = undefined;
      }
      this.unref(ch);
      leave();
    };
    const q = new LatestByKeyQueue<CallSnapshot>(
      (c) => c.id,
      () => {
        tracker.subs.delete(q);
        tracker.joining.delete(q);
        release();
      },
      { ...options, maxPending: STREAM_MAX_PENDING },
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
    const { options, leave } = this.enter(account.id);
    const q = new LatestByKeyQueue<BatchSnapshot>(
      (b) => b.id,
      () => {
        subs.delete(q);
        if (subs.size === 0 && this.accountSubs.get(account.id) === subs) this.accountSubs.delete(account.id);
        leave();
      },
      { ...options, maxPending: STREAM_MAX_PENDING },
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

  /** @internal */
  fannedOut(waitMs: number, fanOutMs: number): void {
    this.onFanOut?.(waitMs, fanOutMs);
  }

  /** @internal Broadcast of a batch change to the account's batch streams. */
  toAccount(snapshot: BatchSnapshot): void {
    const set = this.accountSubs.get(snapshot.accountId);
    if (set) for (const q of set) q.push(snapshot);
  }

  /**
   * Between two values sent for a batch (and two reads of its calls): the tick, stretched for an
   * account whose streams together could take more values than its budget lets out (each then gets
   * one about every streams / budget seconds), so the values stay within the budget however many
   * streams it opens.
   */
  private intervalOf(ch: BatchChannel): number {
    const acc = ch.snapshot ? this.accounts.get(ch.snapshot.accountId) : undefined;
    if (!acc || !this.deliveriesPerSecond) return this.tickMs;
    return Math.max(this.tickMs, (1000 * acc.streams) / this.deliveriesPerSecond);
  }

  /** A stream of the account opens: the queue options that share the account's budget, and its close. */
  private enter(accountId: string): { options: QueueOptions; leave: () => void } {
    let acc = this.accounts.get(accountId);
    if (!acc) {
      const budget = this.deliveriesPerSecond ? new DeliveryBudget(this.deliveriesPerSecond) : undefined;
      this.accounts.set(accountId, (acc = { streams: 0, budget }));
    }
    const entry = acc;
    entry.streams++;
    let left = false;
    const leave = () => {
      if (left) return;
      left = true;
      entry.streams--;
    };
    return { options: { budget: entry.budget }, leave };
  }

  /** A channel on a batch the subscriber's account owns; a missing or foreign batch is NOT_FOUND. */
  private async open(account: Subscriber, batchId: string): Promise<BatchChannel> {
    await this.ready;
    if (this.closed) throw new Error('event hub closed');
    const ch = this.channel(batchId);
    ch.refs++;
    try {
      // A live channel's snapshot is current: every change since has a notification on its way,
      // carrying the value this subscriber gets too.
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
      const channel: BatchChannel = new BatchChannel(
        this,
        batchId,
        () => this.intervalOf(channel),
        (e) => this.readFailed(e, batchId),
      );
      ch = channel;
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
    let msg: Record<string, unknown>;
    try {
      msg = JSON.parse(payload);
    } catch {
      return;
    }
    if (typeof msg?.batch_id !== 'string') return;
    if (channel === 'batch_changed') {
      let ch = this.channels.get(msg.batch_id);
      // Batches nobody watches by id are read only for an account whose batch list is open.
      if (!ch && typeof msg.account_id === 'string' && this.accountSubs.has(msg.account_id)) ch = this.channel(msg.batch_id);
      if (!ch) return;
      ch.lastUsed = Date.now();
      const progress = progressOfNotification(msg);
      if (progress) ch.offer(progress);
      else ch.reader.request();
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
    // An account's budget is kept while it has reservations ahead: closing and reopening every
    // stream must not buy a fresh burst.
    for (const [id, acc] of this.accounts) if (acc.streams === 0 && (!acc.budget || acc.budget.idle())) this.accounts.delete(id);
    const now = Date.now();
    for (const ch of this.channels.values()) {
      if (ch.refs > 0 || !ch.idle || now - ch.lastUsed < this.idleMs) continue;
      if (ch.snapshot && this.accountSubs.has(ch.snapshot.accountId)) continue;
      this.drop(ch);
    }
  }
}
