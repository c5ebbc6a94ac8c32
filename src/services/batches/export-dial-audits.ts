// The CSV export's opt-in `dial_audit` column (GET …/results.csv?include=dial_audit): the export
// of a batch's results, each page's calls given their dial audit entries by one more statement per
// page (dial-audits.ts: at most MAX_AUDIT_ENTRIES_PER_CALL per call), so the file costs what it
// did plus a read of the page's entries.
import type { AppDeps } from '../../deps.ts';
import type { DialAudit } from '../../domain/dial-audit.ts';
import type { CallRecordSource } from '../representations.ts';
import { dialAuditsByCallIds } from '../calls/dial-audits.ts';
import type { ResultsExport } from './export-batch-results.ts';

export type AuditedRow = CallRecordSource & { dialAudit?: DialAudit[] };

/** `exp` whose pages' rows carry their `dialAudit` entries. */
export function withDialAudits(deps: Pick<AppDeps, 'db'>, accountId: string, exp: ResultsExport): ResultsExport {
  return {
    get pagesRead() {
      return exp.pagesRead;
    },
    close: () => exp.close(),
    async nextPage() {
      const page = await exp.nextPage();
      if (page.rows.length === 0) return page;
      const audits = await dialAuditsByCallIds(
        deps.db,
        accountId,
        page.rows.map((r) => r.id),
      );
      return { ...page, rows: page.rows.map((r, i): AuditedRow => ({ ...r, dialAudit: audits[i] })) };
    },
  };
}
