// A job a worker runs now and then (retention): once shortly after start, then every `everyMs`
// after the previous run ended, so runs never overlap; stop() waits for the one under way.
export interface PeriodicJob {
  stop(): Promise<void>;
}

export function startPeriodic(
  run: () => Promise<void>,
  opts: { firstAfterMs: number; everyMs: number; onError: (err: unknown) => void },
): PeriodicJob {
  let running: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const turn = () => {
    running = run()
      .catch(opts.onError)
      .finally(() => {
        if (!stopped) timer = setTimeout(turn, opts.everyMs).unref();
      });
  };
  timer = setTimeout(turn, opts.firstAfterMs).unref();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}

/** The worker's retention jobs: a minute after start, then hourly. */
export const RETENTION_SCHEDULE = { firstAfterMs: 60_000, everyMs: 60 * 60_000 } as const;
