// Retention of the outbox: a delivery that is finished (delivered, failed or disabled) and whose
// last attempt is older than WEBHOOK_RETENTION_DAYS is deleted, so webhook_deliveries holds about
// that many days of events instead of growing forever. Pending deliveries are never touched. Batch
// counters (`callbacks`) are kept on the batch, so they stay as they are.
//
// Safe with any number of workers: each takes its chunk with SKIP LOCKED, and a chunk is one short
// statement (rows found through the (status, next_attempt_at) index), so no pruning transaction
// holds many locks for long. A delivery's next_attempt_at is the time its last attempt was due.
import type { AppDeps } from '../../deps.ts';
import { runStatement } from '../../db/sql-statement.ts';
import { RETENTION_SCHEDULE, startPeriodic, type PeriodicJob } from '../retention/periodic.ts';
import { inChunks } from '../retention/chunks.ts';
import { retentionCutoff } from '../../domain/retention.ts';

/** Rows deleted per statement. */
export const PRUNE_CHUNK = 5_000;

const PRUNE_SQL = `
DELETE FROM webhook_deliveries
 WHERE id IN (SELECT id FROM webhook_deliveries
               WHERE status IN ('delivered', 'failed', 'disabled') AND next_attempt_at < $1::timestamptz
               LIMIT $2
                 FOR UPDATE SKIP LOCKED)
RETURNING 1`;

/**
 * Deletes finished deliveries last attempted before now − WEBHOOK_RETENTION_DAYS, a chunk at a
 * time until none is left; returns how many. Nothing with a retention of 0 (keep forever).
 */
export async function pruneWebhookDeliveries(deps: Pick<AppDeps, 'config' | 'db' | 'clock'>, opts: { chunk?: number } = {}): Promise<number> {
  const cutoff = retentionCutoff(deps.clock.now(), deps.config.WEBHOOK_RETENTION_DAYS);
  if (!cutoff) return 0;
  const before = cutoff.toISOString();
  const chunk = opts.chunk ?? PRUNE_CHUNK;
  let total = 0;
  await inChunks(async () => {
    const n = (await runStatement(deps.db, PRUNE_SQL, [before, chunk])).length;
    total += n;
    return n === chunk;
  });
  return total;
}

export type DeliveryPruner = PeriodicJob;

/** Prunes a minute after start, then hourly; nothing runs with a retention of 0. */
export function startWebhookPruner(deps: AppDeps, opts: { firstAfterMs?: number } = {}): DeliveryPruner {
  if (deps.config.WEBHOOK_RETENTION_DAYS === 0) return { stop: async () => {} };
  const log = deps.logger.child({ component: 'webhook-retention' });
  return startPeriodic(
    async () => {
      const deleted = await pruneWebhookDeliveries(deps);
      if (deleted === 0) return;
      deps.metrics.retentionDeleted.inc({ table: 'webhook_deliveries' }, deleted);
      log.info({ deleted, retentionDays: deps.config.WEBHOOK_RETENTION_DAYS }, 'old webhook deliveries deleted');
    },
    {
      ...RETENTION_SCHEDULE,
      firstAfterMs: opts.firstAfterMs ?? RETENTION_SCHEDULE.firstAfterMs,
      onError: (err) => log.error({ err }, 'pruning webhook deliveries failed'),
    },
  );
}
