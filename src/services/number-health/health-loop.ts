// The worker's number-health job: shortly after start, then every NUMBER_HEALTH_EVERY_MS after the
// previous run ended (runs of one process never overlap; several processes are safe, run-health.ts).
import type { AppDeps } from '../../deps.ts';
import { startPeriodic, type PeriodicJob } from '../retention/periodic.ts';
import { runNumberHealth } from './run-health.ts';

export function startNumberHealth(deps: AppDeps, opts: { firstAfterMs?: number } = {}): PeriodicJob {
  const everyMs = deps.config.NUMBER_HEALTH_EVERY_MS;
  if (everyMs === 0) return { stop: async () => {} };
  const log = deps.logger.child({ component: 'number-health' });
  return startPeriodic(
    async () => {
      const run = await runNumberHealth(deps);
      if (run.rested + run.restored > 0) log.info(run, 'number health run');
    },
    { firstAfterMs: opts.firstAfterMs ?? Math.min(60_000, everyMs), everyMs, onError: (err) => log.error({ err }, 'number health failed') },
  );
}
