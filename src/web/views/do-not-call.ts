// The account's do-not-call list: numbers never dialled (docs/api.md#do-not-call-list). A page of
// the list, newest first, or the one number searched for; numbers added from a textarea (one a
// line, with an optional reason); a number removed after a confirm. A list holds up to 1,000,000
// numbers and page numbers reach only the first 10,000, so pages are read by the server's cursor:
// "Older" follows a page's nextCursor, "Newer" goes back through the cursors this view followed
// (kept in the view, not the URL), "First page" starts over.
import {
  DashboardAddSuppressionsDocument,
  DashboardRemoveSuppressionDocument,
  DashboardSuppressionsDocument,
  type DashboardSuppressionsQuery,
} from '../../codegen/graphql.ts';
import { ApiError } from '../api.ts';
import type { AppContext, View } from '../context.ts';
import { h, replace, setText } from '../dom.ts';
import { compactDateTime, dateTime } from '../format.ts';
import { actionButton, retryRow } from '../widgets.ts';

const PAGE_SIZE = 50;
/** The server takes at most this many numbers a request (docs/api.md#limits). */
const MAX_PER_ADD = 1_000;
const COLUMNS = 5;

type Entry = DashboardSuppressionsQuery['suppressions']['items'][number];

/** The textarea's numbers, each with its line (1-based), blank lines left out. */
function numbersOf(text: string): { line: number; number: string }[] {
  return text
    .split(/\r?\n/)
    .map((raw, i) => ({ line: i + 1, number: raw.trim() }))
    .filter((n) => n.number !== '');
}

