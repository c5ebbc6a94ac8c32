// Recording retention (RECORDING_RETENTION_DAYS): recordings are kept apart from their calls and
// may go sooner. A recording stored more than the retention ago is deleted, and in the same
// statement its call's recording_available becomes false, so the call's recording_url reads null
// (as for a call never recorded) instead of a link to nothing. A provider-held recording (Retell)
// is only forgotten here: the provider keeps its own copy under its own retention.
//
// A chunk per statement, oldest first, through recordings_created_at_idx; SKIP LOCKED lets several
// workers share the work.
import type { AppDeps } from '../../deps.ts';
import { runStatement } from '../../db/sql-statement.ts';
import { retentionCutoff } from '../../domain/retention.ts';
import { inChunks } from './chunks.ts';

/**
 * Recordings dropped per statement; each also rewrites its call's row (with its index entries).
 * Fewer on PGlite, whose statements run in this process's thread and hold up its API meanwhile.
 */
export const RECORDING_CHUNK = { postgres: 500, pglite: 100 } as const;

const DROP_SQL = `
WITH gone AS (
  DELETE FROM recordings WHERE call_id = ANY(ARRAY(
    SELECT call_id FROM recordings WHERE created_at < $1::timestamptz ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED))
  RETURNING call_id),
marked AS (
  UPDATE calls SET recording_available = false, updated_at = $3::timestamptz WHERE id = ANY(ARRAY(SELECT call_id FROM gone)) RETURNING 1)
SELECT (SELECT count(*) FROM gone)::int AS n`;

/** Drops recordings stored before now − RECORDING_RETENTION_DAYS; returns how many. Nothing with 0. */
export async function dropOldRecordings(deps: Pick<AppDeps, 'config' | 'db' | 'clock'>, opts: { chunk?: number } = {}): Promise<number> {
  const now = deps.clock.now();
  const cutoff = retentionCutoff(now, deps.config.RECORDING_RETENTION_DAYS);
  if (!cutoff) return 0;
  const chunk = opts.chunk ?? RECORDING_CHUNK[deps.db.kind];
  let total = 0;
  await inChunks(async () => {
    const [r] = await runStatement<{ n: number }>(deps.db, DROP_SQL, [cutoff.toISOString(), chunk, now.toISOString()]);
    const n = r?.n ?? 0;
    total += n;
    return n === chunk;
  });
  return total;
}
