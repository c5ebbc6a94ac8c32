// A batch from a CSV file: the file is read in the browser, every row is checked before anything
// is sent (rows the API would refuse the whole request for are listed and left out), and after
// creation the server's own per-contact rejections are shown against the CSV lines they came from.
import {
  DashboardCatalogDocument,
  DashboardCreateBatchDocument,
  type CallBatchStartMode,
  type CreateCallBatchInput,
  type DashboardCatalogQuery,
  type DashboardCreateBatchMutation,
} from '../../codegen/graphql.ts';
import { ApiError } from '../api.ts';
import { contactsFromCsv, CsvContactsError, lineOfDetail, type ContactsFromCsv } from '../contacts-csv.ts';
import type { AppContext, View } from '../context.ts';
import { h, replace } from '../dom.ts';
import { formatCsv } from '../csv.ts';

const PREVIEW_ROWS = 8;
const SAMPLE = formatCsv([
  ['contact_id', 'name', 'phone_number', 'company'],
  ['c-001', 'Ada Lovelace', '+14155550101', 'Analytical Engines'],
  ['c-002', 'Alan Turing', '+14155550102', 'Bletchley'],
]);

function localZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
}

function today(): { date: string; time: string } {
  const d = new Date(Date.now() + 10 * 60_000);
  const pad = (n: number) => String(n).padStart(2, '0');
  return { date: `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`, time: `${pad(d.getHours())}:${pad(d.getMinutes())}` };
}

