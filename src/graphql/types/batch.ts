import { builder } from '../builder.ts';
import { batchStateFields } from './batch-state-fields.ts';

export const CallBatchType = builder.prismaObject('Batch', {
  name: 'CallBatch',
  // Select mode: a query loads only the columns its fields ask for (Prisma's per-column cost is
  // measurable on hot reads). A resolver reading a column itself must declare it in `select`.
  select: { id: true },
  fields: (t) => ({
    id: t.exposeID('id'),
    ...batchStateFields(t),
    scheduledAt: t.expose('scheduledAt', { type: 'DateTime' }),
    timezone: t.string({
      description: 'Plain IANA zone name',
      // Stored plain by design; a label that slipped through (`Area/City (ABBR, UTC±hh:mm)`) is
      // still never shown.
      select: { timezone: true },
      resolve: (b) => b.timezone.replace(/\s*\(.*\)\s*$/, ''),
    }),
    concurrency: t.exposeInt('concurrency'),
    voice: t.exposeString('voice'),
    interruption: t.exposeBoolean('interruption'),
    useAlternateNumber: t.exposeBoolean('useAlternateNumber'),
    recordingEnabled: t.exposeBoolean('recordingEnabled'),
    maxDurationSeconds: t.exposeInt('maxDurationSeconds'),
    deduplicateByPhone: t.exposeBoolean('deduplicateByPhone'),
    callbackUrl: t.exposeString('callbackUrl', { nullable: true }),
    metadata: t.expose('metadata', { type: 'JSON' }),
    idempotencyKey: t.exposeString('idempotencyKey', { nullable: true }),
    versionId: t.exposeString('promptVersionId'),
    agent: t.relation('agent'),
    promptVersion: t.relation('promptVersion'),
    didNumber: t.relation('didNumber', { nullable: true }),
  }),
});
