import type { AppDeps } from './deps.ts';
import { createWorker } from './dispatch/worker.ts';
import { startWebhookDeliveryWorker } from './services/webhooks/delivery-worker.ts';
import { startWebhookPruner } from './services/webhooks/prune-deliveries.ts';
import { startRetention } from './services/retention/retention-loop.ts';
import { startPeriodic } from './services/retention/periodic.ts';
import { startNumberHealth } from './services/number-health/health-loop.ts';
import { analyzeChangedTables, PGLITE_ANALYZE_SCHEDULE } from './db/pglite-analyze.ts';
import { VOICE_PROVIDERS } from './dispatch/voice/registry.ts';
import type { VoiceProviderModule } from './dispatch/voice/provider-module.ts';

export interface Background {
  stop(): Promise<void>;
}

export interface StartedBackground extends Background {
  /** Why the loops are not healthy (readiness) at `now` (app clock ms), or null. */
  problem(now?: number): string | null;
}

/** A dispatch loop that has not finished a tick for this long is stuck (a tick is one poll's work). */
const workerStaleMs = (pollMs: number) => Math.max(30_000, 20 * pollMs);

export interface BackgroundOptions {
  /** The voice providers the worker dials with and whose jobs run here; default: all this build ships. */
  voiceProviders?: readonly VoiceProviderModule[];
}

/** Starts the process's background loops (dispatch worker, providers' jobs, …); each issue adds its own. */
export async function startBackground(deps: AppDeps, opts: BackgroundOptions = {}): Promise<StartedBackground> {
  const voiceProviders = opts.voiceProviders ?? VOICE_PROVIDERS;
  const loops: Background[] = [];
  const dispatch = createWorker(deps, { voiceProviders });
  dispatch.start();
  loops.push(dispatch);
  for (const m of voiceProviders) loops.push(...(m.jobs?.(deps) ?? []));
  loops.push(startWebhookDeliveryWorker(deps));
  loops.push(startWebhookPruner(deps));
  loops.push(startRetention(deps));
  loops.push(startNumberHealth(deps));
  if (deps.db.kind === 'pglite') {
    // No autovacuum there: without this job its planner never has statistics (src/db/pglite-analyze.ts).
    const log = deps.logger.child({ component: 'pglite-analyze' });
    const analyse = async () => {
      const tables = await analyzeChangedTables(deps.db);
      if (tables.length) log.debug({ tables }, 'tables analysed');
    };
    loops.push(startPeriodic(analyse, { ...PGLITE_ANALYZE_SCHEDULE, onError: (err) => log.error({ err }, 'analyse failed') }));
  }
  const staleMs = workerStaleMs(deps.config.WORKER_POLL_MS);
  return {
    problem(now = deps.clock.now().getTime()) {
      const idleMs = now - dispatch.lastTurnAt();
      return idleMs > staleMs ? `worker: its loop last finished a tick ${Math.round(idleMs / 1000)} s ago` : null;
    },
    async stop() {
      await Promise.all(loops.map((l) => l.stop()));
    },
  };
}