/** `phoneNumbers.3: Invalid phone number` → `Line 5 (12345): Invalid phone number`. */
function lineProblem(detail: string, numbers: { line: number; number: string }[]): string {
  const m = /^phoneNumbers\.(\d+): (.*)$/s.exec(detail);
  const n = m ? numbers[Number(m[1])] : undefined;
  return n ? `Line ${n.line} (${n.number}): ${m![2]}` : detail;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export function doNotCallView(ctx: AppContext, params: URLSearchParams): View {
  const search = params.get('number')?.trim() ?? '';
  let disposed = false;
  let shown = 0;
  // The cursor of each page read so far, the first page's null: the last one is the page shown.
  const cursors: (string | null)[] = [null];
  const onFirstPage = () => cursors.length === 1;
  const showPage = (move: () => void) => {
    // One move per page shown: a second click before the page arrives would move twice.
    for (const b of pager.querySelectorAll('button')) b.disabled = true;
    move();
    load().catch(loadFailed);
  };

  const go = (number: string) => {
    const q = new URLSearchParams();
    if (number) q.set('number', number);
    const qs = q.toString();
    ctx.navigate(`#/do-not-call${qs ? `?${qs}` : ''}`);
  };

  const tbody = h('tbody');
  const pager = h('div', { class: 'pager' });
  const summary = h('span', { class: 'muted', 'data-testid': 'dnc-summary' });

  // Adding numbers.
  const numbers = h('textarea', {
    name: 'numbers',
    rows: 6,
    placeholder: '+14155550123\n+1 (415) 555-0124',
    'aria-label': 'Numbers to add, one per line',
    'data-testid': 'dnc-numbers',
    spellcheck: 'false',
  });
  const reason = h('input', {
    type: 'text',
    name: 'reason',
    maxlength: 500,
    placeholder: 'e.g. asked not to be called',
    'data-testid': 'dnc-reason',
  });
  const addButton = h('button', { type: 'submit', class: 'primary', 'data-testid': 'dnc-add' }, 'Add to list');
  const addResult = h('div', { class: 'dnc-result', 'data-testid': 'dnc-add-result', 'aria-live': 'polite' });
  const addForm = h(
    'form',
    { class: 'panel dnc-add', novalidate: true },
    h('h2', null, 'Add numbers'),
    h('label', { class: 'stacked' }, 'Numbers, one per line', numbers),
    h('label', { class: 'stacked' }, h('span', null, 'Reason ', h('span', { class: 'muted' }, '(optional)')), reason),
    h('div', { class: 'actions' }, addButton),
    addResult,
    h(
      'p',
      { class: 'muted small' },
      'Calls to these numbers are never placed: a contact with one is rejected when a batch is created, and a call not yet dialled is cancelled.',
    ),
  );

  async function add() {
    const lines = numbersOf(numbers.value);
    if (lines.length === 0) {
      replace(addResult, h('p', { class: 'error-text' }, 'Enter at least one number.'));
      return;
    }
    if (lines.length > MAX_PER_ADD) {
      replace(addResult, h('p', { class: 'error-text' }, `At most ${MAX_PER_ADD} numbers at once; this has ${lines.length}.`));
      return;
    }
    addButton.disabled = true;
    replace(addResult, h('p', { class: 'muted' }, 'Adding…'));
    try {
      const { addSuppressions: r } = await ctx.api.request(DashboardAddSuppressionsDocument, {
        phoneNumbers: lines.map((l) => l.number),
        reason: reason.value.trim() || undefined,
      });
      if (disposed) return;
      replace(addResult, h('p', { class: 'ok-text' }, `${r.added} added, ${r.alreadyListed} already listed.`));
      numbers.value = '';
      // The new numbers are the newest: show them.
      if (!search) showPage(() => cursors.splice(1));
      else go('');
    } catch (e) {
      if (disposed) return;
      if (e instanceof ApiError && e.details.length) {
        // Nothing was added: say which lines to fix.
        replace(
          addResult,
          h('p', { class: 'error-text' }, 'Nothing was added. Fix these lines and try again:'),
          h(
            'ul',
            { class: 'error-text', 'data-testid': 'dnc-add-errors' },
            e.details.map((d) => h('li', null, lineProblem(d, lines))),
          ),
        );
      } else {
        replace(addResult);
        ctx.showError(e);
      }
    } finally {
      addButton.disabled = false;
    }
  }
  addForm.addEventListener('submit', (e) => {
    e.preventDefault();
    if (!addButton.disabled) void add();
  });

  // Finding one number.
  const searchInput = h('input', {
    type: 'search',
    name: 'number',
    value: search,
    placeholder: 'Find a number',
    'aria-label': 'Find a number',
    'data-testid': 'dnc-search',
  });
  const searchForm = h(
    'form',
    { class: 'dnc-search', role: 'search' },
    searchInput,
    h('button', { type: 'submit', class: 'small' }, 'Find'),
    search ? h('a', { href: '#/do-not-call', class: 'small' }, 'Show all') : null,
  );
  searchForm.addEventListener('submit', (e) => {
    e.preventDefault();
    go(searchInput.value.trim());
  });

  function row(s: Entry): HTMLTableRowElement {
    const remove = actionButton(
      'Remove',
      async () => {
        if (!window.confirm(`Remove ${s.phoneNumber} from the do-not-call list? Batches may call it again.`)) return;
        try {
          await ctx.api.request(DashboardRemoveSuppressionDocument, { phoneNumber: s.phoneNumber });
          if (disposed) return;
          ctx.showNotice(`${s.phoneNumber} removed from the do-not-call list.`);
        } catch (e) {
          // Someone else removed it meanwhile: the list below shows that once read again.
          if (!(e instanceof ApiError && e.code === 'NOT_FOUND')) throw e;
          ctx.showError(e);
        }
        // The last number of a page past the first: go back a page. A page's cursor stays valid
        // after removals (it names the last number before it), so the page is read again as it is.
        if (shown === 1 && !onFirstPage()) showPage(() => cursors.pop());
        else load().catch(loadFailed);
      },
      ctx.showError,
      'danger small',
    );
    return h(
      'tr',
      { 'data-phone-number': s.phoneNumber },
      h('td', { class: 'mono' }, s.phoneNumber),
      h('td', { class: 'dnc-reason' }, s.reason ?? h('span', { class: 'muted' }, '—')),
      h('td', { class: 'small' }, s.source),
      h('td', { class: 'small nowrap', title: dateTime(s.createdAt) }, compactDateTime(s.createdAt)),
      h('td', { class: 'row-action' }, remove),
    );
  }

  async function load() {
    const { suppressions } = await ctx.api.request(DashboardSuppressionsDocument, {
      limit: PAGE_SIZE,
      phoneNumber: search || undefined,
      cursor: cursors[cursors.length - 1] ?? undefined,
    });
    if (disposed) return;
    const { items, pagination } = suppressions;
    shown = items.length;
    replace(
      tbody,
      items.length
        ? items.map(row)
        : h('tr', null, h('td', { colspan: COLUMNS, class: 'empty' }, search ? `${search} is not on the list.` : 'No numbers on the list.')),
    );
    setText(summary, search ? '' : plural(pagination.total, 'number'));
    const pages = Math.max(1, Math.ceil(pagination.total / PAGE_SIZE));
    const older = suppressions.nextCursor;
    replace(
      pager,
      h(
        'button',
        { type: 'button', class: 'small', disabled: onFirstPage(), 'data-testid': 'dnc-first', onclick: () => showPage(() => cursors.splice(1)) },
        'First page',
      ),
      h(
        'button',
        { type: 'button', class: 'small', disabled: onFirstPage(), 'data-testid': 'dnc-newer', onclick: () => showPage(() => cursors.pop()) },
        '← Newer',
      ),
      h('span', { class: 'muted', 'data-testid': 'dnc-page' }, `Page ${pagination.page} of ${pages}`),
      h(
        'button',
        { type: 'button', class: 'small', disabled: older === null, 'data-testid': 'dnc-older', onclick: () => showPage(() => cursors.push(older)) },
        'Older →',
      ),
    );
  }

  /** A list that could not be read says so in place, with a way to try again (never an empty table). */
  function loadFailed(e: unknown) {
    if (disposed) return;
    ctx.showError(e);
    replace(
      tbody,
      retryRow(COLUMNS, 'The list', () => load().catch(loadFailed), 'load-error'),
    );
  }

  const el = h(
    'section',
    { class: 'view' },
    h('div', { class: 'toolbar' }, h('a', { href: '#/batches', class: 'back' }, '← Batches'), h('h1', null, 'Do not call'), summary),
    h(
      'div',
      { class: 'dnc' },
      addForm,
      h(
        'div',
        { class: 'dnc-list' },
        h('div', { class: 'toolbar' }, searchForm),
        h(
          'div',
          { class: 'table-wrap' },
          h(
            'table',
            { class: 'grid suppressions', 'data-testid': 'suppressions' },
            h(
              'thead',
              null,
              h(
                'tr',
                null,
                ['Number', 'Reason', 'Source', 'Added', ''].map((t) => h('th', null, t)),
              ),
            ),
            tbody,
          ),
        ),
        pager,
      ),
    ),
  );

  replace(tbody, h('tr', null, h('td', { colspan: COLUMNS, class: 'empty' }, 'Loading…')));
  load().catch(loadFailed);
  return {
    el,
    dispose() {
      disposed = true;
    },
  };
}
