// Retention of provider_events (PROVIDER_EVENT_RETENTION_DAYS): the voice provider's webhooks
// (Retell's call_started / call_ended / call_analyzed) are stored on receipt, handed once to the
// worker holding the call and kept so a redelivery is recognised. Nothing reads them once the call
// has settled (minutes after it ended), so they go after the retention: processed ones by when
// they were processed, unprocessed ones (events of calls no worker held any more) by when they
// arrived. Both ranges are in the (processed_at, received_at) index. A chunk per statement.
import type { AppDeps } from '../../deps.ts';
import { runStatement } from '../../db/sql-statement.ts';
import { retentionCutoff } from '../../domain/retention.ts';
import { inChunks } from './chunks.ts';

export const PROVIDER_EVENT_CHUNK = 5_000;

const PRUNE_SQL = `
WITH gone AS (
  DELETE FROM provider_events WHERE id = ANY(ARRAY(
    SELECT id FROM provider_events
     WHERE processed_at < $1::timestamptz OR (processed_at IS NULL AND received_at < $1::timestamptz)
     LIMIT $2 FOR UPDATE SKIP LOCKED))
  RETURNING 1)
SELECT count(*)::int AS n FROM gone`;

/** Deletes provider events older than now − PROVIDER_EVENT_RETENTION_DAYS; returns how many. Nothing with 0. */
export async function pruneProviderEvents(deps: Pick<AppDeps, 'config' | 'db' | 'clock'>, opts: { chunk?: number } = {}): Promise<number> {
  const cutoff = retentionCutoff(deps.clock.now(), deps.config.PROVIDER_EVENT_RETENTION_DAYS);
  if (!cutoff) return 0;
  const chunk = opts.chunk ?? PROVIDER_EVENT_CHUNK;
  let total = 0;
  await inChunks(async () => {
    const [r] = await runStatement<{ n: number }>(deps.db, PRUNE_SQL, [cutoff.toISOString(), chunk]);
    const n = r?.n ?? 0;
    total += n;
    return n === chunk;
  });
  return total;
}
