// Use case: an account's caller-ID pool settings (docs/campaigns.md "Caller-ID pools and local
// presence"): a DID's daily cap and which number is the pool default, set when it is added
// (catalog.ts addDidNumber, which calls this) or changed later.
import type { Database } from '../../db/client.ts';
import { MAX_DID_DAILY_CAP } from '../../domain/caller-id.ts';
import { AppError, notFound, requestValidation } from '../../errors.ts';
import type { Account, DidNumber } from '../../generated/prisma/client.ts';
import { withSqlTransaction, type SqlTx } from '../../db/sql-transaction.ts';

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

/** How many times a deadlock or serialization failure is tried again before the client gets a 409. */
const LOCK_RETRIES = 3;

interface PgError {
  code?: string;
  constraint?: string;
  message?: string;
}

/** The unique index that keeps one default per account (migration caller_id_pools). */
const DEFAULT_INDEX = 'did_numbers_account_default_key';

/**
 * Runs `fn` with the account's numbers locked in id order (SELECT … ORDER BY id FOR NO KEY UPDATE),
 * the one order the caller-ID chooser and the number-health job lock them in too, so these
 * writers never deadlock each other. Should PostgreSQL abort it all the same (40P01 deadlock,
 * 40001 serialization), the transaction is tried again, then a 409 "try again" - never a 500.
 */
export async function withPoolLocked<T>(db: Database, accountId: string, fn: (tx: SqlTx) => Promise<T>): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await withSqlTransaction(db, async (tx) => {
        await tx.query('SELECT id FROM did_numbers WHERE account_id = $1 ORDER BY id FOR NO KEY UPDATE', [accountId]);
        return fn(tx);
      });
    } catch (e) {
      const code = (e as PgError | null)?.code;
      if (code !== '40P01' && code !== '40001') throw mappedPoolError(e);
      if (tries >= LOCK_RETRIES) throw new AppError('CONFLICT', "The account's numbers were being changed at the same time; try again");
    }
  }
}

/** A second default marked at the same moment meets the one-default index: a 409, not a 500. */
function mappedPoolError(e: unknown): unknown {
  const err = e as PgError | null;
  if (err?.code === '23505' && (err.constraint === DEFAULT_INDEX || err.message?.includes(DEFAULT_INDEX)))
    return new AppError('CONFLICT', 'Another number was made the default at the same time; try again');
  return e;
}

/** Sets a number's pool settings inside `withPoolLocked`; a new default unmarks the old one (one per account: a unique index). */
export async function setPoolSettings(tx: SqlTx, accountId: string, didId: string, p: PoolSettings): Promise<void> {
  if (p.isDefault) await tx.query('UPDATE did_numbers SET is_default = false WHERE account_id = $1 AND is_default AND id <> $2', [accountId, didId]);
  const rows = await tx.query(
    `UPDATE did_numbers SET daily_cap = CASE WHEN $3::bool THEN $4::int ELSE daily_cap END, is_default = COALESCE($5::bool, is_default)
      WHERE account_id = $1 AND id = $2 RETURNING id`,
    [accountId, didId, p.dailyCap !== undefined, p.dailyCap ?? null, p.isDefault ?? null],
  );
  if (rows.length === 0) throw notFound(`DID number ${didId} not found`);
}

/** Changes one of the account's numbers' pool settings, in one transaction under the pool's lock. */
export async function updateDidNumber(db: Database, account: Account, didId: string, p: PoolSettings): Promise<DidNumber> {
  const issues = poolSettingIssues(p);
  if (issues.length) throw requestValidation(issues);
  await withPoolLocked(db, account.id, (tx) => setPoolSettings(tx, account.id, didId, p));
  return db.prisma.didNumber.findUniqueOrThrow({ where: { id: didId } });
}
