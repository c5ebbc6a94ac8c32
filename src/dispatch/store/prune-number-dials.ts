// The frequency cap's dials are kept as long as the longest period a cap may have (30 days); older
// ones can no longer count toward any cap. The worker drops them a bounded chunk at a time, off
// the (dialled_at) index, every few polls. The caller-ID pool's daily counts (did_daily_dials) are
// kept as long, off their (day) index: only today's counts toward a cap.
import type { AppDeps } from '../../deps.ts';
import { NUMBER_DIAL_RETENTION_SECONDS } from '../../domain/frequency-cap.ts';
import { runStatement } from '../../db/sql-statement.ts';

/** Rows dropped per turn: with a turn every few seconds, far more than any account dials. */
export const NUMBER_DIALS_PRUNE_CHUNK = 10_000;

export async function pruneNumberDials(deps: Pick<AppDeps, 'db'>, now: Date): Promise<number> {
  const cutoff = new Date(now.getTime() - NUMBER_DIAL_RETENTION_SECONDS * 1000);
  const rows = await runStatement<{ n: number }>(
    deps.db,
    `WITH old AS (
       DELETE FROM number_dials WHERE (account_id, phone_number, dialled_at, call_id) IN (
         SELECT account_id, phone_number, dialled_at, call_id FROM number_dials WHERE dialled_at <= $1::timestamptz LIMIT $2)
       RETURNING 1)
     SELECT count(*)::int AS n FROM old`,
    [cutoff.toISOString(), NUMBER_DIALS_PRUNE_CHUNK],
  );
  return rows[0]?.n ?? 0;
}

/** The caller-ID pool's per-number daily counts older than the retention (a chunk per turn). */
export async function pruneDidDailyDials(deps: Pick<AppDeps, 'db'>, now: Date): Promise<void> {
  const cutoff = new Date(now.getTime() - NUMBER_DIAL_RETENTION_SECONDS * 1000);
  await runStatement(
    deps.db,
    `DELETE FROM did_daily_dials WHERE (did_id, day) IN (SELECT did_id, day FROM did_daily_dials WHERE day < $1::date LIMIT $2)`,
    [cutoff.toISOString().slice(0, 10), NUMBER_DIALS_PRUNE_CHUNK],
  );
}
