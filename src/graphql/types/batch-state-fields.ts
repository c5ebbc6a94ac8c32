// The fields a batch and its live progress share: one definition, so `CallBatch` and
// `BatchProgress` cannot drift apart. On the Prisma-backed type a list row's columns are in its
// type-level select (BATCH_ROW_COLUMNS, services/batches/get-batch.ts), and the other fields read
// theirs through withBatchColumns.
import type { builder } from '../builder.ts';
import { READS_OWN_PROPERTY } from '../plain-reads.ts';
import type { GraphQLContext } from '../context.ts';
import { withBatchColumns } from './batch-columns.ts';

type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;

export interface BatchState {
  status: string;
  startMode: string;
  agentId: string;
  totalContacts: number;
  acceptedContacts: number;
  rejectedContacts: number;
  queued: number;
  inProgress: number;
  completed: number;
  failed: number;
  cancelled: number;
  callbacks: number;
  createdAt: Date;
  startedAt: Date | null;
  completedAt: Date | null;
}

type StateFieldBuilder = PothosSchemaTypes.ObjectFieldBuilder<Types, BatchState>;

/**
 * The other state fields: on the Prisma-backed type, read from the row when its query loaded them
 * (batch details always does, services/batches/get-batch.ts), else through the request's
 * batchDetails loader (graphql/types/batch-columns.ts). A 200-row list page reading and parsing
 * them (two of them timestamps) for nothing cost about a tenth of its CPU (bench:read).
 */
type DetailField = 'startMode' | 'acceptedContacts' | 'rejectedContacts' | 'callbacks' | 'startedAt' | 'completedAt';

/**
 * Takes any object type's field builder whose parent has the BatchState fields (Pothos cannot
 * express "a builder of some shape with these keys" without instantiating every plugin's types).
 * Plain resolvers rather than `expose`: on a select-mode Prisma type `expose` declares a column
 * per field, and plugin-prisma then wraps each with a per-row lookup; the schema then drops them
 * (graphql/plain-reads.ts).
 */
export function batchStateFields(builderOfType: object, opts: { prismaSelect?: boolean } = {}) {
  const t = builderOfType as StateFieldBuilder;
  // Spread into a detail field's options: on the Prisma-backed type it reads the row or the
  // loader; anywhere else it has no resolver (graphql/plain-reads.ts).
  const detail = <F extends DetailField>(field: F) =>
    opts.prismaSelect
      ? {
          resolve: (b: BatchState, _args: object, ctx: GraphQLContext) =>
            withBatchColumns(b as BatchState & { id: string }, [field], ctx, (r) => r[field]),
        }
      : { ...READS_OWN_PROPERTY, resolve: (b: BatchState) => b[field] };
  return {
    status: t.string({ ...READS_OWN_PROPERTY, resolve: (b) => b.status }),
    startMode: t.string(detail('startMode')),
    agentId: t.string({ ...READS_OWN_PROPERTY, resolve: (b) => b.agentId }),
    totalContacts: t.int({ ...READS_OWN_PROPERTY, resolve: (b) => b.totalContacts }),
    acceptedContacts: t.int(detail('acceptedContacts')),
    rejectedContacts: t.int(detail('rejectedContacts')),
    queued: t.int({ ...READS_OWN_PROPERTY, resolve: (b) => b.queued }),
    inProgress: t.int({ ...READS_OWN_PROPERTY, resolve: (b) => b.inProgress }),
    completed: t.int({ ...READS_OWN_PROPERTY, resolve: (b) => b.completed }),
    failed: t.int({ ...READS_OWN_PROPERTY, resolve: (b) => b.failed }),
    cancelled: t.int({ ...READS_OWN_PROPERTY, resolve: (b) => b.cancelled }),
    callbacks: t.int(detail('callbacks')),
    createdAt: t.field({ type: 'DateTime', ...READS_OWN_PROPERTY, resolve: (b) => b.createdAt }),
    startedAt: t.field({ type: 'DateTime', nullable: true, ...detail('startedAt') }),
    completedAt: t.field({ type: 'DateTime', nullable: true, ...detail('completedAt') }),
  };
}
