// A batch from a CSV file: the file is read in the browser, every row is checked before anything
// is sent (rows the API would refuse the whole request for are listed and left out), and after
// creation the server's own per-contact rejections are shown against the CSV lines they came from.
import { DashboardCatalogDocument, DashboardCreateBatchDocument, type CreateCallBatchInput } from '../../codegen/graphql.ts';
import { ApiError } from '../api.ts';
import type { ContactsFromCsv } from '../../csv/contacts-csv.ts';
import type { AppContext, View } from '../context.ts';
import { h, replace } from '../dom.ts';
import { agentPicker } from './agent-picker.ts';
import { batchSettings } from './batch-settings.ts';
import { contactsFile } from './contacts-file.ts';
import { createdPanel, requestErrorsPanel } from './create-result.ts';

export function createView(ctx: AppContext): View {
  let disposed = false;
  const result = h('div', { class: 'create-result', 'data-testid': 'create-result' });
  const submit = h('button', { type: 'submit', class: 'primary', disabled: true, 'data-testid': 'create-submit' }, 'Create batch');
  const picker = agentPicker(updateSubmit);
  const settings = batchSettings(ctx.account.batchConcurrency);
  const contacts = contactsFile(() => replace(result), updateSubmit);

  const form = h(
    'form',
    { class: 'panel create-form', novalidate: true },
    picker.el,
    settings.els,
    contacts.els,
    h('div', { class: 'actions' }, submit, h('a', { href: '#/batches', class: 'button' }, 'Back to batches')),
  );
  const el = h('section', { class: 'view' }, h('div', { class: 'toolbar' }, h('h1', null, 'New batch')), form, result);

  function updateSubmit() {
    const parsed = contacts.parsed();
    submit.disabled = !(parsed && parsed.contacts.length > 0 && picker.agentId() && picker.versionId());
  }

  function batchInput(p: ContactsFromCsv): CreateCallBatchInput {
    return {
      agentId: picker.agentId(),
      versionId: picker.versionId(),
      ...settings.input(),
      // One value: GraphQL would check a list of input objects field by field (slow at 100k rows).
      contactList: p.contacts.map((c) => ({ contactId: c.contactId, phoneNumber: c.phoneNumber, name: c.name, metadata: c.metadata })),
    };
  }

  async function create(p: ContactsFromCsv) {
    const input = batchInput(p);
    submit.disabled = true;
    replace(result, h('p', { class: 'muted' }, 'Creating…'));
    try {
      const { createCallBatch } = await ctx.api.request(DashboardCreateBatchDocument, { input });
      if (disposed) return;
      replace(result, createdPanel(createCallBatch, p.lines));
    } catch (err) {
      if (err instanceof ApiError && err.details.length) {
        replace(result, requestErrorsPanel(err, p.lines));
      } else {
        replace(result);
        ctx.showError(err);
      }
    } finally {
      updateSubmit();
    }
  }

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const parsed = contacts.parsed();
    if (parsed && !submit.disabled) void create(parsed);
  });

  ctx.api
    .request(DashboardCatalogDocument, {})
    .then((data) => {
      if (!disposed) picker.show(data.agents);
    })
    .catch((e) => {
      if (disposed) return;
      // The form stays usable to read; it says why it can't be submitted.
      picker.unavailable();
      ctx.showError(e);
    });

  return {
    el,
    dispose() {
      disposed = true;
    },
  };
}
