// CallBatch fields whose columns only batch details is sure to have read. They declare no column:
// on a select-mode Prisma type a field that does is wrapped in plugin-prisma's per-row mapping
// lookup, which was a sixth of a batch-details request's CPU (bench:read). Batch details and lists
// that ask for them read their columns (services/batches/get-batch.ts withDetailColumns); a batch
// read without them (a relation, say) gets them through the request's batchDetails loader.
import { batchNotFound } from '../../errors.ts';
import type { BatchDetailColumn, BatchDetails } from '../../services/batches/get-batch.ts';
import type { GraphQLContext } from '../context.ts';
import { BATCH_OPTION_NAMES } from '../../domain/batch-options.ts';

/** The CallBatch fields that read their columns this way. */
export const BATCH_DETAIL_FIELDS: ReadonlySet<string> = new Set([
  'startMode',
  'scheduledAt',
  'timezone',
  'concurrency',
  'acceptedContacts',
  'rejectedContacts',
  'callbacks',
  'startedAt',
  'completedAt',
  'retry',
  'expiresAt',
  'callingWindow',
  ...BATCH_OPTION_NAMES,
]);

/** `read` of the row when it holds `columns`, else of the batch's detail columns; no promise in the first case. */
export function withBatchColumns<R>(
  row: { id: string },
  columns: readonly BatchDetailColumn[],
  ctx: GraphQLContext,
  read: (row: BatchDetails) => R,
): R | Promise<R> {
  if (columns.every((c) => c in row)) return read(row as BatchDetails);
  return ctx.loaders.batchDetails.load(row.id).then((details) => {
    if (!details) throw batchNotFound();
    return read(details);
  });
}
