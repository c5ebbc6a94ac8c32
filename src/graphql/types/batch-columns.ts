// CallBatch fields whose columns only batch details is sure to have read. They declare no column:
// on a select-mode Prisma type a field that does is wrapped in plugin-prisma's per-row mapping
// lookup, which was a sixth of a batch-details request's CPU (bench:read). Batch details and lists
// that ask for them read their columns (services/batches/get-batch.ts withDetailColumns); a row
// read without them (a relation, say) is read whole through the request's batch loader.
import { batchNotFound } from '../../errors.ts';
import type { Batch } from '../../generated/prisma/client.ts';
import type { GraphQLContext } from '../context.ts';

/** The CallBatch fields that read their columns this way. */
export const BATCH_DETAIL_FIELDS: ReadonlySet<string> = new Set([
  'startMode', 'scheduledAt', 'timezone', 'concurrency', 'acceptedContacts', 'rejectedContacts', 'callbacks',
  'startedAt', 'completedAt', 'retry', 'expiresAt', 'callingWindow',
]);

/** `read` of the row when it holds `columns`, else of the whole row; no promise in the first case. */
export function withBatchColumns<R>(row: { id: string }, columns: readonly (keyof Batch)[], ctx: GraphQLContext, read: (row: Batch) => R): R | Promise<R> {
  if (columns.every((c) => c in row)) return read(row as Batch);
  return ctx.loaders.batch.load(row.id).then((whole) => {
    if (!whole) throw batchNotFound();
    return read(whole);
  });
}