export function createView(ctx: AppContext): View {
  let disposed = false;
  let agents: DashboardCatalogQuery['agents'] = [];
  let parsed: ContactsFromCsv | null = null;
  let fileName = '';

  const agentSelect = h('select', { name: 'agent', required: true, 'data-testid': 'agent' }, h('option', { value: '' }, 'Loading…'));
  const versionSelect = h('select', { name: 'version', required: true, 'data-testid': 'version' });
  const modeInputs = (['immediate', 'manual', 'scheduled'] as const).map((m) =>
    h('input', { type: 'radio', name: 'startMode', value: m, checked: m === 'immediate', 'data-testid': `mode-${m}` }),
  );
  const { date, time } = today();
  const dateInput = h('input', { type: 'date', name: 'date', value: date });
  const timeInput = h('input', { type: 'time', name: 'time', value: time });
  const zoneInput = h('input', { type: 'text', name: 'zone', value: localZone(), size: 22, 'aria-label': 'Time zone (IANA)' });
  const schedule = h('fieldset', { class: 'schedule', hidden: true }, h('legend', null, 'Schedule'), h('label', null, 'Date ', dateInput), h('label', null, 'Time ', timeInput), h('label', null, 'Time zone ', zoneInput));
  const concurrency = h('input', { type: 'number', name: 'concurrency', min: 1, placeholder: String(ctx.account.batchConcurrency), 'aria-label': 'Concurrency' });
  const interruption = h('input', { type: 'checkbox', name: 'interruption', checked: true });
  const alternate = h('input', { type: 'checkbox', name: 'alternate' });
  const dedupe = h('input', { type: 'checkbox', name: 'dedupe' });
  const file = h('input', { type: 'file', name: 'csv', accept: '.csv,text/csv,text/plain', 'data-testid': 'csv-file' });
  const preview = h('div', { class: 'csv-preview', 'data-testid': 'csv-preview' });
  const result = h('div', { class: 'create-result', 'data-testid': 'create-result' });
  const submit = h('button', { type: 'submit', class: 'primary', disabled: true, 'data-testid': 'create-submit' }, 'Create batch');

  const form = h(
    'form',
    { class: 'panel create-form', novalidate: true },
    h('div', { class: 'row' }, h('label', null, 'Agent ', agentSelect), h('label', null, 'Prompt version ', versionSelect)),
    h(
      'fieldset',
      { class: 'modes' },
      h('legend', null, 'Start'),
      modeInputs.map((input, i) => h('label', null, input, ' ', ['Immediately', 'Manually (start it later)', 'At a set time'][i])),
    ),
    schedule,
    h(
      'div',
      { class: 'row' },
      h('label', null, 'Concurrency ', concurrency),
      h('label', { class: 'check' }, interruption, ' Interruption'),
      h('label', { class: 'check' }, alternate, ' Try alternate number'),
      h('label', { class: 'check' }, dedupe, ' Remove duplicate phones'),
    ),
    h(
      'div',
      { class: 'file-row' },
      h('label', null, 'Contacts (CSV) ', file),
      h(
        'details',
        { class: 'muted small' },
        h('summary', null, 'CSV format'),
        h('p', null, 'First line: column names. phone_number is required; contact_id and name are recognised; any other column becomes contact metadata. Comma, semicolon or tab separated.'),
        h('pre', null, SAMPLE),
      ),
    ),
    preview,
    h('div', { class: 'actions' }, submit, h('a', { href: '#/batches', class: 'button' }, 'Back to batches')),
  );

  const el = h('section', { class: 'view' }, h('div', { class: 'toolbar' }, h('h1', null, 'New batch')), form, result);

  const mode = () => (modeInputs.find((i) => i.checked)?.value ?? 'immediate') as CallBatchStartMode;
  for (const i of modeInputs) i.addEventListener('change', () => (schedule.hidden = mode() !== 'scheduled'));

  function fillVersions() {
    const agent = agents.find((a) => a.id === agentSelect.value);
    replace(versionSelect, (agent?.promptVersions ?? []).map((v) => h('option', { value: v.id }, v.name)));
    updateSubmit();
  }
  agentSelect.addEventListener('change', fillVersions);

  function updateSubmit() {
    submit.disabled = !(parsed && parsed.contacts.length > 0 && agentSelect.value && versionSelect.value);
  }

  function renderPreview() {
    if (!parsed) return replace(preview);
    const p = parsed;
    const issueByLine = new Map(p.issues.map((i) => [i.line, i]));
    replace(
      preview,
      h(
        'p',
        { 'data-testid': 'csv-summary' },
        h('strong', null, `${p.contacts.length} contact${p.contacts.length === 1 ? '' : 's'} ready`),
        ` from ${fileName} (${p.rowCount} row${p.rowCount === 1 ? '' : 's'})`,
        p.issues.length ? h('span', { class: 'warn' }, ` · ${p.issues.length} row${p.issues.length === 1 ? '' : 's'} will be left out`) : null,
      ),
      p.issues.length
        ? h(
            'table',
            { class: 'grid issues', 'data-testid': 'csv-issues' },
            h('thead', null, h('tr', null, ['Line', 'Contact', 'Field', 'Problem'].map((t) => h('th', null, t)))),
            h('tbody', null, p.issues.map((i) => h('tr', null, h('td', { class: 'num' }, i.line), h('td', { class: 'mono' }, i.contactId ?? '—'), h('td', null, i.field), h('td', null, i.message)))),
          )
        : null,
      p.contacts.length
        ? h(
            'table',
            { class: 'grid sample' },
            h('thead', null, h('tr', null, ['Line', 'Contact', 'Name', 'Phone', 'Metadata'].map((t) => h('th', null, t)))),
            h(
              'tbody',
              null,
              p.contacts.slice(0, PREVIEW_ROWS).map((c, i) =>
                h(
                  'tr',
                  { class: issueByLine.has(p.lines[i]) ? 'bad' : '' },
                  h('td', { class: 'num' }, p.lines[i]),
                  h('td', { class: 'mono' }, c.contactId),
                  h('td', null, c.name ?? ''),
                  h('td', { class: 'mono' }, c.phoneNumber),
                  h('td', { class: 'small muted' }, c.metadata ? Object.entries(c.metadata).map(([k, v]) => `${k}=${v}`).join(', ') : ''),
                ),
              ),
              p.contacts.length > PREVIEW_ROWS ? h('tr', null, h('td', { colspan: 5, class: 'muted' }, `… and ${p.contacts.length - PREVIEW_ROWS} more`)) : null,
            ),
          )
        : null,
    );
  }

  file.addEventListener('change', async () => {
    replace(result);
    parsed = null;
    const f = file.files?.[0];
    if (!f) {
      renderPreview();
      return updateSubmit();
    }
    fileName = f.name;
    try {
      parsed = contactsFromCsv(await f.text());
    } catch (e) {
      replace(preview, h('p', { class: 'error-text', 'data-testid': 'csv-error' }, e instanceof CsvContactsError ? e.message : `Could not read the file: ${String((e as Error)?.message ?? e)}`));
      return updateSubmit();
    }
    renderPreview();
    updateSubmit();
  });

  function showResult(r: DashboardCreateBatchMutation['createCallBatch'], lines: number[]) {
    replace(
      result,
      h(
        'div',
        { class: 'panel ok' },
        h('h2', null, 'Batch created'),
        h('p', { 'data-testid': 'create-summary' }, `${r.acceptedContacts} of ${r.totalContacts} contacts accepted, ${r.rejectedContacts} rejected.`),
        r.validationErrors.length
          ? h(
              'table',
              { class: 'grid issues', 'data-testid': 'validation-errors' },
              h('thead', null, h('tr', null, ['CSV line', 'Contact', 'Field', 'Reason'].map((t) => h('th', null, t)))),
              h(
                'tbody',
                null,
                r.validationErrors.map((v) =>
                  h('tr', null, h('td', { class: 'num' }, lines[v.index - 1] ?? '?'), h('td', { class: 'mono' }, v.externalId), h('td', null, v.field), h('td', null, v.message)),
                ),
              ),
            )
          : null,
        h('a', { class: 'button primary', href: `#/batch/${encodeURIComponent(r.batchId)}`, 'data-testid': 'open-batch' }, 'Open batch'),
      ),
    );
  }

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    if (!parsed || submit.disabled) return;
    const p = parsed;
    const conc = concurrency.value.trim();
    const input: CreateCallBatchInput = {
      agentId: agentSelect.value,
      versionId: versionSelect.value,
      startMode: mode(),
      interruption: interruption.checked,
      useAlternateNumber: alternate.checked,
      deduplicateByPhone: dedupe.checked,
      scheduleDate: dateInput.value || date,
      scheduleTime: timeInput.value || time,
      scheduleTimezone: zoneInput.value.trim() || 'UTC',
      contacts: p.contacts.map((c) => ({ contactId: c.contactId, phoneNumber: c.phoneNumber, name: c.name, metadata: c.metadata })),
      ...(conc ? { concurrency: Number(conc) } : {}),
    };
    submit.disabled = true;
    replace(result, h('p', { class: 'muted' }, 'Creating…'));
    try {
      const { createCallBatch } = await ctx.api.request(DashboardCreateBatchDocument, { input });
      if (disposed) return;
      showResult(createCallBatch, p.lines);
    } catch (err) {
      if (err instanceof ApiError && err.details.length) {
        // Request validation: each detail, pointed at its CSV line when it names a contact.
        replace(
          result,
          h(
            'div',
            { class: 'panel bad' },
            h('h2', null, err.message),
            h(
              'ul',
              { 'data-testid': 'request-errors' },
              err.details.map((d) => {
                const line = lineOfDetail(d, p.lines);
                return h('li', null, line ? `CSV line ${line}: ` : '', d);
              }),
            ),
          ),
        );
      } else {
        replace(result);
        ctx.showError(err);
      }
    } finally {
      updateSubmit();
    }
  });

  ctx.api
    .request(DashboardCatalogDocument, {})
    .then((data) => {
      if (disposed) return;
      agents = data.agents;
      replace(
        agentSelect,
        agents.length ? agents.map((a) => h('option', { value: a.id }, a.name)) : h('option', { value: '' }, 'No agents on this account'),
      );
      fillVersions();
    })
    .catch((e) => {
      if (disposed) return;
      // The form stays usable to read; it says why it can't be submitted.
      replace(agentSelect, h('option', { value: '' }, 'Agents could not be loaded (reload to retry)'));
      ctx.showError(e);
    });

  return {
    el,
    dispose() {
      disposed = true;
    },
  };
}
