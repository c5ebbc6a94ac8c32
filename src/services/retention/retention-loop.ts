// The worker's retention of calls and what hangs off them (docs/deployment.md#growth-and-retention):
// provider events, then recordings, then whole batches, one after another in one periodic job, each
// logged and counted (callbatch_retention_deleted_total) when it deleted anything. The outbox has
// its own job (services/webhooks/prune-deliveries.ts). No job runs when every retention is 0.
import type { AppDeps } from '../../deps.ts';
import { pruneFinishedBatches } from './prune-batches.ts';
import { dropOldRecordings } from './drop-recordings.ts';
import { pruneProviderEvents } from './prune-provider-events.ts';
import { RETENTION_SCHEDULE, startPeriodic, type PeriodicJob } from './periodic.ts';

/** One turn of every retention that is on; a failing one is logged and the others still run. */
export async function runRetention(deps: AppDeps): Promise<void> {
  const { config, metrics } = deps;
  const log = deps.logger.child({ component: 'retention' });
  const step = async (what: string, fn: () => Promise<void>) => {
    try {
      await fn();
    } catch (err) {
      log.error({ err, what }, 'retention step failed');
    }
  };
  await step('provider_events', async () => {
    const deleted = await pruneProviderEvents(deps);
    if (deleted === 0) return;
    metrics.retentionDeleted.inc({ table: 'provider_events' }, deleted);
    log.info({ deleted, retentionDays: config.PROVIDER_EVENT_RETENTION_DAYS }, 'old provider events deleted');
  });
  await step('recordings', async () => {
    const dropped = await dropOldRecordings(deps);
    if (dropped === 0) return;
    metrics.retentionDeleted.inc({ table: 'recordings' }, dropped);
    log.info({ dropped, retentionDays: config.RECORDING_RETENTION_DAYS }, 'old recordings dropped');
  });
  await step('batches', async () => {
    const r = await pruneFinishedBatches(deps);
    if (r.waiting > 0) log.info({ batches: r.waiting }, 'old batches kept until their pending webhook deliveries finish');
    if (r.batches + r.calls + r.deliveries === 0) return;
    metrics.retentionDeleted.inc({ table: 'batches' }, r.batches);
    metrics.retentionDeleted.inc({ table: 'calls' }, r.calls);
    metrics.retentionDeleted.inc({ table: 'webhook_deliveries' }, r.deliveries);
    log.info({ batches: r.batches, calls: r.calls, deliveries: r.deliveries, retentionDays: config.BATCH_RETENTION_DAYS }, 'old batches deleted');
  });
}

/** Runs the retention a minute after start, then hourly; nothing when every retention is 0. */
export function startRetention(deps: AppDeps, opts: { firstAfterMs?: number } = {}): PeriodicJob {
  const { BATCH_RETENTION_DAYS, RECORDING_RETENTION_DAYS, PROVIDER_EVENT_RETENTION_DAYS } = deps.config;
  if (BATCH_RETENTION_DAYS + RECORDING_RETENTION_DAYS + PROVIDER_EVENT_RETENTION_DAYS === 0) return { stop: async () => {} };
  return startPeriodic(() => runRetention(deps), {
    ...RETENTION_SCHEDULE,
    firstAfterMs: opts.firstAfterMs ?? RETENTION_SCHEDULE.firstAfterMs,
    onError: (err) => deps.logger.error({ err }, 'retention failed'),
  });
}
