// Use case: an account's caller-ID pool settings (docs/campaigns.md "Caller-ID pools and local
// presence"): a DID's daily cap and which number is the pool default, set when it is added
// (catalog.ts addDidNumber, which calls this) or changed later.
import type { Database } from '../../db/client.ts';
import { MAX_DID_DAILY_CAP } from '../../domain/caller-id.ts';
import { AppError, notFound, requestValidation } from '../../errors.ts';
import type { Account, DidNumber } from '../../generated/prisma/client.ts';
import { withSqlTransaction } from '../../db/sql-transaction.ts';

export interface PoolSettings {
  /** Most dials per UTC day; null: no cap; undefined: unchanged. */
  dailyCap?: number | null;
  /** true: the pool's default (the account's previous default stops being it); false: no longer it; undefined: unchanged. */
  isDefault?: boolean | null;
}

/** The issues of these settings, as a 400's details (empty: fine). */
export function poolSettingIssues(p: PoolSettings): string[] {
  const cap = p.dailyCap;
  if (cap === undefined || cap === null) return [];
  if (!Number.isInteger(cap) || cap < 1 || cap > MAX_DID_DAILY_CAP)
    return [`dailyCap: Value error, a daily cap is a whole number of dials from 1 to ${MAX_DID_DAILY_CAP} (null: no cap)`];
  return [];
}

/**
 * Changes one of the account's numbers' pool settings; a new default unmarks the old one in the
 * same transaction (one per account: a unique index).
 */
export async function updateDidNumber(db: Database, account: Account, didId: string, p: PoolSettings): Promise<DidNumber> {
  const issues = poolSettingIssues(p);
  if (issues.length) throw requestValidation(issues);
  await withSqlTransaction(db, async (tx) => {
    // Two numbers marked default at once: the second waits for the first's row, or meets the unique index (409).
    if (p.isDefault)
      await tx.query('UPDATE did_numbers SET is_default = false WHERE account_id = $1 AND is_default AND id <> $2', [account.id, didId]);
    const rows = await tx.query(
      `UPDATE did_numbers SET daily_cap = CASE WHEN $3::bool THEN $4::int ELSE daily_cap END, is_default = COALESCE($5::bool, is_default)
        WHERE account_id = $1 AND id = $2 RETURNING id`,
      [account.id, didId, p.dailyCap !== undefined, p.dailyCap ?? null, p.isDefault ?? null],
    );
    if (rows.length === 0) throw notFound(`DID number ${didId} not found`);
  }).catch((e: unknown) => {
    if ((e as { code?: string } | null)?.code === '23505')
      throw new AppError('CONFLICT', 'Another number was made the default at the same time; try again');
    throw e;
  });
  return db.prisma.didNumber.findUniqueOrThrow({ where: { id: didId } });
}
