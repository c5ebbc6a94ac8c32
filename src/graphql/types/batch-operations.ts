// Batch operations beyond the contract (docs/dispatch.md): start, pause, resume, cancel. Each returns the
// batch after the operation; an illegal transition is a CONFLICT, a foreign batch NOT_FOUND.
import { builder } from '../builder.ts';
import type { BatchOperation } from '../../domain/batch-state.ts';
import { operateBatch } from '../../services/batches/batch-operations.ts';

const DESCRIPTIONS: Record<BatchOperation, string> = {
  start: 'Starts a manual batch, or a scheduled one before its time (pending/paused -> queued)',
  pause: 'Stops new dials; calls in flight finish (queued/dispatching/running -> paused)',
  resume: 'Resumes dialling a paused batch (paused -> queued)',
  cancel: 'Cancels every not-yet-dialled call and hangs up calls in flight (-> cancelled)',
};

const mutation = (op: BatchOperation) =>
  builder.mutationField(`${op}Batch`, (t) =>
    t.prismaField({
      type: 'Batch',
      description: DESCRIPTIONS[op],
      args: { id: t.arg.id({ required: true }) },
      resolve: async (_query, _root, args, ctx) => operateBatch(ctx.deps, await ctx.account(), String(args.id), op),
    }),
  );

for (const op of ['start', 'pause', 'resume', 'cancel'] as const) mutation(op);
