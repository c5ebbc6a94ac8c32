// Use case: read the evidence of a call's dials (dial_audits, written by the worker with each
// dial): for any number of calls in one statement, so a page of calls costs one read at most.
// Each call returns at most MAX_AUDIT_ENTRIES_PER_CALL entries, oldest first.
import type { Database } from '../../db/client.ts';
import { runStatement } from '../../db/sql-statement.ts';
import { MAX_AUDIT_ENTRIES_PER_CALL, type DialAllowedBy, type DialAudit, type DialAuditWindow } from '../../domain/dial-audit.ts';

const AUDITS_SQL = `
SELECT c.id AS call_id, a.attempt, a.number, a.alternate, a.dialled_at, a.allowed_by, a.zones, a.closes_at, a.detail
  FROM unnest($1::text[]) AS c(id)
  CROSS JOIN LATERAL (
    SELECT * FROM dial_audits d WHERE d.call_id = c.id AND d.account_id = $2 ORDER BY d.id LIMIT $3
  ) a
 ORDER BY c.id, a.id`;

interface AuditRow {
  call_id: string;
  attempt: number;
  number: string;
  alternate: boolean;
  dialled_at: Date | string;
  allowed_by: string;
  zones: string[] | null;
  closes_at: Date | string | null;
  detail: { local_times?: string[]; windows?: DialAuditWindow[]; rules?: string[]; rules_version?: string | null; lists?: string[] } | null;
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

function entryOf(r: AuditRow): DialAudit {
  const d = r.detail ?? {};
  return {
    attempt: r.attempt,
    number: r.number,
    alternate: r.alternate,
    dialledAt: new Date(r.dialled_at),
    allowedBy: r.allowed_by as DialAllowedBy,
    zones: r.zones ?? [],
    localTimes: strings(d.local_times),
    windows: Array.isArray(d.windows) ? d.windows : [],
    closesAt: r.closes_at === null ? null : new Date(r.closes_at),
    rules: strings(d.rules),
    rulesVersion: typeof d.rules_version === 'string' ? d.rules_version : null,
    lists: strings(d.lists),
  };
}

/** The account's calls' dial entries in the order of `ids`; an empty list for a call never dialled (or another account's). */
export async function dialAuditsByCallIds(db: Database, accountId: string, ids: readonly string[]): Promise<DialAudit[][]> {
  const rows = await runStatement<AuditRow>(db, AUDITS_SQL, [[...new Set(ids)], accountId, MAX_AUDIT_ENTRIES_PER_CALL]);
  const byId = new Map<string, DialAudit[]>();
  for (const r of rows) {
    const list = byId.get(r.call_id) ?? [];
    list.push(entryOf(r));
    byId.set(r.call_id, list);
  }
  return ids.map((id) => byId.get(id) ?? []);
}
