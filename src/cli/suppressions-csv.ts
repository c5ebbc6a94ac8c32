// The numbers of a do-not-call CSV file: the `phone_number` column, or the first column when the
// header names none. Each number is read with the list's own phone rules here, so a bad row is
// named by its line and left out instead of failing a whole request of 1,000.
import { parseCsv } from '../csv/csv.ts';
import { suppressionNumber } from '../domain/suppressions.ts';

export interface SuppressionRow {
  line: number;
  number: string;
}

export interface SuppressionFile {
  /** Distinct E.164 numbers, in file order, each with the first line it is on. */
  rows: SuppressionRow[];
  rejected: { line: number; message: string }[];
  /** Rows whose number an earlier row already had. */
  duplicates: number;
}

const HEADER_NAME = 'phone_number';
const normalise = (s: string) =>
  s
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');

/** The column to read, and whether the first record is a header (it is when it holds no digit). */
function layout(first: string[] | undefined): { column: number; header: boolean } {
  if (!first) return { column: 0, header: false };
  const named = first.findIndex((c) => normalise(c) === HEADER_NAME);
  if (named >= 0) return { column: named, header: true };
  return { column: 0, header: !first.some((c) => /\d/.test(c)) };
}

export function suppressionsFromCsv(text: string): SuppressionFile {
  const records = parseCsv(text);
  const { column, header } = layout(records[0]?.cells);
  const out: SuppressionFile = { rows: [], rejected: [], duplicates: 0 };
  const seen = new Set<string>();
  for (const r of header ? records.slice(1) : records) {
    const raw = (r.cells[column] ?? '').trim();
    if (raw === '') {
      out.rejected.push({ line: r.line, message: 'no phone number' });
      continue;
    }
    const read = suppressionNumber(raw);
    if ('reason' in read) out.rejected.push({ line: r.line, message: read.reason });
    else if (seen.has(read.number)) out.duplicates += 1;
    else {
      seen.add(read.number);
      out.rows.push({ line: r.line, number: read.number });
    }
  }
  return out;
}
