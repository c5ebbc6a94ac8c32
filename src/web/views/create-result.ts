// What became of a create request, pointed back at the CSV lines: the server's own per-contact
// rejections after a batch was created, or the request's validation errors when none was.
import type { DashboardCreateBatchMutation } from '../../codegen/graphql.ts';
import type { ApiError } from '../api.ts';
import { lineOfDetail } from '../../csv/contacts-csv.ts';
import { h } from '../dom.ts';

type Created = DashboardCreateBatchMutation['createCallBatch'];

/** `lines`: the CSV line of each contact sent, by position. */
export function createdPanel(r: Created, lines: number[]): HTMLElement {
  return h(
    'div',
    { class: 'panel ok' },
    h('h2', null, 'Batch created'),
    h('p', { 'data-testid': 'create-summary' }, `${r.acceptedContacts} of ${r.totalContacts} contacts accepted, ${r.rejectedContacts} rejected.`),
    r.validationErrors.length ? rejectionsTable(r.validationErrors, lines) : null,
    h('a', { class: 'button primary', href: `#/batch/${encodeURIComponent(r.batchId)}`, 'data-testid': 'open-batch' }, 'Open batch'),
  );
}

function rejectionsTable(rejections: Created['validationErrors'], lines: number[]): HTMLElement {
  return h(
    'table',
    { class: 'grid issues', 'data-testid': 'validation-errors' },
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        ['CSV line', 'Contact', 'Field', 'Reason'].map((t) => h('th', null, t)),
      ),
    ),
    h(
      'tbody',
      null,
      // The server counts contacts from 1.
      rejections.map((v) =>
        h(
          'tr',
          null,
          h('td', { class: 'num' }, lines[v.index - 1] ?? '?'),
          h('td', { class: 'mono' }, v.externalId),
          h('td', null, v.field),
          h('td', null, v.message),
        ),
      ),
    ),
  );
}

/** A refused request: each detail, prefixed with its CSV line when it names a contact. */
export function requestErrorsPanel(err: ApiError, lines: number[]): HTMLElement {
  return h(
    'div',
    { class: 'panel bad' },
    h('h2', null, err.message),
    h(
      'ul',
      { 'data-testid': 'request-errors' },
      err.details.map((d) => {
        const line = lineOfDetail(d, lines);
        return h('li', null, line ? `CSV line ${line}: ` : '', d);
      }),
    ),
  );
}
