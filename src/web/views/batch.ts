// One batch: its status and counters live (batchProgress), its retry policy and expiry, its calls
// page by page with live status changes (callUpdated; a call waiting for a retry says when and
// why), a call's attempts, summary, outcomes, transcript and recording, and the batch operations.
import {
  DashboardBatchDocument,
  DashboardBatchProgressDocument,
  DashboardCallUpdatedDocument,
  DashboardCallsDocument,
  type CallStatusFilter,
  type DashboardBatchFragment,
  type DashboardCallUpdateFragment,
  type DashboardProgressFragment,
} from '../../codegen/graphql.ts';
import type { AppContext, View } from '../context.ts';
import { h, replace, setText } from '../dom.ts';
import { ApiError } from '../api.ts';
import { CALL_STATUSES, dateTime, done, percent, retryPolicyText, windowText } from '../format.ts';
import { operationButtons } from '../operations.ts';
import { liveReads } from '../live-reads.ts';
import { counterList, progressBar, retryRow, setStatus, statusBadge } from '../widgets.ts';
import { callCells, callDetail, newer, type CallView } from './call-view.ts';
import { callAttempts } from './call-attempts.ts';
import { outcomesPanel } from './outcomes-panel.ts';
import { createPace } from '../pace.ts';
import { csvExportButton } from './csv-export.ts';

const PAGE_SIZE = 50;
/** Past this many updates during one page read, the page is read again instead. */
const MAX_EARLY_UPDATES = 2_000;
/** Must match the breakpoint in styles.css where the call details move below the calls. */
const STACKED = '(max-width: 900px)';

const fromUpdate = (u: DashboardCallUpdateFragment): CallView => {
  const { callId, ...rest } = u;
  return { id: callId, ...rest };
};

