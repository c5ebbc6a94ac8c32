// Use case: put numbers on the account's do-not-call list. Idempotent: a number already listed
// keeps its first reason and source and is counted apart, not refused.
import type { AppDeps } from '../../deps.ts';
import { MAX_SUPPRESSIONS_PER_ACCOUNT } from '../../domain/limits.ts';
import { checkSuppressionAdd } from '../../domain/suppressions.ts';
import { invalidFields, unprocessable } from '../../errors.ts';
import type { Account } from '../../generated/prisma/client.ts';
import { withSqlTransaction } from '../../db/sql-transaction.ts';

export interface AddSuppressionsInput {
  phoneNumbers: readonly string[];
  reason?: string | null;
  /** `api` (an API key), `cli` (the operator token), or `call:<call_id>` for an opt-out. */
  source: string;
}

export interface AddSuppressionsResult {
  /** Numbers newly put on the list. */
  added: number;
  /** Distinct numbers of the request that were listed already. */
  alreadyListed: number;
}

const INSERT_SQL = `
INSERT INTO suppressions (account_id, phone_number, reason, source, created_at)
SELECT $1, n, $3, $4, $5::timestamptz FROM unnest($2::text[]) AS n
ON CONFLICT (account_id, phone_number) DO NOTHING
RETURNING 1`;

// The counter the insert's trigger has just moved (migration suppression_list_order). The trigger
// holds its row until this transaction ends, so concurrent adds to one account are counted one
// after another and the cap is exact; counting the list was an index scan of up to 1,000,000 entries.
const COUNT_SQL = 'SELECT count AS n FROM suppression_counts WHERE account_id = $1';

export async function addSuppressions(deps: AppDeps, account: Account, input: AddSuppressionsInput): Promise<AddSuppressionsResult> {
  const checked = checkSuppressionAdd(input.phoneNumbers, input.reason);
  if (!checked.ok) throw invalidFields(checked.issues);
  const numbers = checked.value;
  return withSqlTransaction(deps.db, async (tx) => {
    const rows = await tx.query(INSERT_SQL, [account.id, numbers, input.reason ?? null, input.source, deps.clock.now().toISOString()]);
    if (rows.length > 0) {
      const [{ n }] = await tx.query<{ n: number }>(COUNT_SQL, [account.id]);
      // Thrown inside the transaction: nothing of this request is kept.
      if (n > MAX_SUPPRESSIONS_PER_ACCOUNT) {
        throw unprocessable(`The do-not-call list holds at most ${MAX_SUPPRESSIONS_PER_ACCOUNT} numbers per account`);
      }
    }
    return { added: rows.length, alreadyListed: numbers.length - rows.length };
  });
}
