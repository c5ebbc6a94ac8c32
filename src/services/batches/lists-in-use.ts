// Whether a create's numbers need asking about at all: an account with an empty do-not-call list,
// and a national registry with nothing imported, refuse no number. Asking about every chunk's
// numbers anyway cost ~3.5 µs of CPU a contact, in this process and the database
// (bench/create-batch). The claim asks both lists again before every dial (claim-calls.sql), so an
// entry written while the create runs still stops the call.
import type { SqlTx } from '../../db/sql-transaction.ts';

export interface ListsInUse {
  suppressions: boolean;
  registry: boolean;
}

export async function listsInUse(tx: SqlTx, accountId: string): Promise<ListsInUse> {
  const [row] = await tx.query<ListsInUse>(
    // Each by its primary key: imports rewrite registry rows in place, so a bare scan could read
    // pages of dead rows before it met a live one.
    `SELECT EXISTS (SELECT 1 FROM suppressions WHERE account_id = $1) AS suppressions,
            EXISTS (SELECT 1 FROM (SELECT prefix FROM dnc_registry_blocks ORDER BY prefix LIMIT 1) b)
            OR EXISTS (SELECT 1 FROM (SELECT number FROM reassigned_numbers ORDER BY number LIMIT 1) r) AS registry`,
    [accountId],
  );
  return row;
}
