// The caller ID of each dial (docs/campaigns.md "Caller-ID pools and local presence"): the
// account's pool and today's dials read (one statement), the numbers chosen (domain/caller-id.ts)
// and the dials counted against each number's daily cap (one statement), in one transaction per
// claim round. The chosen number is written on the call by the dial's own provider-id write
// (worker/dial.ts), not here: no extra write of every call row. Several workers: the pool's rows
// are locked (FOR NO KEY UPDATE, in one order; a batch's foreign key check does not wait for it)
// so their choices are made one after another on exact counts, and the count is a conditional
// upsert besides: a number is never taken past its cap.
import type { AppDeps } from '../../deps.ts';
import { capDay, chooseCallerIds, localityOf, type CallerIdChoice, type CallerIdRequest, type PoolNumber } from '../../domain/caller-id.ts';
import { withSqlTransaction, type SqlTx } from '../../db/sql-transaction.ts';

export interface CallerIdCall extends CallerIdRequest {
  callId: string;
}

export interface CallerIdRound {
  /** The account's pool, oldest first (empty: the account has no number). */
  pool: PoolNumber[];
  /** Per call, in order: the chosen number, or null when every usable number is capped or unavailable. */
  choices: (CallerIdChoice | null)[];
}

interface PoolRow {
  id: string;
  number: string;
  area_code: string | null;
  region: string | null;
  daily_cap: number | null;
  is_default: boolean;
}

/** The dials of this round counted, never past a cap (the upsert's own condition, beside the lock). */
const COUNT_DIALS = `
INSERT INTO did_daily_dials (did_id, day, dials)
SELECT d.id, $2::date, x.n FROM unnest($1::text[], $3::int[]) AS x(id, n) JOIN did_numbers d ON d.id = x.id
 WHERE d.daily_cap IS NULL OR x.n <= d.daily_cap
ON CONFLICT (did_id, day) DO UPDATE SET dials = did_daily_dials.dials + EXCLUDED.dials
 WHERE NOT EXISTS (SELECT 1 FROM did_numbers d WHERE d.id = EXCLUDED.did_id AND did_daily_dials.dials + EXCLUDED.dials > d.daily_cap)
RETURNING did_id`;

interface PoolRowWithDials extends PoolRow {
  dials: number;
}

/** The account's numbers, oldest first, locked for this round, with today's dials; a locality missing from an old row is derived. */
async function lockedPool(tx: SqlTx, accountId: string, day: string): Promise<{ pool: PoolNumber[]; today: Map<string, number> }> {
  const rows = await tx.query<PoolRowWithDials>(
    `SELECT d.id, d.number, d.area_code, d.region, d.daily_cap, d.is_default, COALESCE(t.dials, 0) AS dials
       FROM did_numbers d LEFT JOIN did_daily_dials t ON t.did_id = d.id AND t.day = $2::date
      WHERE d.account_id = $1 ORDER BY d.created_at, d.id FOR NO KEY UPDATE OF d`,
    [accountId, day],
  );
  const pool = rows.map((r) => {
    const derived = r.region === null || r.area_code === null ? localityOf(r.number) : null;
    return {
      id: r.id,
      number: r.number,
      areaCode: r.area_code ?? derived?.areaCode ?? null,
      region: r.region ?? derived?.region ?? null,
      dailyCap: r.daily_cap,
      isDefault: r.is_default,
    };
  });
  return { pool, today: new Map(rows.map((r) => [r.id, r.dials])) };
}

/**
 * Chooses and counts the caller ID of these calls of one account.
 * `unavailable`: DID ids not to dial from now (e.g. rested for their health), beside the capped ones.
 */
export async function chooseCallerIdsFor(
  deps: Pick<AppDeps, 'db'>,
  c: { accountId: string; now: Date; calls: readonly CallerIdCall[]; unavailable?: ReadonlySet<string> },
): Promise<CallerIdRound> {
  if (c.calls.length === 0) return { pool: [], choices: [] };
  const day = capDay(c.now);
  return withSqlTransaction(deps.db, async (tx) => {
    const { pool, today } = await lockedPool(tx, c.accountId, day);
    if (pool.length === 0) return { pool, choices: c.calls.map(() => null) };
    const { choices, dials } = chooseCallerIds(pool, c.calls, today, c.unavailable);
    const ids = [...dials.keys()];
    if (ids.length === 0) return { pool, choices };
    const counted = await tx.query<{ did_id: string }>(COUNT_DIALS, [ids, day, ids.map((id) => dials.get(id)!)]);
    // A count the cap refused (it cannot while the pool is locked) leaves its calls without a number.
    const applied = new Set(counted.map((r) => r.did_id));
    return { pool, choices: choices.map((ch) => (ch && applied.has(ch.number.id) ? ch : null)) };
  });
}
