// What a subscriber holds: an async iterator fed by the hub. A slow consumer never makes the hub
// buffer without bound: it keeps at most one pending value per key, the latest (a progress stream
// has one key, so a client that falls behind skips to the newest counters; a call stream keys by
// call, so it gets every call's latest state), and at most `maxPending` keys: past that the key
// that changed longest ago is dropped (a client that far behind re-reads the page). With a
// budget, each value waits for its account's delivery slot (delivery-budget.ts), and a newer
// value of its key replaces it meanwhile. A consumer that can take a value at once (a WebSocket
// operation's writer, graphql/socket-pump.ts) takes it through a sink, inside push(), rather than
// a promise a value: a fan-out to 5,000 sockets is then one loop.
import type { DeliveryBudget } from './delivery-budget.ts';

/** A consumer that takes values as they come (LatestByKeyQueue.drainTo). */
export interface ValueSink<T> {
  /** One value: true when ready for the next at once, false to stop (the queue closes), or a promise of either. */
  take(value: T): boolean | Promise<boolean>;
  /** The queue closed: its last value was taken, or it was closed. */
  closed(): void;
}

export interface QueueOptions {
  budget?: DeliveryBudget;
  /** Keys kept pending at most (default: no bound, for a single-key stream). */
  maxPending?: number;
}

export class LatestByKeyQueue<T> implements AsyncIterableIterator<T> {
  private readonly pending = new Map<string, T>();
  private waiter: ((r: IteratorResult<T>) => void) | null = null;
  /** Set while the waiter's value waits for its delivery slot. */
  private slot: NodeJS.Timeout | undefined;
  private closed = false;
  /** No value follows the pending ones: the stream completes once they are delivered. */
  private ending = false;
  private readonly budget: DeliveryBudget | undefined;
  private readonly maxPending: number;
  private sink: ValueSink<T> | undefined;
  /** The sink's last take has not settled. */
  private sinkBusy = false;

  constructor(
    private readonly keyOf: (value: T) => string,
    private readonly onClose: () => void,
    opts: QueueOptions = {},
  ) {
    this.budget = opts.budget;
    this.maxPending = opts.maxPending ?? Number.POSITIVE_INFINITY;
  }

  push(value: T): void {
    if (this.closed || this.ending) return;
    const key = this.keyOf(value);
    // Re-inserted at the end: values come out in the order of their last change.
    if (!this.pending.delete(key) && this.pending.size >= this.maxPending) this.pending.delete(this.pending.keys().next().value!);
    this.pending.set(key, value);
    if (this.sink) this.pour();
    else if (this.waiter && !this.slot) this.serve();
  }

  /** From now on, values go to `sink` rather than to next() (call it before any next()). */
  drainTo(sink: ValueSink<T>): void {
    if (this.closed) return sink.closed();
    this.sink = sink;
    this.pour();
  }

  get size(): number {
    return this.pending.size;
  }

  /** The stream's last value is in: deliver what is pending, then complete. */
  end(): void {
    if (this.closed) return;
    this.ending = true;
    if (this.pending.size === 0 && !this.sinkBusy) this.close();
  }

  next(): Promise<IteratorResult<T>> {
    if (this.ending && this.pending.size === 0) this.close();
    if (this.closed && this.pending.size === 0) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => {
      this.waiter = resolve;
      if (this.pending.size > 0) this.serve();
    });
  }

  return(): Promise<IteratorResult<T>> {
    this.close();
    return Promise.resolve({ value: undefined, done: true });
  }

  throw(error?: unknown): Promise<IteratorResult<T>> {
    this.close();
    return Promise.reject(error);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.pending.clear();
    clearTimeout(this.slot);
    this.slot = undefined;
    const w = this.waiter;
    this.waiter = null;
    w?.({ value: undefined, done: true });
    const sink = this.sink;
    this.sink = undefined;
    this.onClose();
    sink?.closed();
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }

  /** A value is pending and the consumer waits: hand it over now or once its slot comes. */
  private serve(): void {
    const wait = this.budget?.reserve() ?? 0;
    if (wait === 0) this.hand();
    else
      this.slot = setTimeout(() => {
        this.slot = undefined;
        this.hand();
      }, wait);
  }

  /** Pending values to the sink while it is ready, each in its delivery slot. */
  private pour(): void {
    while (this.sink && !this.sinkBusy && !this.slot && this.pending.size > 0) {
      const wait = this.budget?.reserve() ?? 0;
      if (wait > 0) {
        this.slot = setTimeout(() => {
          this.slot = undefined;
          if (this.toSink()) this.pour();
        }, wait);
        return;
      }
      if (!this.toSink()) return;
    }
    if (this.ending && this.pending.size === 0 && !this.sinkBusy) this.close();
  }

  /** The value that changed first to the sink: whether it is ready for another at once. */
  private toSink(): boolean {
    const sink = this.sink;
    const first = this.pending.entries().next();
    if (!sink || first.done) return false;
    this.pending.delete(first.value[0]);
    const ready = sink.take(first.value[1]);
    if (ready === true) return true;
    if (ready === false) {
      this.close();
      return false;
    }
    this.sinkBusy = true;
    const settle = (ok: boolean) => {
      this.sinkBusy = false;
      if (ok) this.pour();
      else this.close();
    };
    ready.then(settle, () => settle(false));
    return false;
  }

  /** The value that changed first (in its latest state) to the waiting consumer. */
  private hand(): void {
    const w = this.waiter;
    const first = this.pending.entries().next();
    if (!w || first.done) return;
    this.waiter = null;
    this.pending.delete(first.value[0]);
    w({ value: first.value[1], done: false });
  }
}
