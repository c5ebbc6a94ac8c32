// Use case: take one number off the account's do-not-call list (404 when it is not on it).
import type { AppDeps } from '../../deps.ts';
import { suppressionNumber } from '../../domain/suppressions.ts';
import { notFound } from '../../errors.ts';
import type { Account } from '../../generated/prisma/client.ts';
import { runStatement } from '../../db/sql-statement.ts';

export const SUPPRESSION_NOT_FOUND = 'Phone number is not on the do-not-call list';

/** The E.164 number removed. A number the phone rules refuse cannot be listed, so it is a 404 too. */
export async function removeSuppression(deps: AppDeps, account: Account, phoneNumber: string): Promise<string> {
  const r = suppressionNumber(phoneNumber);
  if ('reason' in r) throw notFound(SUPPRESSION_NOT_FOUND);
  const rows = await runStatement(deps.db, 'DELETE FROM suppressions WHERE account_id = $1 AND phone_number = $2 RETURNING 1', [
    account.id,
    r.number,
  ]);
  if (rows.length === 0) throw notFound(SUPPRESSION_NOT_FOUND);
  return r.number;
}
