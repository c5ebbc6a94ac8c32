// Which of some numbers are on the account's do-not-call list: one statement on the primary key
// for a whole contact list (the create use case).
import type { SqlTx } from '../../db/sql-transaction.ts';

export async function suppressedNumbers(tx: SqlTx, accountId: string, numbers: readonly string[]): Promise<Set<string>> {
  if (numbers.length === 0) return new Set();
  const rows = await tx.query<{ phone_number: string }>(
    'SELECT phone_number FROM suppressions WHERE account_id = $1 AND phone_number = ANY($2::text[])',
    [accountId, numbers],
  );
  return new Set(rows.map((r) => r.phone_number));
}
