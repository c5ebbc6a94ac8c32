// Results rows as CSV text. Summaries and transcripts hold what callers said: a cell a spreadsheet
// would run as a formula (starting with `=`, `+`, `-`, `@`, a tab or a carriage return, unless it is
// a plain number such as a phone number) gets a leading `'`, and control characters other than tab
// and line breaks become U+FFFD, so an export shown in a terminal cannot drive it.
import { formatCsv } from '../web/csv.ts';

const FORMULA = /^[=+\-@\t\r]/;
const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/g;

function text(value: unknown): string {
  if (value === null || value === undefined) return '';
  const s = (typeof value === 'object' ? JSON.stringify(value) : String(value)).replace(CONTROL, '\ufffd');
  return FORMULA.test(s) && !NUMBER.test(s) ? `'${s}` : s;
}

export function exportCells(rows: unknown[][]): string {
  return formatCsv(rows.map((r) => r.map(text)));
}
