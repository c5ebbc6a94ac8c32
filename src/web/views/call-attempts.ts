// The selected call's attempts (every dial, the alternate number's included), read from its
// history when the call is selected and again whenever a live update changes it: the list lives in
// the call's history, which the update does not carry. One read at a time; a change that arrives
// meanwhile is read once the first read is back.
import { DashboardCallAttemptsDocument, type DashboardCallAttemptsQuery } from '../../codegen/graphql.ts';
import type { AppContext } from '../context.ts';
import { h, replace } from '../dom.ts';
import { compactDateTime, dateTime, words } from '../format.ts';
import type { CallView } from './call-view.ts';

type Attempt = DashboardCallAttemptsQuery['call']['attempts'][number];

/** The state of a call the list depends on: a new one means a new dial or a dial that ended. */
const versionOf = (c: CallView) => `${c.id}|${c.updatedAt}|${c.attemptCount}`;

function result(a: Attempt): HTMLElement {
  const reason = a.disconnectReason && a.disconnectReason !== a.status ? a.disconnectReason : null;
  return h('td', null, words(a.status), reason ? h('div', { class: 'muted' }, words(reason)) : null);
}

function attemptsTable(attempts: Attempt[]): HTMLElement {
  return h(
    'table',
    { class: 'grid attempts-table' },
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        ['#', 'Number', 'Result', 'Started / ended'].map((t) => h('th', { class: t === '#' ? 'num' : null }, t)),
      ),
    ),
    h(
      'tbody',
      null,
      attempts.map((a) =>
        h(
          'tr',
          { 'data-attempt': a.number },
          h('td', { class: 'num' }, a.number),
          h('td', { class: 'mono' }, a.phoneNumber, a.alternate ? h('div', { class: 'muted' }, 'alternate') : null),
          result(a),
          // One cell, two lines: five columns do not fit the details pane.
          h(
            'td',
            { class: 'nowrap' },
            h('div', { title: dateTime(a.startedAt) }, compactDateTime(a.startedAt)),
            h('div', { class: 'muted', title: dateTime(a.endedAt) }, a.endedAt ? compactDateTime(a.endedAt) : 'not ended'),
          ),
        ),
      ),
    ),
  );
}

export function callAttempts(ctx: AppContext) {
  const el = h('div', { class: 'attempts', 'data-testid': 'call-attempts' });
  /** The call the panel shows now, and the version of it the list on screen was read for. */
  let wanted: CallView | null = null;
  let shown = '';
  let reading = false;
  let disposed = false;

  async function read(): Promise<void> {
    const call = wanted;
    if (!call || reading || disposed) return;
    reading = true;
    const version = versionOf(call);
    try {
      const { attempts } = (await ctx.api.request(DashboardCallAttemptsDocument, { id: call.id })).call;
      if (!disposed && wanted?.id === call.id) {
        replace(el, attempts.length ? attemptsTable(attempts) : h('p', { class: 'muted' }, 'Not dialled yet.'));
        shown = version;
      }
    } catch (e) {
      if (!disposed && wanted?.id === call.id) {
        ctx.showError(e);
        const retry = h('button', { type: 'button', class: 'small', onclick: () => void read() }, 'Try again');
        replace(el, h('p', { class: 'muted', 'data-testid': 'attempts-error' }, 'The attempts could not be loaded. ', retry));
        shown = version;
      }
    } finally {
      reading = false;
    }
    // The call changed (or another was selected) while this read was out.
    if (!disposed && wanted && versionOf(wanted) !== shown) void read();
  }

  return {
    el,
    /** The panel shows `c` (newly selected, or a live update of it). */
    show(c: CallView): void {
      const other = wanted?.id !== c.id;
      wanted = c;
      if (versionOf(c) === shown) return;
      if (c.attemptCount === 0) {
        replace(el, h('p', { class: 'muted' }, 'Not dialled yet.'));
        shown = versionOf(c);
        return;
      }
      // Another call's list would be wrong meanwhile; the same call's stays until the new one is in.
      if (other) replace(el, h('p', { class: 'muted' }, 'Loading…'));
      void read();
    },
    dispose(): void {
      disposed = true;
    },
  };
}
