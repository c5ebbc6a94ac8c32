// Caller-ID daily counts given back (docs/campaigns.md "Caller-ID pools and local presence"): a
// number's dial is counted against its daily cap when the claim chooses it (did_daily_dials); a
// dial that is then not placed (no provider took it, a frequency limit held it, no provider was
// configured) gives its count back in the write that puts the call back in line or ends it - in the
// write's transaction and only when the write applied, so a worker that lost the lease gives
// nothing back (the call's new owner counts its own choice).
import type { SqlTx } from '../../db/sql-transaction.ts';

/** One counted dial that was not placed: the DID and the UTC day (YYYY-MM-DD) its choice counted it in. */
export interface CallerIdReturn {
  didId: string;
  day: string;
}

// Never below 0; rows in (did, day) order, as the chooser and the stats take theirs.
const SQL = `
WITH r AS (
  SELECT x.did_id, x.day, count(*)::int AS n FROM unnest($1::text[], $2::date[]) AS x(did_id, day) GROUP BY x.did_id, x.day
), locked AS (
  SELECT t.did_id, t.day, r.n FROM did_daily_dials t JOIN r ON r.did_id = t.did_id AND r.day = t.day
   ORDER BY t.did_id, t.day FOR UPDATE OF t
)
UPDATE did_daily_dials t SET dials = GREATEST(t.dials - l.n, 0)
  FROM locked l WHERE t.did_id = l.did_id AND t.day = l.day AND t.dials > 0`;

export async function giveBackCallerIdDials(
  tx: SqlTx,
  writes: readonly { callId: string; callerIdReturns?: CallerIdReturn[] }[],
  applied: ReadonlySet<string>,
): Promise<void> {
  const rows = writes.filter((w) => applied.has(w.callId)).flatMap((w) => w.callerIdReturns ?? []);
  if (rows.length === 0) return;
  await tx.query(SQL, [rows.map((r) => r.didId), rows.map((r) => r.day)]);
}
