// Coalesces read requests: at most one read in flight and at most one started per interval; any
// number of requests during a read or an interval become one more read. The first request after a
// quiet spell reads at once (no added latency); a burst costs one read per interval. The interval
// is asked for at each request, so its owner may stretch it (hub.ts, for an account over budget).

export class SerialReader {
  private running = false;
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  private lastStart = Number.NEGATIVE_INFINITY;
  private closed = false;
  /** Waiting for a read that starts after they asked (see fresh()). */
  private waiting: { resolve: () => void; reject: (e: unknown) => void }[] = [];

  constructor(
    private readonly intervalMs: number | (() => number),
    private readonly read: () => Promise<void>,
    private readonly onError: (e: unknown) => void,
  ) {}

  request(): void {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer) return;
    const interval = typeof this.intervalMs === 'number' ? this.intervalMs : this.intervalMs();
    const wait = Math.max(0, this.lastStart + interval - Date.now());
    this.timer = setTimeout(() => this.run(), wait);
  }

  /** Resolves once a read that started after this call has finished (rejects if it failed). */
  fresh(): Promise<void> {
    if (this.closed) return Promise.reject(new Error('reader closed'));
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.request();
    });
  }

  get idle(): boolean {
    return !this.running && !this.timer;
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    for (const w of this.waiting.splice(0)) w.reject(new Error('reader closed'));
  }

  private run(): void {
    this.timer = undefined;
    if (this.closed) return;
    this.running = true;
    this.again = false;
    this.lastStart = Date.now();
    const waiters = this.waiting.splice(0);
    this.read()
      .then(
        () => {
          for (const w of waiters) w.resolve();
        },
        (e) => {
          for (const w of waiters) w.reject(e);
          this.onError(e);
        },
      )
      .finally(() => {
        this.running = false;
        if (this.again || this.waiting.length > 0) this.request();
      });
  }
}
