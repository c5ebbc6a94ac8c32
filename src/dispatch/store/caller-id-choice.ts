// The caller ID of each dial (docs/campaigns.md "Caller-ID pools and local presence"): the
// account's pool and today's dials read (one statement), the numbers chosen (domain/caller-id.ts)
// and the dials counted against each number's daily cap (one statement), in one transaction per
// claim round. The chosen number is written on the call by the dial's own provider-id write
// (worker/dial.ts), not here: no extra write of every call row. Several workers: the pool's rows
// are locked (FOR NO KEY UPDATE, in id order as every writer of did_numbers locks them: the health
// job, updateDidNumber; a batch's foreign key check does not wait for it) so their choices are made
// one after another on exact counts, and the count is a conditional upsert besides: a number is
// never taken past its cap. Only calls still leased by this worker are counted: a worker that lost
// a lease counts nothing for it (its call gets no number here).
import type { AppDeps } from '../../deps.ts';
import { capDay, chooseCallerIds, localityOf, type CallerIdChoice, type CallerIdRequest, type PoolNumber } from '../../domain/caller-id.ts';
import { withSqlTransaction, type SqlTx } from '../../db/sql-transaction.ts';

export interface CallerIdCall extends CallerIdRequest {
  callId: string;
}

export interface CallerIdRound {
  /** The account's pool, oldest first (empty: the account has no number). */
  pool: PoolNumber[];
  /** Per call, in order: the chosen number, or null when every usable number is capped or unavailable, or when lapsed. */
  choices: (CallerIdChoice | null)[];
  /** Calls a number was chosen for but not counted: this worker's lease on them had lapsed (or gone) by `now`. */
  lapsed: ReadonlySet<string>;
}

const NONE_LAPSED: ReadonlySet<string> = new Set();

interface PoolRow {
  id: string;
  number: string;
  area_code: string | null;
  region: string | null;
  daily_cap: number | null;
  is_default: boolean;
}

/**
 * The dials of this round counted, never past a cap (the upsert's own condition, beside the lock),
 * for the calls this worker still leases ($4, lease not expired at $5); returns those calls.
 */
const COUNT_DIALS = `
WITH owned AS (
  SELECT x.call_id, x.did_id FROM unnest($1::text[], $2::text[]) AS x(call_id, did_id)
    JOIN calls c ON c.id = x.call_id AND c.lease_owner = $4 AND c.lease_expires_at > $5::timestamptz
), n AS (
  SELECT did_id, count(*)::int AS n FROM owned GROUP BY did_id
), counted AS (
  INSERT INTO did_daily_dials (did_id, day, dials)
  SELECT d.id, $3::date, n.n FROM n JOIN did_numbers d ON d.id = n.did_id
   WHERE d.daily_cap IS NULL OR n.n <= d.daily_cap
   ORDER BY d.id
  ON CONFLICT (did_id, day) DO UPDATE SET dials = did_daily_dials.dials + EXCLUDED.dials
   WHERE NOT EXISTS (SELECT 1 FROM did_numbers d WHERE d.id = EXCLUDED.did_id AND did_daily_dials.dials + EXCLUDED.dials > d.daily_cap)
  RETURNING did_id
)
SELECT o.call_id FROM owned o JOIN counted ON counted.did_id = o.did_id`;

interface PoolRowWithDials extends PoolRow {
  created_at: Date;
  dials: number;
}

/**
 * The account's numbers, locked for this round in id order (the one order of every did_numbers
 * writer: no deadlock), then oldest first, with today's dials; a locality missing from an old row is derived.
 */
async function lockedPool(tx: SqlTx, accountId: string, day: string): Promise<{ pool: PoolNumber[]; today: Map<string, number> }> {
  const rows = await tx.query<PoolRowWithDials>(
    `SELECT d.id, d.number, d.area_code, d.region, d.daily_cap, d.is_default, d.created_at, COALESCE(t.dials, 0) AS dials
       FROM did_numbers d LEFT JOIN did_daily_dials t ON t.did_id = d.id AND t.day = $2::date
      WHERE d.account_id = $1 ORDER BY d.id FOR NO KEY UPDATE OF d`,
    [accountId, day],
  );
  rows.sort((a, b) => new Date(a.created_at).getTime() - new Date(b.created_at).getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
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
  c: { accountId: string; workerId: string; now: Date; calls: readonly CallerIdCall[]; unavailable?: ReadonlySet<string> },
): Promise<CallerIdRound> {
  if (c.calls.length === 0) return { pool: [], choices: [], lapsed: NONE_LAPSED };
  const day = capDay(c.now);
  return withSqlTransaction(deps.db, async (tx) => {
    const { pool, today } = await lockedPool(tx, c.accountId, day);
    if (pool.length === 0) return { pool, choices: c.calls.map(() => null), lapsed: NONE_LAPSED };
    const { choices } = chooseCallerIds(pool, c.calls, today, c.unavailable);
    const chosen = c.calls.flatMap((call, i) => (choices[i] ? [{ callId: call.callId, didId: choices[i].number.id }] : []));
    if (chosen.length === 0) return { pool, choices, lapsed: NONE_LAPSED };
    const params = [chosen.map((x) => x.callId), chosen.map((x) => x.didId), day, c.workerId, c.now.toISOString()];
    const counted = await tx.query<{ call_id: string }>(COUNT_DIALS, params);
    // A count the cap refused (it cannot while the pool is locked), or a call no longer leased by this
    // worker, leaves the call without a number.
    const applied = new Set(counted.map((r) => r.call_id));
    const lapsed = new Set(chosen.filter((x) => !applied.has(x.callId)).map((x) => x.callId));
    return { pool, choices: choices.map((ch, i) => (ch && applied.has(c.calls[i].callId) ? ch : null)), lapsed };
  });
}
