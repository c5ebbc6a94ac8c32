// One account's caller-ID pool as the health job judges it: each number with its days in the window.
import type { DailyCounts, PoolNumber } from '../../domain/number-health.ts';
import type { SqlTx } from '../../db/sql-transaction.ts';

export interface PoolMember extends PoolNumber {
  number: string;
  areaCode: string | null;
  region: string | null;
}

interface Row {
  id: string;
  number: string;
  area_code: string | null;
  region: string | null;
  flagged: boolean;
  rested_until: Date | null;
  judged_from: string | null;
  days: DailyCounts[] | null;
}

// Days as YYYY-MM-DD text: a DATE read back as a Date would shift with the session's zone.
const SQL = `
SELECT d.id, d.number, d.area_code, d.region, d.flagged, d.rested_until, to_char(d.judged_from, 'YYYY-MM-DD') AS judged_from,
       (SELECT jsonb_agg(jsonb_build_object('day', to_char(s.day, 'YYYY-MM-DD'), 'dials', s.dials, 'answered', s.answered, 'shortCalls', s.short_calls) ORDER BY s.day)
          FROM did_daily_stats s WHERE s.did_id = d.id AND s.day >= $2::date) AS days
  FROM did_numbers d
 WHERE d.account_id = $1
 ORDER BY d.id
 FOR NO KEY UPDATE OF d`;

/** The account's numbers (at most MAX_DID_NUMBERS_PER_ACCOUNT), locked until the job's transaction ends. */
export async function loadPool(tx: SqlTx, accountId: string, fromDay: string): Promise<PoolMember[]> {
  const rows = await tx.query<Row>(SQL, [accountId, fromDay]);
  return rows.map((r) => ({
    id: r.id,
    number: r.number,
    areaCode: r.area_code,
    region: r.region,
    flagged: r.flagged,
    restedUntil: r.rested_until === null ? null : new Date(r.rested_until),
    judgedFrom: r.judged_from,
    days: r.days ?? [],
  }));
}
