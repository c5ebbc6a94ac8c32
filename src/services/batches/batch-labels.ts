// What a call shows of its batch (voice, agent and prompt-version names): one statement with the
// two joins for any number of batches, so a page of calls reads batches, agents and versions once.
import type { Database } from '../../db/client.ts';
import { runStatement } from '../../db/sql-statement.ts';

export interface BatchLabels {
  id: string;
  voice: string;
  agentName: string;
  versionName: string;
}

/** The label columns on `batches b` joined as `ag` and `pv` (the batch scope reads them too). */
export const LABEL_COLUMNS = `b.voice AS "voice", ag.name AS "agentName", pv.name AS "versionName"`;
export const LABEL_JOINS = `JOIN agents ag ON ag.id = b.agent_id JOIN prompt_versions pv ON pv.id = b.prompt_version_id`;

const LABELS_SQL = `SELECT b.id AS "id", ${LABEL_COLUMNS} FROM batches b ${LABEL_JOINS} WHERE b.id = ANY($1::text[]) AND b.account_id = $2`;

/** The account's batches' labels in the order of `ids`; null for a foreign or absent batch. */
export async function batchLabelsByIds(db: Database, accountId: string, ids: readonly string[]): Promise<(BatchLabels | null)[]> {
  const rows = await runStatement<BatchLabels>(db, LABELS_SQL, [[...new Set(ids)], accountId]);
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id) => byId.get(id) ?? null);
}
