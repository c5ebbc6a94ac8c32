// The fields a batch and its live progress share: one definition, so `CallBatch` and
// `BatchProgress` cannot drift apart. On the Prisma-backed type their columns are in its
// type-level select (BATCH_STATE_COLUMNS).
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
 * The columns these fields read, for a Prisma-backed type's type-level `select`: loaded with every
 * row, so the fields read the row directly (graphql/types/batch.ts says why).
 */
export const BATCH_STATE_COLUMNS = {
  status: true,
  startMode: true,
  agentId: true,
  totalContacts: true,
  acceptedContacts: true,
  rejectedContacts: true,
  queued: true,
  inProgress: true,
  completed: true,
  failed: true,
  cancelled: true,
  callbacks: true,
  createdAt: true,
  startedAt: true,
  completedAt: true,
} as const satisfies Record<keyof BatchState, true>;

/**
 * Takes any object type's field builder whose parent has the BatchState fields (Pothos cannot
 * express "a builder of some shape with these keys" without instantiating every plugin's types).
 * Plain resolvers rather than `expose`: on a select-mode Prisma type `expose` declares a column
 * per field, and plugin-prisma then wraps each with a per-row lookup; the schema then drops them
 * (graphql/plain-reads.ts).
 */
export function batchStateFields(builderOfType: object) {
  const t = builderOfType as StateFieldBuilder;
  return {
    status: t.string({ ...READS_OWN_PROPERTY, resolve: (b) => b.status }),
    startMode: t.string({ ...READS_OWN_PROPERTY, resolve: (b) => b.startMode }),
    agentId: t.string({ ...READS_OWN_PROPERTY, resolve: (b) => b.agentId }),
    totalContacts: t.int({ ...READS_OWN_PROPERTY, resolve: (b) => b.totalContacts }),
    acceptedContacts: t.int({ ...READS_OWN_PROPERTY, resolve: (b) => b.acceptedContacts }),
    rejectedContacts: t.int({ ...READS_OWN_PROPERTY, resolve: (b) => b.rejectedContacts }),
    queued: t.int({ ...READS_OWN_PROPERTY, resolve: (b) => b.queued }),
    inProgress: t.int({ ...READS_OWN_PROPERTY, resolve: (b) => b.inProgress }),
    completed: t.int({ ...READS_OWN_PROPERTY, resolve: (b) => b.completed }),
    failed: t.int({ ...READS_OWN_PROPERTY, resolve: (b) => b.failed }),
    cancelled: t.int({ ...READS_OWN_PROPERTY, resolve: (b) => b.cancelled }),
    callbacks: t.int({ ...READS_OWN_PROPERTY, resolve: (b) => b.callbacks }),
    createdAt: t.field({ type: 'DateTime', ...READS_OWN_PROPERTY, resolve: (b) => b.createdAt }),
    startedAt: t.field({ type: 'DateTime', nullable: true, ...READS_OWN_PROPERTY, resolve: (b) => b.startedAt }),
    completedAt: t.field({ type: 'DateTime', nullable: true, ...READS_OWN_PROPERTY, resolve: (b) => b.completedAt }),
  };
}
