// The account's batches with live progress: one page from the batches query, then every change
// from the accountBatches subscription applied to its row in place. A batch not on the page (a new
// one) reloads the page, at most once a second.
import {
  DashboardAccountBatchesDocument,
  DashboardBatchesDocument,
  type BatchListStatus,
  type DashboardBatchFragment,
  type DashboardProgressFragment,
} from '../../codegen/graphql.ts';
import type { AppContext, View } from '../context.ts';
import { h, replace, setText } from '../dom.ts';
import { compactDateTime, dateTime, done, shortId } from '../format.ts';
import { operationButtons } from '../operations.ts';
import { liveReads } from '../live-reads.ts';
import { progressBar, retryRow, setStatus, statusBadge } from '../widgets.ts';

const PAGE_SIZE = 20;
const FILTERS: [BatchListStatus | '', string][] = [
  ['', 'All batches'],
  ['active', 'Active'],
  ['pending', 'Pending'],
  ['completed', 'Completed'],
  ['cancelled', 'Cancelled'],
];

type Row = {
  tr: HTMLTableRowElement;
  update(p: Partial<DashboardProgressFragment> & Pick<DashboardProgressFragment, 'status'>): void;
};

export function batchesView(ctx: AppContext, params: URLSearchParams): View {
  const page = Math.max(1, Number(params.get('page')) || 1);
  const status = (params.get('status') ?? '') as BatchListStatus | '';
  const rows = new Map<string, Row>();
  const live = liveReads();
  const tbody = h('tbody');
  const pager = h('div', { class: 'pager' });
  const summary = h('span', { class: 'muted' });
  let disposed = false;
  let reloadTimer: ReturnType<typeof setTimeout> | undefined;

  const go = (p: number, s: string) => {
    const q = new URLSearchParams();
    if (p > 1) q.set('page', String(p));
    if (s) q.set('status', s);
    const qs = q.toString();
    ctx.navigate(`#/batches${qs ? `?${qs}` : ''}`);
  };

  const filter = h(
    'select',
    { 'aria-label': 'Filter by status', onchange: (e: Event) => go(1, (e.target as HTMLSelectElement).value) },
    FILTERS.map(([v, label]) => h('option', { value: v, selected: v === status }, label)),
  );

  const el = h(
    'section',
    { class: 'view' },
    h(
      'div',
      { class: 'toolbar' },
      h('h1', null, 'Batches'),
      filter,
      summary,
      h('span', { class: 'spacer' }),
      h('a', { class: 'button primary', href: '#/new', 'data-testid': 'new-batch' }, 'New batch'),
    ),
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { class: 'grid batches', 'data-testid': 'batches' },
        h(
          'thead',
          null,
          h(
            'tr',
            null,
            ['Batch', 'Created', 'Status', 'Progress', 'Queued', 'In progress', 'Completed', 'Failed', 'Cancelled', ''].map((t, i) =>
              h('th', { class: i >= 4 && i <= 8 ? 'num' : null }, t),
            ),
          ),
        ),
        tbody,
      ),
    ),
    pager,
  );

  function row(b: DashboardBatchFragment): Row {
    const badge = statusBadge(b.status);
    const bar = progressBar();
    const frac = h('span', { class: 'frac' });
    const cells = {
      queued: h('td', { class: 'num' }),
      inProgress: h('td', { class: 'num' }),
      completed: h('td', { class: 'num' }),
      failed: h('td', { class: 'num' }),
      cancelled: h('td', { class: 'num' }),
    };
    let current = { ...b };
    const ops = operationButtons(ctx, b.id, async (answer) => {
      const { value, fresh } = await live.read(answer);
      update(fresh(value));
    });
    const tr = h(
      'tr',
      { 'data-batch-id': b.id },
      h(
        'td',
        null,
        h('a', { href: `#/batch/${encodeURIComponent(b.id)}`, class: 'mono', title: b.id }, shortId(b.id)),
        b.label ? h('div', { class: 'small', 'data-testid': 'batch-label' }, b.label) : null,
        h('div', { class: 'muted small' }, b.agent.name, ' · ', b.startMode),
      ),
      h('td', { class: 'small nowrap', title: dateTime(b.createdAt) }, compactDateTime(b.createdAt)),
      h('td', null, badge),
      h('td', { class: 'progress-cell' }, bar.el, frac),
      cells.queued,
      cells.inProgress,
      cells.completed,
      cells.failed,
      cells.cancelled,
      h('td', null, ops.el),
    );
    function update(p: Partial<DashboardProgressFragment> & Pick<DashboardProgressFragment, 'status'>) {
      current = { ...current, ...p };
      setStatus(badge, current.status);
      bar.update(current);
      setText(frac, `${done(current)} / ${current.acceptedContacts}`);
      for (const k of ['queued', 'inProgress', 'completed', 'failed', 'cancelled'] as const) setText(cells[k], current[k]);
      ops.update(current);
    }
    update(b);
    return { tr, update };
  }

  async function load() {
    const { value: data, fresh } = await live.read(
      ctx.api.request(DashboardBatchesDocument, {
        page,
        limit: PAGE_SIZE,
        filter: status ? { status } : undefined,
      }),
    );
    if (disposed) return;
    const { pagination } = data.batches;
    const items = data.batches.items.map(fresh);
    rows.clear();
    replace(
      tbody,
      items.length
        ? items.map((b) => {
            const r = row(b);
            rows.set(b.id, r);
            return r.tr;
          })
        : h(
            'tr',
            null,
            h('td', { colspan: 10, class: 'empty' }, status ? 'No batches match this filter.' : 'No batches yet. Create one from a CSV file.'),
          ),
    );
    setText(summary, `${pagination.total} batch${pagination.total === 1 ? '' : 'es'}`);
    const pages = Math.max(1, Math.ceil(pagination.total / PAGE_SIZE));
    replace(
      pager,
      h('button', { type: 'button', class: 'small', disabled: page <= 1, onclick: () => go(page - 1, status) }, '← Newer'),
      h('span', { class: 'muted' }, `Page ${page} of ${pages}`),
      h('button', { type: 'button', class: 'small', disabled: !pagination.hasMore, onclick: () => go(page + 1, status) }, 'Older →'),
    );
  }

  function scheduleReload() {
    if (reloadTimer || disposed) return;
    reloadTimer = setTimeout(() => {
      reloadTimer = undefined;
      load().catch(loadFailed);
    }, 1000);
  }

  const unsubscribe = ctx.api.subscribe(
    DashboardAccountBatchesDocument,
    {},
    {
      next: ({ accountBatches: p }) => {
        live.seen(p);
        const r = rows.get(p.batchId);
        if (r) r.update(p);
        // A batch this page doesn't show yet: a new one belongs on the first page.
        else if (page === 1) scheduleReload();
      },
      error: ctx.showError,
    },
  );
  const offReconnect = ctx.api.onReconnect(() => scheduleReload());

  /** A page that could not be read says so in place, with a way to try again (never an empty table). */
  function loadFailed(e: unknown) {
    if (disposed) return;
    ctx.showError(e);
    if (rows.size > 0) return;
    replace(
      tbody,
      retryRow(10, 'The batches', () => load().catch(loadFailed), 'load-error'),
    );
  }

  replace(tbody, h('tr', null, h('td', { colspan: 10, class: 'empty' }, 'Loading…')));
  load().catch(loadFailed);
  return {
    el,
    dispose() {
      disposed = true;
      unsubscribe();
      offReconnect();
      if (reloadTimer) clearTimeout(reloadTimer);
    },
  };
}
