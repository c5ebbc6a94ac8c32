// What the CLI prints for people: a list of records as aligned columns, one record as
// `name  value` lines, a scalar as itself. Scripts ask for `--json` and get the data unchanged.

type Row = Record<string, string>;

/** The widest a table cell is shown; longer values end in `…` (`--json` has them whole). */
const MAX_CELL = 48;

/** Stored text is a tenant's: control characters are shown, never sent to the terminal as such. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const visible = (s: string) => s.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);

function cell(value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (Array.isArray(value)) return value.map(cell).join(',');
  if (typeof value === 'object') return JSON.stringify(value);
  return visible(String(value));
}

/** Nested objects become dotted columns (`limits.maxBatchSize`), one level at a time. */
function flatten(record: Record<string, unknown>, prefix = '', row: Row = {}): Row {
  for (const [key, value] of Object.entries(record)) {
    const name = prefix + key;
    if (value && typeof value === 'object' && !Array.isArray(value)) flatten(value as Record<string, unknown>, `${name}.`, row);
    else row[name] = cell(value);
  }
  return row;
}

const clip = (s: string) => (s.length > MAX_CELL ? `${s.slice(0, MAX_CELL - 1)}…` : s);

function table(records: Record<string, unknown>[]): string {
  if (records.length === 0) return '(none)';
  const rows = records.map((r) => flatten(r));
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const lines = [columns, ...rows.map((r) => columns.map((c) => clip(r[c] ?? '-')))];
  const widths = columns.map((_, i) => Math.max(...lines.map((l) => l[i].length)));
  return lines
    .map((l) =>
      l
        .map((v, i) => v.padEnd(widths[i]))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

function fields(record: Record<string, unknown>): string {
  const row = flatten(record);
  const width = Math.max(...Object.keys(row).map((k) => k.length));
  return Object.entries(row)
    .map(([k, v]) => `${k.padEnd(width)}  ${v}`)
    .join('\n');
}

const isRecord = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** A GraphQL answer with one root field is shown as that field's value. */
export function renderForPeople(result: unknown): string {
  const keys = isRecord(result) ? Object.keys(result) : [];
  const value = isRecord(result) && keys.length === 1 ? result[keys[0]] : result;
  if (Array.isArray(value)) return value.every(isRecord) ? table(value) : value.map(cell).join('\n');
  if (isRecord(value)) return Object.keys(value).length ? fields(value) : '(empty)';
  return cell(value);
}
