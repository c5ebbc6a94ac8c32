// The caller ID of each dial (docs/campaigns.md "Caller-ID pools and local presence"): the
// account's pool and today's dials read, the numbers chosen (domain/caller-id.ts), the dials
// counted against each number's daily cap and the chosen number written on the call, in one
// transaction per claim round. Several workers: the pool's rows are locked (FOR NO KEY UPDATE, in
// one order; a batch's foreign key check does not wait for it) so their choices are made one after
// another on exact counts, and the count is a conditional upsert besides: a number is never taken
// past its cap.
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

const COUNT_DIALS = `
INSERT INTO did_daily_dials (did_id, day, dials)
SELECT d.id, $2::date, x.n FROM unnest($1::text[], $3::int[]) AS x(id, n) JOIN did_numbers d ON d.id = x.id
 WHERE d.daily_cap IS NULL OR x.n <= d.daily_cap
ON CONFLICT (did_id, day) DO UPDATE SET dials = did_daily_dials.dials + EXCLUDED.dials
 WHERE NOT EXISTS (SELECT 1 FROM did_numbers d WHERE d.id = EXCLUDED.did_id AND did_daily_dials.dials + EXCLUDED.dials > d.daily_cap)
RETURNING did_id`;

const RECORD_FROM = `
UPDATE calls c SET from_number = x.number
  FROM unnest($1::text[], $2::text[]) AS x(id, number)
 WHERE c.id = x.id AND c.lease_owner = $3`;

/** The account's numbers, oldest first, locked for this round; a region missing from an old row is derived. */
async function lockedPool(tx: SqlTx, accountId: string): Promise<PoolNumber[]> {
  const rows = await tx.query<PoolRow>(
    `SELECT id, number, area_code, region, daily_cap, is_default FROM did_numbers
      WHERE account_id = $1 ORDER BY created_at, id FOR NO KEY UPDATE`,
    [accountId],
  );
  return rows.map((r) => {
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
}

/**
 * Chooses, counts and records the caller ID of these calls of one account, leased by `workerId`.
 * `unavailable`: DID ids not to dial from now (e.g. rested for their health), beside the capped ones.
 */
export async function chooseCallerIdsFor(
  deps: Pick<AppDeps, 'db'>,
  c: { accountId: string; workerId: string; now: Date; calls: readonly CallerIdCall[]; unavailable?: ReadonlySet<string> },
): Promise<CallerIdRound> {
  if (c.calls.length === 0) return { pool: [], choices: [] };
  const day = capDay(c.now);
  return withSqlTransaction(deps.db, async (tx) => {
    const pool = await lockedPool(tx, c.accountId);
    if (pool.length === 0) return { pool, choices: c.calls.map(() => null) };
    const counted = await tx.query<{ did_id: string; dials: number }>(
      'SELECT did_id, dials FROM did_daily_dials WHERE did_id = ANY($1::text[]) AND day = $2::date',
      [pool.map((n) => n.id), day],
    );
    const today = new Map(counted.map((r) => [r.did_id, r.dials]));
    const { choices, dials } = chooseCallerIds(pool, c.calls, today, c.unavailable);
    const ids = [...dials.keys()];
    const applied = new Set(
      ids.length === 0 ? [] : (await tx.query<{ did_id: string }>(COUNT_DIALS, [ids, day, ids.map((id) => dials.get(id)!)])).map((r) => r.did_id),
    );
    // A count the cap refused (it cannot while the pool is locked) leaves its calls without a number.
    const kept = choices.map((ch) => (ch && applied.has(ch.number.id) ? ch : null));
    const chosen = c.calls.flatMap((call, i) => (kept[i] ? [{ id: call.callId, number: kept[i].number.number }] : []));
    if (chosen.length > 0) await tx.query(RECORD_FROM, [chosen.map((x) => x.id), chosen.map((x) => x.number), c.workerId]);
    return { pool, choices: kept };
  });
}