export function batchView(ctx: AppContext, id: string, params: URLSearchParams): View {
  const statusFilter = (params.get('status') ?? '') as CallStatusFilter | '';
  const page = Math.max(1, Number(params.get('page')) || 1);
  let disposed = false;
  let batch: DashboardBatchFragment | undefined;
  const calls = new Map<string, { call: CallView; tr: HTMLTableRowElement }>();
  let selected: string | null = null;
  let reloadTimer: ReturnType<typeof setTimeout> | undefined;
  /** Updates of calls not shown, kept while a page read is in flight (it may bring them). */
  const early = new Map<string, CallView>();
  let pageReads = 0;

  const title = h('h1', { class: 'mono', title: id }, id);
  const badge = statusBadge('…');
  const bar = progressBar();
  bar.el.classList.add('big');
  const pct = h('span', { class: 'pct', 'data-testid': 'percent' }, '0%');
  const paceText = h('span', { class: 'pace muted', 'data-testid': 'pace' });
  const pace = createPace();
  let ended = -1;
  /** Calls still to end while the batch runs; null otherwise. */
  let running: number | null = null;
  const showPace = () => {
    if (running !== null) pace.sample(ended, Date.now());
    setText(paceText, running === null ? '' : pace.describe(running));
  };
  // Counters arrive only when something changes: a stall still moves the pace on.
  const paceTimer = setInterval(showPace, 5_000);
  const outcomes = outcomesPanel(ctx, id);
  const counters = counterList();
  const facts = h('dl', { class: 'facts' });
  const live = liveReads();
  const ops = operationButtons(ctx, id, (answer) => applyRead(answer));
  const tbody = h('tbody');
  const pager = h('div', { class: 'pager' });
  const attempts = callAttempts(ctx);
  /** The batch's attempt limit, once the batch is read (null: no retry policy, or not read yet). */
  const maxAttempts = () => batch?.retry?.maxAttempts ?? null;
  const detail = h(
    'aside',
    { class: 'call-detail', 'data-testid': 'call-detail' },
    h('p', { class: 'muted' }, 'Select a call to read its summary, outcomes and transcript.'),
  );
  const callsSummary = h('span', { class: 'muted' });

  const go = (p: number, s: string) => {
    const q = new URLSearchParams();
    if (p > 1) q.set('page', String(p));
    if (s) q.set('status', s);
    const qs = q.toString();
    ctx.navigate(`#/batch/${encodeURIComponent(id)}${qs ? `?${qs}` : ''}`);
  };

  const filter = h(
    'select',
    { 'aria-label': 'Filter calls by status', 'data-testid': 'call-filter', onchange: (e: Event) => go(1, (e.target as HTMLSelectElement).value) },
    h('option', { value: '' }, 'All calls'),
    CALL_STATUSES.map((s) => h('option', { value: s, selected: s === statusFilter }, s.replace('_', ' '))),
  );

  const exportButton = csvExportButton(ctx, id);

  const el = h(
    'section',
    { class: 'view' },
    h(
      'div',
      { class: 'toolbar' },
      h('a', { href: '#/batches', class: 'back' }, '← Batches'),
      title,
      badge,
      h('span', { class: 'spacer' }),
      exportButton,
      ops.el,
    ),
    h('div', { class: 'panel progress-panel' }, h('div', { class: 'bar-row' }, bar.el, pct, paceText), counters.el, facts),
    outcomes.el,
    h(
      'div',
      { class: 'split' },
      h(
        'div',
        { class: 'calls-pane' },
        h(
          'div',
          { class: 'toolbar' },
          h('h2', null, 'Calls'),
          filter,
          callsSummary,
          h('span', { class: 'spacer' }),
          h('button', { type: 'button', class: 'small', onclick: () => void loadCalls().catch(callsFailed) }, 'Refresh'),
        ),
        h(
          'div',
          { class: 'table-wrap' },
          h(
            'table',
            { class: 'grid calls', 'data-testid': 'calls' },
            h(
              'thead',
              null,
              h(
                'tr',
                null,
                ['#', 'Contact', 'Phone', 'Status', 'Duration', 'Transcript', 'Ended'].map((t) =>
                  h('th', { class: t === '#' || t === 'Duration' ? 'num' : null }, t),
                ),
              ),
            ),
            tbody,
          ),
        ),
        pager,
      ),
      detail,
    ),
  );

  function applyProgress(
    p: Pick<
      DashboardProgressFragment,
      'status' | 'queued' | 'inProgress' | 'completed' | 'failed' | 'cancelled' | 'acceptedContacts' | 'callbacks' | 'startedAt' | 'completedAt'
    >,
  ) {
    setStatus(badge, p.status);
    bar.update(p);
    setText(pct, `${Math.floor(percent(done(p), p.acceptedContacts))}%`);
    if (ended >= 0 && done(p) !== ended) outcomes.changed();
    ended = done(p);
    running = p.status === 'running' || p.status === 'dispatching' ? p.acceptedContacts - ended : null;
    showPace();
    counters.update(p);
    ops.update(p);
    if (batch) {
      batch = { ...batch, ...p };
      renderFacts(batch);
    }
    el.dataset.status = p.status;
  }

  function applyBatch(b: DashboardBatchFragment) {
    const limit = maxAttempts();
    batch = b;
    applyProgress(b);
    // Calls read before the batch said "attempt 2" without "of 3".
    if (maxAttempts() !== limit) {
      for (const r of calls.values()) replace(r.tr, ...callCells(r.call, maxAttempts()));
      if (selected) showCall(selected);
    }
  }

  function renderFacts(b: DashboardBatchFragment) {
    const fact = (label: string, value: string | number, testId?: string) => [
      h('dt', null, label),
      h('dd', { 'data-testid': testId }, String(value)),
    ];
    replace(
      facts,
      b.label ? fact('Label', b.label, 'batch-label') : null,
      fact('Agent', b.agent.name),
      fact('Start mode', b.startMode),
      b.startMode === 'scheduled' ? fact('Scheduled', `${dateTime(b.scheduledAt)} (${b.timezone})`) : null,
      fact('Concurrency', b.concurrency),
      fact('Contacts', `${b.totalContacts} submitted · ${b.rejectedContacts} rejected`),
      b.retry ? fact('Retries', retryPolicyText(b.retry), 'batch-retry') : null,
      b.expiresAt ? fact('Expires', dateTime(b.expiresAt), 'batch-expires') : null,
      b.callingWindow ? fact('Calling window', windowText(b.callingWindow), 'batch-window') : null,
      b.enforcedCallingWindow ? fact('Account window', windowText(b.enforcedCallingWindow), 'batch-enforced-window') : null,
      fact('Created', dateTime(b.createdAt)),
      fact('Started', dateTime(b.startedAt)),
      fact('Finished', dateTime(b.completedAt)),
    );
  }

  function callRow(c: CallView): HTMLTableRowElement {
    const tr = h('tr', { 'data-call-id': c.id, tabindex: 0, class: c.id === selected ? 'selected' : '' });
    const select = () => showCall(c.id, true);
    tr.addEventListener('click', select);
    tr.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' || e.key === ' ') {
        e.preventDefault();
        select();
      }
    });
    replace(tr, ...callCells(c, maxAttempts()));
    return tr;
  }

  function showCall(callId: string, reveal = false) {
    selected = callId;
    for (const [cid, r] of calls) r.tr.classList.toggle('selected', cid === callId);
    const c = calls.get(callId)?.call;
    if (!c) return;
    replace(detail, ...callDetail(c, maxAttempts(), attempts.el));
    attempts.show(c);
    // On a narrow screen the details sit below the table: bring them into view when asked for.
    if (reveal && window.matchMedia(STACKED).matches) detail.scrollIntoView({ block: 'start', behavior: 'smooth' });
  }

  async function applyRead(request: Promise<DashboardBatchFragment>) {
    const { value, fresh } = await live.read(request);
    if (!disposed) applyBatch(fresh(value));
  }

  const loadBatch = () => applyRead(ctx.api.request(DashboardBatchDocument, { id }).then((d) => d.batch));

  /** A batch that is not there (or not this account's): say so instead of a page of zeros. */
  function notFound() {
    if (disposed) return;
    stop();
    replace(
      el,
      h(
        'div',
        { class: 'panel', 'data-testid': 'not-found' },
        h('h1', null, 'Batch not found'),
        h('p', { class: 'muted' }, 'No batch ', h('span', { class: 'mono' }, id), ' exists on this account.'),
        h('a', { href: '#/batches', class: 'button' }, '← Back to batches'),
      ),
    );
  }

  function failed(e: unknown) {
    if (disposed) return;
    if (e instanceof ApiError && e.code === 'NOT_FOUND') return notFound();
    ctx.showError(e);
  }

  function batchFailed(e: unknown) {
    failed(e);
    if (disposed || batch || !el.isConnected) return;
    replace(
      facts,
      h('dt', null, 'Not loaded'),
      h(
        'dd',
        { 'data-testid': 'load-error' },
        h('button', { type: 'button', class: 'small', onclick: () => loadBatch().catch(batchFailed) }, 'Try again'),
      ),
    );
  }

  function callsFailed(e: unknown) {
    failed(e);
    if (disposed || calls.size > 0) return;
    replace(
      tbody,
      retryRow(7, 'The calls', () => loadCalls().catch(callsFailed)),
    );
  }

  async function readPage() {
    pageReads++;
    try {
      return await ctx.api.request(DashboardCallsDocument, {
        batchId: id,
        page,
        limit: PAGE_SIZE,
        filter: statusFilter ? { status: statusFilter } : undefined,
      });
    } finally {
      pageReads--;
    }
  }

  async function loadCalls() {
    const data = await readPage();
    if (disposed) return;
    const { items, pagination } = data.calls;
    const caught = new Map(early);
    if (pageReads === 0) early.clear();
    calls.clear();
    replace(
      tbody,
      items.length
        ? items.map((read) => {
            const update = caught.get(read.id);
            const c = update ? newer(update, read) : read;
            const tr = callRow(c);
            calls.set(c.id, { call: c, tr });
            return tr;
          })
        : h('tr', null, h('td', { colspan: 7, class: 'empty' }, statusFilter ? 'No calls with this status.' : 'No calls.')),
    );
    setText(callsSummary, `${pagination.total} call${pagination.total === 1 ? '' : 's'}`);
    const pages = Math.max(1, Math.ceil(pagination.total / PAGE_SIZE));
    replace(
      pager,
      h('button', { type: 'button', class: 'small', disabled: page <= 1, onclick: () => go(page - 1, statusFilter) }, '← Previous'),
      h('span', { class: 'muted' }, `Page ${page} of ${pages}`),
      h('button', { type: 'button', class: 'small', disabled: !pagination.hasMore, onclick: () => go(page + 1, statusFilter) }, 'Next →'),
    );
    if (selected && calls.has(selected)) showCall(selected);
  }

  /** With a status filter, changes move calls in and out of the page: re-read it, at most once a second. */
  function scheduleCallsReload() {
    if (reloadTimer || disposed) return;
    reloadTimer = setTimeout(() => {
      reloadTimer = undefined;
      loadCalls().catch(callsFailed);
    }, 1000);
  }

  const unsubscribers = [
    ctx.api.subscribe(
      DashboardBatchProgressDocument,
      { batchId: id },
      {
        next: ({ batchProgress }) => {
          live.seen(batchProgress);
          applyProgress(batchProgress);
        },
        error: failed,
      },
    ),
    ctx.api.subscribe(
      DashboardCallUpdatedDocument,
      { batchId: id },
      {
        next: ({ callUpdated }) => {
          const c = fromUpdate(callUpdated);
          const shown = calls.get(c.id);
          if (shown && newer(c, shown.call) === c) {
            shown.call = c;
            replace(shown.tr, ...callCells(c, maxAttempts()));
            if (selected === c.id) showCall(c.id);
          } else if (!shown && pageReads > 0) {
            if (early.size < MAX_EARLY_UPDATES) early.set(c.id, c);
            else scheduleCallsReload();
          }
          if (statusFilter && (shown ? c.status !== statusFilter : c.status === statusFilter)) scheduleCallsReload();
          if (c.outcomes) outcomes.changed();
        },
        error: failed,
      },
    ),
    ctx.api.onReconnect(() => {
      loadBatch().catch(batchFailed);
      scheduleCallsReload();
    }),
  ];
  function stop() {
    for (const u of unsubscribers.splice(0)) u();
    outcomes.dispose();
    attempts.dispose();
    clearInterval(paceTimer);
    if (reloadTimer) clearTimeout(reloadTimer);
  }

  replace(tbody, h('tr', null, h('td', { colspan: 7, class: 'empty' }, 'Loading…')));
  loadBatch().catch(batchFailed);
  loadCalls().catch(callsFailed);

  return {
    el,
    dispose() {
      disposed = true;
      stop();
    },
  };
}
