// The batch page's first look at results: for each outcome key, how many calls hold each value, as
// bars. Read when the page opens and again when calls end or get their results, at most every
// 11 s (the server counts at most every 10 s).
import { DashboardOutcomesDocument, type DashboardOutcomesQuery } from '../../codegen/graphql.ts';
import type { AppContext } from '../context.ts';
import { h, replace } from '../dom.ts';

type OutcomeCount = DashboardOutcomesQuery['batch']['outcomeBreakdown'][number];

/** Longer than the server keeps a count (10 s), so a read after it sees a new one. */
const REFRESH_MS = 11_000;

function byKey(counts: OutcomeCount[]): Map<string, OutcomeCount[]> {
  const keys = new Map<string, OutcomeCount[]>();
  for (const c of counts) {
    const values = keys.get(c.key);
    if (values) values.push(c);
    else keys.set(c.key, [c]);
  }
  return keys;
}

function keyChart(key: string, values: OutcomeCount[]): HTMLElement {
  const most = values[0]?.calls ?? 1;
  return h(
    'div',
    { class: 'outcome-key', 'data-outcome-key': key },
    h('h3', null, key),
    values.map((v) => {
      const fill = h('span', { class: 'outcome-fill' });
      // Bars are relative to the key's most common value.
      fill.style.width = `${(v.calls / most) * 100}%`;
      return h(
        'div',
        { class: 'outcome-row', title: `${v.calls} call${v.calls === 1 ? '' : 's'}: ${key} = ${v.value}` },
        h('span', { class: 'outcome-value' }, v.value),
        h('span', { class: 'outcome-track' }, fill),
        h('span', { class: 'outcome-count' }, v.calls),
      );
    }),
  );
}

export interface OutcomesPanel {
  el: HTMLElement;
  /** Calls ended or got their results: read again, at most every 11 s. */
  changed(): void;
  dispose(): void;
}

export function outcomesPanel(ctx: AppContext, batchId: string): OutcomesPanel {
  const body = h('div', { class: 'outcomes-body' }, h('p', { class: 'muted' }, 'Loading…'));
  const el = h('div', { class: 'panel outcomes', 'data-testid': 'outcomes' }, h('h2', null, 'Outcomes'), body);
  let readAt = 0;
  /** Changes since the last read began. */
  let dirty = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let disposed = false;

  async function read() {
    readAt = Date.now();
    try {
      const { batch } = await ctx.api.request(DashboardOutcomesDocument, { id: batchId });
      if (disposed) return;
      const keys = byKey(batch.outcomeBreakdown);
      replace(body, keys.size ? [...keys].map(([key, values]) => keyChart(key, values)) : h('p', { class: 'muted' }, 'No outcomes yet.'));
    } catch {
      // The batch view reports its own read failures; this panel keeps what it showed and tries again.
      if (disposed) return;
      if (!body.querySelector('.outcome-key')) replace(body, h('p', { class: 'muted' }, 'The outcomes could not be read just now.'));
      dirty = true;
    }
  }

  function schedule() {
    if (timer || disposed) return;
    timer = setTimeout(() => void run(), Math.max(0, readAt + REFRESH_MS - Date.now()));
  }

  // A read after changes may get the server's count from just before the last of them: one more
  // read a period later (when that count has expired) settles it.
  async function run() {
    timer = undefined;
    const settle = dirty;
    dirty = false;
    await read();
    if (dirty || settle) schedule();
  }

  void run();
  return {
    el,
    changed() {
      dirty = true;
      schedule();
    },
    dispose() {
      disposed = true;
      if (timer) clearTimeout(timer);
    },
  };
}
