// The contacts file of the create form: the chosen CSV is read and checked in the browser, and its
// preview shows what will be sent before anything is.
import { contactsFromCsv, CsvContactsError, type ContactsFromCsv } from '../../csv/contacts-csv.ts';
import { formatCsv } from '../../csv/csv.ts';
import { h, replace } from '../dom.ts';
import { contactsPreview } from './contacts-preview.ts';

const SAMPLE = formatCsv([
  ['contact_id', 'name', 'phone_number', 'company'],
  ['c-001', 'Ada Lovelace', '+14155550101', 'Analytical Engines'],
  ['c-002', 'Alan Turing', '+14155550102', 'Bletchley'],
]);

export interface ContactsFile {
  /** The file row and the preview, in form order. */
  els: HTMLElement[];
  /** The contacts of the file last read; null while none is chosen, being read, or unreadable. */
  parsed(): ContactsFromCsv | null;
}

function formatHelp(): HTMLElement {
  return h(
    'details',
    { class: 'muted small' },
    h('summary', null, 'CSV format'),
    h(
      'p',
      null,
      'First line: column names. phone_number is required; contact_id and name are recognised; any other column becomes contact metadata. Comma, semicolon or tab separated.',
    ),
    h('pre', null, SAMPLE),
  );
}

function readError(e: unknown): HTMLElement {
  const message = e instanceof CsvContactsError ? e.message : `Could not read the file: ${String((e as Error)?.message ?? e)}`;
  return h('p', { class: 'error-text', 'data-testid': 'csv-error' }, message);
}

/** `onPick` runs as soon as a file is chosen (or the choice cleared), `onRead` once it has been read. */
export function contactsFile(onPick: () => void, onRead: () => void): ContactsFile {
  let parsed: ContactsFromCsv | null = null;
  const file = h('input', { type: 'file', name: 'csv', accept: '.csv,text/csv,text/plain', 'data-testid': 'csv-file' });
  const preview = h('div', { class: 'csv-preview', 'data-testid': 'csv-preview' });

  file.addEventListener('change', async () => {
    onPick();
    parsed = null;
    const f = file.files?.[0];
    if (!f) {
      replace(preview);
      return onRead();
    }
    try {
      parsed = contactsFromCsv(await f.text());
    } catch (e) {
      replace(preview, readError(e));
      return onRead();
    }
    replace(preview, ...contactsPreview(parsed, f.name));
    onRead();
  });

  return {
    els: [h('div', { class: 'file-row' }, h('label', null, 'Contacts (CSV) ', file), formatHelp()), preview],
    parsed: () => parsed,
  };
}
