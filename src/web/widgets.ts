// Pieces shared by the views: status badges, the stacked progress bar and the counter list, each
// updated in place when a live value arrives (no re-render, so focus and scroll stay put).
import { h, setText } from './dom.ts';
import { done, percent, type Counters } from './format.ts';

export function statusBadge(status: string): HTMLSpanElement {
  const el = h('span', { class: `badge s-${status}`, 'data-testid': 'status' }, status.replace('_', ' '));
  return el;
}

export function setStatus(el: HTMLElement, status: string): void {
  el.className = `badge s-${status}`;
  setText(el, status.replace('_', ' '));
}

const SEGMENTS = [
  ['completed', 'seg-completed'],
  ['failed', 'seg-failed'],
  ['cancelled', 'seg-cancelled'],
  ['inProgress', 'seg-progress'],
] as const;

export function progressBar(): { el: HTMLElement; update(c: Counters): void } {
  const segs = SEGMENTS.map(([, cls]) => h('span', { class: `seg ${cls}` }));
  const el = h('div', { class: 'bar', role: 'progressbar', 'aria-valuemin': 0, 'aria-valuemax': 100 }, segs);
  return {
    el,
    update(c) {
      SEGMENTS.forEach(([key], i) => {
        segs[i].style.width = `${percent(c[key], c.acceptedContacts)}%`;
      });
      const p = percent(done(c), c.acceptedContacts);
      el.setAttribute('aria-valuenow', String(p));
      el.title = `${done(c)} of ${c.acceptedContacts} calls finished (${p}%)`;
    },
  };
}

const COUNTERS = [
  ['queued', 'Queued'],
  ['inProgress', 'In progress'],
  ['completed', 'Completed'],
  ['failed', 'Failed'],
  ['cancelled', 'Cancelled'],
] as const;

export function counterList(): { el: HTMLElement; update(c: Counters & { callbacks?: number }): void } {
  const values = new Map<string, HTMLElement>();
  const items = COUNTERS.map(([key, label]) => {
    const v = h('dd', { 'data-testid': `counter-${key}` }, '0');
    values.set(key, v);
    return h('div', { class: `counter c-${key}` }, h('dt', null, label), v);
  });
  const accepted = h('dd', { 'data-testid': 'counter-accepted' }, '0');
  const callbacks = h('dd', { 'data-testid': 'counter-callbacks' }, '0');
  const el = h(
    'dl',
    { class: 'counters' },
    items,
    h('div', { class: 'counter c-total' }, h('dt', null, 'Accepted'), accepted),
    h('div', { class: 'counter c-callbacks' }, h('dt', null, 'Callbacks'), callbacks),
  );
  return {
    el,
    update(c) {
      for (const [key] of COUNTERS) setText(values.get(key), c[key]);
      setText(accepted, c.acceptedContacts);
      setText(callbacks, c.callbacks ?? 0);
    },
  };
}

/** A button that runs an async action once at a time and reports failures. */
export function actionButton(label: string, run: () => Promise<void>, onError: (e: unknown) => void, cls = ''): HTMLButtonElement {
  const b = h('button', { type: 'button', class: cls });
  b.textContent = label;
  b.addEventListener('click', async (ev) => {
    ev.stopPropagation();
    if (b.disabled) return;
    b.disabled = true;
    try {
      await run();
    } catch (e) {
      onError(e);
    } finally {
      b.disabled = false;
    }
  });
  return b;
}

/** A table row saying what could not be loaded, with a button that tries again. */
export function retryRow(columns: number, what: string, retry: () => void, testId?: string): HTMLTableRowElement {
  return h(
    'tr',
    null,
    h(
      'td',
      { colspan: columns, class: 'empty', 'data-testid': testId },
      `${what} could not be loaded. `,
      h('button', { type: 'button', class: 'small', onclick: retry }, 'Try again'),
    ),
  );
}
