// Number health's daily counts (did_daily_stats): each attempt a call write ends is added to its
// caller-ID number's UTC day, in the write's transaction and only for writes that applied, so a
// worker that lost the call's lease adds nothing and a crash loses nothing it committed.
import type { SqlTx } from '../../db/sql-transaction.ts';

/** One ended attempt, as the worker saw it. */
export interface DidAttemptStat {
  /** The caller-ID number it was dialled from; null: the call's stored from_number. */
  fromNumber: string | null;
  /** The UTC day it ended, YYYY-MM-DD. */
  day: string;
  answered: boolean;
  short: boolean;
}

// A number no longer in the account's pool (or a from_number that is none of its DIDs) is skipped by
// the join. Rows in (did, day) order: two writers never wait on each other's rows crosswise.
const SQL = `
INSERT INTO did_daily_stats (did_id, day, dials, answered, short_calls)
SELECT d.id, s.day, count(*)::int, (count(*) FILTER (WHERE s.answered))::int, (count(*) FILTER (WHERE s.is_short))::int
  FROM unnest($1::text[], $2::text[], $3::date[], $4::bool[], $5::bool[]) AS s(call_id, from_number, day, answered, is_short)
  JOIN calls c ON c.id = s.call_id
  JOIN did_numbers d ON d.account_id = c.account_id AND d.number = COALESCE(s.from_number, c.from_number)
 GROUP BY d.id, s.day
 ORDER BY d.id, s.day
ON CONFLICT (did_id, day) DO UPDATE SET
  dials = did_daily_stats.dials + EXCLUDED.dials,
  answered = did_daily_stats.answered + EXCLUDED.answered,
  short_calls = did_daily_stats.short_calls + EXCLUDED.short_calls`;

/** Adds the applied writes' ended attempts to their numbers' days. */
export async function addDidStats(
  tx: SqlTx,
  writes: readonly { callId: string; didStats?: DidAttemptStat[] }[],
  applied: ReadonlySet<string>,
): Promise<void> {
  const rows = writes.filter((w) => applied.has(w.callId)).flatMap((w) => (w.didStats ?? []).map((st) => ({ callId: w.callId, st })));
  if (rows.length === 0) return;
  await tx.query(SQL, [
    rows.map((r) => r.callId),
    rows.map((r) => r.st.fromNumber),
    rows.map((r) => r.st.day),
    rows.map((r) => r.st.answered),
    rows.map((r) => r.st.short),
  ]);
}
