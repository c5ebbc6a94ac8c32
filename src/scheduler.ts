// Timers, behind one interface so the dispatch worker (and the simulator it drives) can run on
// time a test advances instead of the wall clock: test/helpers/dispatch.ts manualTimers() fires
// them only when told, moving the app clock with them. Time is read from the app clock
// (deps.ts Clock); waits and deadlines are timers from here, never arithmetic on Date.now().

export interface Scheduler {
  /** Runs `fn` once after `ms`; `background`: the timer alone does not keep the process alive. */
  setTimeout(fn: () => void, ms: number, opts?: { background?: boolean }): unknown;
  clearTimeout(handle: unknown): void;
}

// Globals resolved at call time, so vitest fake timers installed later still apply.
export const realScheduler: Scheduler = {
  setTimeout(fn, ms, opts) {
    const t = setTimeout(fn, ms);
    if (opts?.background) t.unref?.();
    return t;
  },
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

/** Resolves after `ms`. */
export function delay(scheduler: Scheduler, ms: number): Promise<void> {
  return new Promise<void>((resolve) => scheduler.setTimeout(resolve, ms));
}

/** Runs `fn` every `ms` (the next run is timed from the end of the last call) until the returned stop is called. */
export function repeat(scheduler: Scheduler, ms: number, fn: () => void, opts?: { background?: boolean }): () => void {
  let handle: unknown = null;
  let stopped = false;
  const run = () => {
    if (stopped) return;
    fn();
    if (!stopped) handle = scheduler.setTimeout(run, ms, opts);
  };
  handle = scheduler.setTimeout(run, ms, opts);
  return () => {
    stopped = true;
    scheduler.clearTimeout(handle);
  };
}

/** A deadline `ms` from now, as a flag and a promise (for races), both set by one timer. */
export interface Deadline {
  readonly passed: boolean;
  /** Resolves when the deadline passes (never, once cancelled). */
  readonly reached: Promise<void>;
  cancel(): void;
}

export function deadlineIn(scheduler: Scheduler, ms: number): Deadline {
  let passed = false;
  let handle: unknown = null;
  const reached = new Promise<void>((resolve) => {
    handle = scheduler.setTimeout(
      () => {
        passed = true;
        resolve();
      },
      Math.max(0, ms),
    );
  });
  return {
    get passed() {
      return passed;
    },
    reached,
    cancel: () => scheduler.clearTimeout(handle),
  };
}

/** `p`, or whatever `late()` throws once `deadline` passes first (p runs on, its outcome ignored). */
export function beforeDeadline<T>(p: Promise<T>, deadline: Deadline, late: () => Error): Promise<T> {
  p.catch(() => undefined);
  return Promise.race([
    p,
    deadline.reached.then(() => {
      throw late();
    }),
  ]);
}
