// A small RFC 4180 CSV reader: quoted fields (with "" for a quote, and line breaks inside quotes),
// CRLF / LF / CR line ends, a UTF-8 byte-order mark, and the delimiter (comma, semicolon or tab,
// as spreadsheets export them) detected from the header line. Blank lines are skipped; each record
// keeps the line it starts on, so feedback can point at the line a user sees in an editor.
// Ours, not csv-parse or papaparse: docs/development.md, "Libraries weighed and left out".

export interface CsvRecord {
  /** 1-based line of the file where the record starts. */
  line: number;
  cells: string[];
}

export class CsvError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(`line ${line}: ${message}`);
    this.name = 'CsvError';
  }
}

const DELIMITERS = [',', ';', '\t'] as const;

/** The delimiter that occurs most often outside quotes on the first line (comma when none does). */
export function detectDelimiter(text: string): string {
  const counts = new Map<string, number>(DELIMITERS.map((d) => [d, 0]));
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '"') quoted = !quoted;
    else if (!quoted && (ch === '\n' || ch === '\r')) break;
    else if (!quoted && counts.has(ch)) counts.set(ch, counts.get(ch)! + 1);
  }
  let best = ',';
  for (const d of DELIMITERS) if (counts.get(d)! > counts.get(best)!) best = d;
  return best;
}

export function parseCsv(input: string, delimiter?: string): CsvRecord[] {
  const text = input.charCodeAt(0) === 0xfeff ? input.slice(1) : input;
  const sep = delimiter ?? detectDelimiter(text);
  const records: CsvRecord[] = [];
  let cells: string[] = [];
  let cell = '';
  let line = 1;
  let recordLine = 1;
  let quoted = false;
  /** The current cell began with a quote (its closing quote may be followed only by a separator). */
  let wasQuoted = false;
  /** A quoted cell makes a line a record even when it is empty (`""`). */
  let recordQuoted = false;
  let i = 0;

  const endCell = () => {
    cells.push(cell);
    cell = '';
    wasQuoted = false;
  };
  const endRecord = () => {
    endCell();
    // A line with nothing on it is not a record.
    if (recordQuoted || !(cells.length === 1 && cells[0] === '')) records.push({ line: recordLine, cells });
    cells = [];
    recordQuoted = false;
  };

  while (i < text.length) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"') {
        if (text[i + 1] === '"') {
          cell += '"';
          i += 2;
          continue;
        }
        quoted = false;
        i++;
        continue;
      }
      if (ch === '\r' || ch === '\n') {
        // A line break inside quotes is part of the value; CRLF counts as one line.
        if (ch === '\r' && text[i + 1] === '\n') {
          cell += '\r\n';
          i += 2;
        } else {
          cell += ch;
          i++;
        }
        line++;
        continue;
      }
      cell += ch;
      i++;
      continue;
    }
    if (ch === '"' && cell === '' && !wasQuoted) {
      quoted = true;
      wasQuoted = true;
      recordQuoted = true;
      i++;
      continue;
    }
    if (ch === sep) {
      endCell();
      i++;
      continue;
    }
    if (ch === '\r' || ch === '\n') {
      endRecord();
      i += ch === '\r' && text[i + 1] === '\n' ? 2 : 1;
      line++;
      recordLine = line;
      continue;
    }
    if (wasQuoted) throw new CsvError('unexpected text after a closing quote', line);
    // A quote inside an unquoted value is kept as is (lenient, as spreadsheets read it).
    cell += ch;
    i++;
  }
  if (quoted) throw new CsvError('a quoted value is not closed', recordLine);
  if (cell !== '' || cells.length > 0 || recordQuoted) endRecord();
  return records;
}

/** The inverse, for tests and for downloading a sample: quotes only the cells that need it. */
export function formatCsv(rows: string[][], delimiter = ','): string {
  const quote = (v: string) => (/[",\r\n;\t]/.test(v) || v.startsWith(' ') || v.endsWith(' ') ? `"${v.replace(/"/g, '""')}"` : v);
  return rows.map((r) => r.map(quote).join(delimiter)).join('\r\n') + '\r\n';
}
