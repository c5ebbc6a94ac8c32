// The worker's lifecycle as named modes. `idle`: built, its loop not running (runOnce and drain
// still work: tests and operators tick it by hand). `running`: the loop polls and claims.
// `stopping`: stop() was called - nothing new is claimed or dialled, no lease is confirmed for a
// new request, calls in flight finish, are handed over or hung up. `stopped`: done, providers
// closed. A call whose lease this worker lost is not a mode of the worker but leaves its book
// (ledger.ts dropLostCall): each lease is lost on its own, and a lost call is touched no more.

export type WorkerMode = 'idle' | 'running' | 'stopping' | 'stopped';

/** Which mode may follow which; anything else is a bug and throws. */
export const WORKER_TRANSITIONS: Readonly<Record<WorkerMode, readonly WorkerMode[]>> = {
  idle: ['running', 'stopping'],
  running: ['stopping'],
  stopping: ['stopped'],
  stopped: [],
};

export class IllegalWorkerTransition extends Error {
  override name = 'IllegalWorkerTransition';
  constructor(
    readonly from: WorkerMode,
    readonly to: WorkerMode,
  ) {
    super(`dispatch worker cannot go from ${from} to ${to}`);
  }
}

export interface Lifecycle {
  readonly mode: WorkerMode;
  /** Moves to `to`; throws IllegalWorkerTransition when the table does not allow it. */
  to(to: WorkerMode): void;
  /** The loop runs and claims (started, not told to stop). */
  readonly running: boolean;
  /** Told to stop (or stopped): claim nothing, dial nothing new, confirm no lease for a new request. */
  readonly windingDown: boolean;
}

export function canMoveTo(from: WorkerMode, to: WorkerMode): boolean {
  return WORKER_TRANSITIONS[from].includes(to);
}

export function createLifecycle(): Lifecycle {
  let mode: WorkerMode = 'idle';
  return {
    get mode() {
      return mode;
    },
    to(to) {
      if (!canMoveTo(mode, to)) throw new IllegalWorkerTransition(mode, to);
      mode = to;
    },
    get running() {
      return mode === 'running';
    },
    get windingDown() {
      return mode === 'stopping' || mode === 'stopped';
    },
  };
}
