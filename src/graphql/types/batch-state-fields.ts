// The fields a batch and its live progress share: one definition, so `CallBatch` and
// `BatchProgress` cannot drift apart. On the Prisma-backed type `expose` also selects the column.
import type { builder } from '../builder.ts';

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
 * Takes any object type's field builder whose parent has the BatchState fields (Pothos cannot
 * express "a builder of some shape with these keys" without instantiating every plugin's types).
 */
export function batchStateFields(builderOfType: object) {
  const t = builderOfType as StateFieldBuilder;
  return {
    status: t.exposeString('status'),
    startMode: t.exposeString('startMode'),
    agentId: t.exposeString('agentId'),
    totalContacts: t.exposeInt('totalContacts'),
    acceptedContacts: t.exposeInt('acceptedContacts'),
    rejectedContacts: t.exposeInt('rejectedContacts'),
    queued: t.exposeInt('queued'),
    inProgress: t.exposeInt('inProgress'),
    completed: t.exposeInt('completed'),
    failed: t.exposeInt('failed'),
    cancelled: t.exposeInt('cancelled'),
    callbacks: t.exposeInt('callbacks'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    startedAt: t.expose('startedAt', { type: 'DateTime', nullable: true }),
    completedAt: t.expose('completedAt', { type: 'DateTime', nullable: true }),
  };
}
