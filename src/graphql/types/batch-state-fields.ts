// The fields a batch and its live progress share: one definition, so `CallBatch` and
// `BatchProgress` cannot drift apart. On the Prisma-backed type a list row's columns are in its
// type-level select (BATCH_ROW_COLUMNS), and the other fields declare theirs.
import type { builder } from '../builder.ts';
import { READS_OWN_PROPERTY } from '../plain-reads.ts';

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
 * The columns every read of a Prisma-backed batch loads (its type-level `select`): what a row of the
 * batch list shows, so its fields read the row directly (graphql/types/batch.ts says why).
 */
export const BATCH_ROW_COLUMNS = {
  status: true,
  agentId: true,
  totalContacts: true,
  queued: true,
  inProgress: true,
  completed: true,
  failed: true,
  cancelled: true,
  createdAt: true,
} as const satisfies Partial<Record<keyof BatchState, true>>;

/**
 * The other state fields. On the Prisma-backed type each declares its column, loaded only when it
 * is asked for: a 200-row list page read and parsed them (two of them timestamps) for nothing, about
 * a tenth of its CPU (bench:read).
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
  // Spread into each field's options: no resolver for a row field, a column for a detail field.
  const own = (field: DetailField) => (opts.prismaSelect ? ({ select: { [field]: true } } as object) : READS_OWN_PROPERTY);
  return {
    status: t.string({ ...READS_OWN_PROPERTY, resolve: (b) => b.status }),
    startMode: t.string({ ...own('startMode'), resolve: (b) => b.startMode }),
    agentId: t.string({ ...READS_OWN_PROPERTY, resolve: (b) => b.agentId }),
    totalContacts: t.int({ ...READS_OWN_PROPERTY, resolve: (b) => b.totalContacts }),
    acceptedContacts: t.int({ ...own('acceptedContacts'), resolve: (b) => b.acceptedContacts }),
    rejectedContacts: t.int({ ...own('rejectedContacts'), resolve: (b) => b.rejectedContacts }),
    queued: t.int({ ...READS_OWN_PROPERTY, resolve: (b) => b.queued }),
    inProgress: t.int({ ...READS_OWN_PROPERTY, resolve: (b) => b.inProgress }),
    completed: t.int({ ...READS_OWN_PROPERTY, resolve: (b) => b.completed }),
    failed: t.int({ ...READS_OWN_PROPERTY, resolve: (b) => b.failed }),
    cancelled: t.int({ ...READS_OWN_PROPERTY, resolve: (b) => b.cancelled }),
    callbacks: t.int({ ...own('callbacks'), resolve: (b) => b.callbacks }),
    createdAt: t.field({ type: 'DateTime', ...READS_OWN_PROPERTY, resolve: (b) => b.createdAt }),
    startedAt: t.field({ type: 'DateTime', nullable: true, ...own('startedAt'), resolve: (b) => b.startedAt }),
    completedAt: t.field({ type: 'DateTime', nullable: true, ...own('completedAt'), resolve: (b) => b.completedAt }),
  };
}
