// What a subscriber holds: an async iterator fed by the hub. A slow consumer never makes the hub
// buffer without bound: it keeps at most one pending value per key, the latest (a progress stream
// has one key, so a client that falls behind skips to the newest counters; a call stream keys by
// call, so it gets every call's latest state).

export class LatestByKeyQueue<T> implements AsyncIterableIterator<T> {
  private readonly pending = new Map<string, T>();
  private waiter: ((r: IteratorResult<T>) => void) | null = null;
  private closed = false;

  constructor(
    private readonly keyOf: (value: T) => string,
    private readonly onClose: () => void,
  ) {}

  push(value: T): void {
    if (this.closed) return;
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = null;
      w({ value, done: false });
      return;
    }
    const key = this.keyOf(value);
    // Re-inserted at the end: values come out in the order of their last change.
    this.pending.delete(key);
    this.pending.set(key, value);
  }

  get size(): number {
    return this.pending.size;
  }

  next(): Promise<IteratorResult<T>> {
    const first = this.pending.entries().next();
    if (!first.done) {
      this.pending.delete(first.value[0]);
      return Promise.resolve({ value: first.value[1], done: false });
    }
    if (this.closed) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => (this.waiter = resolve));
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
    const w = this.waiter;
    this.waiter = null;
    w?.({ value: undefined, done: true });
    this.onClose();
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }
}
