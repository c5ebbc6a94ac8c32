// The account's caller-ID numbers number health keeps out of the chooser's hands now: rested (until
// rested_until) or flagged by the operator (from the moment the flag is set, before the job rests it).
import type { Database } from '../../db/client.ts';
import { runStatement } from '../../db/sql-statement.ts';

export async function restedOrFlagged(db: Database, accountId: string, now: Date): Promise<ReadonlySet<string>> {
  const rows = await runStatement<{ id: string }>(
    db,
    'SELECT id FROM did_numbers WHERE account_id = $1 AND (flagged OR rested_until > $2::timestamptz)',
    [accountId, now.toISOString()],
  );
  return new Set(rows.map((r) => r.id));
}
