// A batch's results as CSV, the one shape both exports write (`batches export` in the CLI and
// GET …/results.csv): a header of the contract's call record fields, then one row per call from the
// one call-record mapper. Summaries and transcripts hold what callers said: a cell a spreadsheet
// would run as a formula (starting with `=`, `+`, `-`, `@`, a tab or a carriage return, or with one
// of the first four after spaces or line breaks, unless it is a plain number such as a phone number)
// gets a leading `'`, and control characters other than tab
// and line breaks become U+FFFD, so an export shown in a terminal cannot drive it.
import { formatCsv } from '../csv/csv.ts';
import { CALL_RECORD_FIELDS, callRecord, type CallRecordSource } from '../services/representations.ts';
import type { AuditedRow } from '../services/batches/export-dial-audits.ts';
import { dialAuditItems } from './compliance-mappers.ts';

// Spreadsheets skip leading blanks and line breaks before reading a formula: ` =1+1` and
// `\n=HYPERLINK(…)` run as well as `=1+1` does.
const FORMULA = /^(?:[=+\-@\t\r]|\s+[=+\-@])/;
const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/g;

function text(value: unknown): string {
  if (value === null || value === undefined) return '';
  const s = (typeof value === 'object' ? JSON.stringify(value) : String(value)).replace(CONTROL, '\ufffd');
  return FORMULA.test(s) && !NUMBER.test(s) ? `'${s}` : s;
}

/** Rows of values as CSV lines (CRLF-terminated), every cell guarded as above. */
export function exportCells(rows: unknown[][]): string {
  return formatCsv(rows.map((r) => r.map(text)));
}

/** Columns a caller may add after the call record's (GET …/results.csv?include=dial_audit). */
export const OPTIONAL_CSV_COLUMNS = ['dial_audit'] as const;
export type OptionalCsvColumn = (typeof OPTIONAL_CSV_COLUMNS)[number];

/** The header line: the call record's fields in the contract's order, then the columns asked for. */
export const resultsCsvHeader = (extra: readonly OptionalCsvColumn[] = []): string => exportCells([[...CALL_RECORD_FIELDS, ...extra]]);

/** Call records (in GraphQL's names) as CSV lines, with the columns asked for; '' for none. */
export function resultsCsvRows(items: readonly CallRecordSource[], extra: readonly OptionalCsvColumn[] = []): string {
  if (items.length === 0) return '';
  const audit = extra.includes('dial_audit');
  return exportCells(
    items.map((item) => {
      const record = callRecord(item);
      const cells: unknown[] = CALL_RECORD_FIELDS.map((k) => record[k]);
      if (audit) cells.push(dialAuditItems((item as AuditedRow).dialAudit ?? []));
      return cells;
    }),
  );
}
