import {
  DashboardCancelBatchDocument,
  DashboardPauseBatchDocument,
  DashboardResumeBatchDocument,
  DashboardStartBatchDocument,
  type DashboardBatchFragment,
} from '../codegen/graphql.ts';
import type { AppContext } from './context.ts';
import { h, replace } from './dom.ts';
import { operationsFor } from './format.ts';
import { actionButton } from './widgets.ts';

type Operation = ReturnType<typeof operationsFor>[number];

const LABELS: Record<Operation, string> = { start: 'Start', pause: 'Pause', resume: 'Resume', cancel: 'Cancel' };

export async function operate(ctx: AppContext, id: string, op: Operation): Promise<DashboardBatchFragment> {
  switch (op) {
    case 'start':
      return (await ctx.api.request(DashboardStartBatchDocument, { id })).startBatch;
    case 'pause':
      return (await ctx.api.request(DashboardPauseBatchDocument, { id })).pauseBatch;
    case 'resume':
      return (await ctx.api.request(DashboardResumeBatchDocument, { id })).resumeBatch;
    case 'cancel':
      return (await ctx.api.request(DashboardCancelBatchDocument, { id })).cancelBatch;
  }
}

/** Start / pause / resume / cancel buttons for the batch's current status, re-drawn on every change. */
/** `onAnswer` gets the operation's pending answer (so it can order it against live updates). */
export function operationButtons(ctx: AppContext, id: string, onAnswer: (answer: Promise<DashboardBatchFragment>) => Promise<void>) {
  const el = h('div', { class: 'ops' });
  let shown = '';
  return {
    el,
    update(b: { status: string; startedAt: string | null }) {
      const ops = operationsFor(b);
      const key = ops.join(',');
      if (key === shown) return;
      shown = key;
      replace(
        el,
        ops.map((op) =>
          actionButton(
            LABELS[op],
            async () => {
              if (op === 'cancel' && !window.confirm('Cancel this batch? Calls not yet dialled will not be made.')) return;
              await onAnswer(operate(ctx, id, op));
            },
            ctx.showError,
            op === 'cancel' ? 'danger small' : 'small',
          ),
        ),
      );
    },
  };
}
