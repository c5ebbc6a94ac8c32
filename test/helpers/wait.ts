// Waiting in tests: for a condition, with a deadline, never for a fixed time. CI shares a 2-core
// machine with other work, so a deadline is generous (tens of seconds for anything that involves
// a process, the database or a worker): it only bounds how long a broken test takes to fail.

/** Deadline for conditions that involve processes, database writes or a worker's loop. */
export const WAIT_MS = 30_000;

export interface WaitOptions {
  /** Give up (fail the test) after this long; default WAIT_MS. */
  timeoutMs?: number;
  /** Named in the timeout error. */
  what?: string;
  /** Between two looks at the condition; default 10 ms. */
  intervalMs?: number;
  /** Runs before each look; throws to stop waiting at once (e.g. a child process exited early). */
  abortIf?: () => void;
}

/** Polls `cond` until it holds; throws after the deadline. */
export async function waitFor(cond: () => boolean | Promise<boolean>, opts: WaitOptions = {}): Promise<void> {
  const timeoutMs = opts.timeoutMs ?? WAIT_MS;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    opts.abortIf?.();
    if (await cond()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${opts.what ?? 'a condition'}`);
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 10));
  }
}
