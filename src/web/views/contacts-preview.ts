// What the chosen CSV file will send: how many contacts are ready, the rows left out and why, and
// the first contacts as they were read.
import type { ContactsFromCsv, RowIssue } from '../../csv/contacts-csv.ts';
import { h, type Child } from '../dom.ts';

const PREVIEW_ROWS = 8;

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

function summary(p: ContactsFromCsv, fileName: string): HTMLElement {
  return h(
    'p',
    { 'data-testid': 'csv-summary' },
    h('strong', null, `${plural(p.contacts.length, 'contact')} ready`),
    ` from ${fileName} (${plural(p.rowCount, 'row')})`,
    p.issues.length ? h('span', { class: 'warn' }, ` · ${plural(p.issues.length, 'row')} will be left out`) : null,
  );
}

function issuesTable(issues: RowIssue[]): HTMLElement {
  return h(
    'table',
    { class: 'grid issues', 'data-testid': 'csv-issues' },
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        ['Line', 'Contact', 'Field', 'Problem'].map((t) => h('th', null, t)),
      ),
    ),
    h(
      'tbody',
      null,
      issues.map((i) =>
        h(
          'tr',
          null,
          h('td', { class: 'num' }, i.line),
          h('td', { class: 'mono' }, i.contactId ?? '—'),
          h('td', null, i.field),
          h('td', null, i.message),
        ),
      ),
    ),
  );
}

function sampleTable(p: ContactsFromCsv): HTMLElement {
  const issueLines = new Set(p.issues.map((i) => i.line));
  const rows = p.contacts.slice(0, PREVIEW_ROWS).map((c, i) =>
    h(
      'tr',
      { class: issueLines.has(p.lines[i]) ? 'bad' : '' },
      h('td', { class: 'num' }, p.lines[i]),
      h('td', { class: 'mono' }, c.contactId),
      h('td', null, c.name ?? ''),
      h('td', { class: 'mono' }, c.phoneNumber),
      h(
        'td',
        { class: 'small muted' },
        c.metadata
          ? Object.entries(c.metadata)
              .map(([k, v]) => `${k}=${v}`)
              .join(', ')
          : '',
      ),
    ),
  );
  const more = p.contacts.length - PREVIEW_ROWS;
  return h(
    'table',
    { class: 'grid sample' },
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        ['Line', 'Contact', 'Name', 'Phone', 'Metadata'].map((t) => h('th', null, t)),
      ),
    ),
    h('tbody', null, rows, more > 0 ? h('tr', null, h('td', { colspan: 5, class: 'muted' }, `… and ${more} more`)) : null),
  );
}

export function contactsPreview(p: ContactsFromCsv, fileName: string): Child[] {
  return [summary(p, fileName), p.issues.length ? issuesTable(p.issues) : null, p.contacts.length ? sampleTable(p) : null];
}
