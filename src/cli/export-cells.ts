// Results rows as CSV text. A cell a spreadsheet would run as a formula (`=`, `@`, or `+` / `-`
// not starting a number) gets a leading `'`: summaries and transcripts hold what callers said.
import { formatCsv } from '../web/csv.ts';

const FORMULA = /^(?:[=@\t\r]|[+-](?![\d.]))/;

function text(value: unknown): string {
  if (value === null || value === undefined) return '';
  const s = typeof value === 'object' ? JSON.stringify(value) : String(value);
  return FORMULA.test(s) ? `'${s}` : s;
}

export function exportCells(rows: unknown[][]): string {
  return formatCsv(rows.map((r) => r.map(text)));
}
