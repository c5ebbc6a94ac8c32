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

// Counts no further than the cap: a full list costs one bounded index scan, an empty one nothing.
const BOUNDED_COUNT_SQL = `SELECT count(*)::int AS n FROM (SELECT 1 FROM suppressions WHERE account_id = $1 LIMIT $2) t`;

export async function addSuppressions(deps: AppDeps, account: Account, input: AddSuppressionsInput): Promise<AddSuppressionsResult> {
  const checked = checkSuppressionAdd(input.phoneNumbers, input.reason);
  if (!checked.ok) throw invalidFields(checked.issues);
  const numbers = checked.value;
  return withSqlTransaction(deps.db, async (tx) => {
    const rows = await tx.query(INSERT_SQL, [account.id, numbers, input.reason ?? null, input.source, deps.clock.now().toISOString()]);
    if (rows.length > 0) {
      const [{ n }] = await tx.query<{ n: number }>(BOUNDED_COUNT_SQL, [account.id, MAX_SUPPRESSIONS_PER_ACCOUNT + 1]);
      // Thrown inside the transaction: nothing of this request is kept.
      if (n > MAX_SUPPRESSIONS_PER_ACCOUNT) {
        throw unprocessable(`The do-not-call list holds at most ${MAX_SUPPRESSIONS_PER_ACCOUNT} numbers per account`);
      }
    }
    return { added: rows.length, alreadyListed: numbers.length - rows.length };
  });
}
