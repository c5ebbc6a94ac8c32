// A batch's results as CSV, the one shape both exports write (`batches export` in the CLI and
// GET …/results.csv): a header of the contract's call record fields, then one row per call from the
// one call-record mapper. Summaries and transcripts hold what callers said: a cell a spreadsheet
// would run as a formula (starting with `=`, `+`, `-`, `@`, a tab or a carriage return, unless it is
// a plain number such as a phone number) gets a leading `'`, and control characters other than tab
// and line breaks become U+FFFD, so an export shown in a terminal cannot drive it.
import { formatCsv } from '../web/csv.ts';
import { CALL_RECORD_FIELDS, callRecord, type CallRecordSource } from '../services/representations.ts';

const FORMULA = /^[=+\-@\t\r]/;
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

/** The header line: the call record's fields in the contract's order. */
export const resultsCsvHeader = (): string => exportCells([[...CALL_RECORD_FIELDS]]);

/** Call records (in GraphQL's names) as CSV lines; '' for none. */
export function resultsCsvRows(items: readonly CallRecordSource[]): string {
  if (items.length === 0) return '';
  return exportCells(
    items.map((item) => {
      const record = callRecord(item);
      return CALL_RECORD_FIELDS.map((k) => record[k]);
    }),
  );
}
