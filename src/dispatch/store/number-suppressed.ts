// Whether one number is on an account's do-not-call list now: the alternate dial's check, one
// primary-key lookup (the claim checks the primary number itself, inside its statement).
import type { AppDeps } from '../../deps.ts';
import { runStatement } from '../../db/sql-statement.ts';

export async function isNumberSuppressed(deps: Pick<AppDeps, 'db'>, accountId: string, phoneNumber: string): Promise<boolean> {
  const rows = await runStatement(deps.db, 'SELECT 1 FROM suppressions WHERE account_id = $1 AND phone_number = $2', [accountId, phoneNumber]);
  return rows.length > 0;
}
