// The account's caller-ID numbers and their health (docs/campaigns.md "Number health"): per number
// its area code, dials today (UTC), rolling answer and short-call rates, and whether it rests.
// Read once per visit (the job changes rests every few minutes at most); "Refresh" reads again.
import { DashboardNumbersDocument, type DashboardNumbersQuery } from '../../codegen/graphql.ts';
import type { AppContext, View } from '../context.ts';
import { h, replace } from '../dom.ts';
import { compactDateTime, dateTime, words } from '../format.ts';
import { retryRow } from '../widgets.ts';

const COLUMNS = 6;

type Did = DashboardNumbersQuery['didNumbers'][number];

const rate = (r: number | null | undefined) => (r == null ? '—' : `${Math.round(r * 1000) / 10} %`);

function restCell(d: Did): HTMLTableCellElement {
  const { restedUntil, restReason, flagged, flaggedReason } = d.health;
  if (restedUntil)
    return h(
      'td',
      { class: 'small nowrap', title: `${dateTime(restedUntil)} (${words(restReason ?? '')})` },
      `${compactDateTime(restedUntil)} · ${words(restReason ?? '')}`,
    );
  if (flagged) return h('td', { class: 'small', title: flaggedReason ?? '' }, 'flagged');
  return h('td', { class: 'small muted' }, '—');
}

function row(d: Did, today: string): HTMLTableRowElement {
  const dialsToday = d.health.days.find((x) => x.day === today)?.dials ?? 0;
  return h(
    'tr',
    { 'data-did': d.id, class: d.health.restedUntil || d.health.flagged ? 'resting' : '' },
    h('td', { class: 'mono' }, d.number),
    h('td', { class: 'mono', title: d.region ?? '' }, d.areaCode ?? '—'),
    h('td', { class: 'num', title: `${d.health.dials} in the window` }, dialsToday),
    h('td', { class: 'num' }, rate(d.health.answerRate)),
    h('td', { class: 'num' }, rate(d.health.shortCallRate)),
    restCell(d),
  );
}

export function numbersView(ctx: AppContext): View {
  let disposed = false;
  const tbody = h('tbody');

  async function load() {
    const { didNumbers } = await ctx.api.request(DashboardNumbersDocument, {});
    if (disposed) return;
    const today = new Date().toISOString().slice(0, 10);
    replace(
      tbody,
      didNumbers.length ? didNumbers.map((d) => row(d, today)) : h('tr', null, h('td', { colspan: COLUMNS, class: 'empty' }, 'No numbers.')),
    );
  }
  function loadFailed(e: unknown) {
    if (disposed) return;
    ctx.showError(e);
    replace(
      tbody,
      retryRow(COLUMNS, 'The numbers', () => load().catch(loadFailed), 'load-error'),
    );
  }

  const el = h(
    'section',
    { class: 'view' },
    h(
      'div',
      { class: 'toolbar' },
      h('a', { href: '#/batches', class: 'back' }, '← Batches'),
      h('h1', null, 'Numbers'),
      h('button', { type: 'button', class: 'small', onclick: () => load().catch(loadFailed) }, 'Refresh'),
    ),
    h('p', { class: 'muted' }, 'Caller-ID numbers over the last days: a number answered far less than the others rests for a while.'),
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { class: 'grid numbers', 'data-testid': 'numbers' },
        h(
          'thead',
          null,
          h(
            'tr',
            null,
            ['Number', 'Area code', 'Dials today', 'Answer rate', 'Short calls', 'Rested until'].map((t, i) =>
              h('th', i >= 2 && i <= 4 ? { class: 'num' } : null, t),
            ),
          ),
        ),
        tbody,
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
