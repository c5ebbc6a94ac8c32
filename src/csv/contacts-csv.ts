// CSV rows -> the contacts of a createCallBatch input, with feedback per row before anything is
// sent (the checks the server would otherwise refuse the whole request for), and the map back from
// a contact's position to its CSV line for the server's own per-contact rejections.
import { CsvError, parseCsv } from './csv.ts';

export interface CsvContact {
  contactId: string;
  name?: string;
  phoneNumber: string;
  metadata?: Record<string, string>;
  /** The contact's own zone for calling windows (a `timezone` column). */
  timezone?: string;
}

export interface RowIssue {
  line: number;
  contactId: string | null;
  field: string;
  message: string;
}

export interface ContactsFromCsv {
  /** Header cells as written. */
  headers: string[];
  /** Rows that passed the local checks, in file order. */
  contacts: CsvContact[];
  /** CSV line of each contact (same index). */
  lines: number[];
  /** Rows left out, with the reason. */
  issues: RowIssue[];
  /** Data rows in the file. */
  rowCount: number;
}

/** Phone numbers shorter than this are refused by the API's request validation. */
export const MIN_PHONE_LENGTH = 8;

const normalize = (h: string) =>
  h
    .trim()
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');

const ALIASES: Record<'contactId' | 'phoneNumber' | 'name' | 'timezone', string[]> = {
  contactId: ['contact_id', 'id', 'external_id', 'contact'],
  phoneNumber: ['phone_number', 'phone', 'number', 'mobile', 'telephone', 'phone_no'],
  name: ['name', 'full_name', 'contact_name'],
  timezone: ['timezone', 'time_zone', 'tz'],
};

export class CsvContactsError extends Error {}

export function contactsFromCsv(text: string): ContactsFromCsv {
  let records;
  try {
    records = parseCsv(text);
  } catch (e) {
    if (e instanceof CsvError) throw new CsvContactsError(`The file is not valid CSV (${e.message}).`);
    throw e;
  }
  if (records.length === 0) throw new CsvContactsError('The file is empty.');
  const [header, ...rows] = records;
  const headers = header.cells.map((h) => h.trim());
  const keys = headers.map(normalize);
  const column = (field: keyof typeof ALIASES) => {
    for (const alias of ALIASES[field]) {
      const at = keys.indexOf(alias);
      if (at >= 0) return at;
    }
    return -1;
  };
  const idCol = column('contactId');
  const phoneCol = column('phoneNumber');
  const nameCol = column('name');
  const zoneCol = column('timezone');
  if (phoneCol < 0) {
    throw new CsvContactsError('The first line must name the columns, including phone_number (and contact_id, name, any others as metadata).');
  }
  const metaCols = headers.map((_, i) => i).filter((i) => i !== idCol && i !== phoneCol && i !== nameCol && i !== zoneCol && headers[i] !== '');

  const out: ContactsFromCsv = { headers, contacts: [], lines: [], issues: [], rowCount: rows.length };
  const seenIds = new Map<string, number>();
  rows.forEach((r, n) => {
    const cell = (i: number) => (i >= 0 ? (r.cells[i] ?? '').trim() : '');
    // Without a contact_id column, the row number is the contact's id.
    const contactId = idCol >= 0 ? cell(idCol) : `row-${n + 1}`;
    const phone = cell(phoneCol);
    const problem = (field: string, message: string) => out.issues.push({ line: r.line, contactId: contactId || null, field, message });
    if (!contactId) return problem('contact_id', 'Field required');
    if (!phone) return problem('phone_number', 'Field required');
    if (phone.length < MIN_PHONE_LENGTH) return problem('phone_number', `String should have at least ${MIN_PHONE_LENGTH} characters`);
    const earlier = seenIds.get(contactId);
    if (earlier !== undefined) return problem('contact_id', `Duplicate contact_id (first on line ${earlier})`);
    seenIds.set(contactId, r.line);
    const contact: CsvContact = { contactId, phoneNumber: phone };
    const name = cell(nameCol);
    if (name) contact.name = name;
    const timezone = cell(zoneCol);
    if (timezone) contact.timezone = timezone;
    const metadata: Record<string, string> = {};
    for (const i of metaCols) if (cell(i) !== '') metadata[headers[i]] = cell(i);
    if (Object.keys(metadata).length > 0) contact.metadata = metadata;
    out.contacts.push(contact);
    out.lines.push(r.line);
  });
  return out;
}

/**
 * Request-validation details name contacts by 0-based position (`contacts.3.phoneNumber: …`);
 * this returns the CSV line such a detail is about, if it names a contact.
 */
export function lineOfDetail(detail: string, lines: number[]): number | null {
  const m = /^contacts\.(\d+)\b/.exec(detail);
  if (!m) return null;
  return lines[Number(m[1])] ?? null;
}
