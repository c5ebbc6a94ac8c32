import { builder } from '../builder.ts';
import { READS_OWN_PROPERTY } from '../plain-reads.ts';
import { NodeInterface } from './node.ts';
import { AppError } from '../../errors.ts';
import { batchStateFields } from './batch-state-fields.ts';
import { BATCH_ROW_COLUMNS } from '../../services/batches/get-batch.ts';
import { withBatchColumns } from './batch-columns.ts';
import { CallingWindowType } from './calling-window.ts';
import { storedWindow } from '../../domain/calling-window.ts';
import { MAX_OUTCOME_PAIRS, OUTCOME_TTL_MS, type OutcomeCount } from '../../services/batches/outcome-breakdown.ts';

const OutcomeCountType = builder.objectRef<OutcomeCount>('OutcomeCount').implement({
  description: 'How many calls of a batch hold one value of one outcome key',
  fields: (t) => ({
    key: t.exposeString('key'),
    value: t.exposeString('value'),
    calls: t.exposeInt('calls'),
  }),
});

/** The count walks every call of the batch: at most two per operation within the default budget. */
const OUTCOME_BREAKDOWN_COMPLEXITY = 2_000;

interface RetryPolicyOut {
  maxAttempts: number;
  on: string[];
  delaySeconds: number;
}

const CallBatchRetryType = builder.objectRef<RetryPolicyOut>('CallBatchRetry').implement({
  description: 'When and how often a call is tried again (docs/campaigns.md)',
  fields: (t) => ({
    maxAttempts: t.exposeInt('maxAttempts', { description: 'Dials per call at most, the alternate number included' }),
    on: t.exposeStringList('on', { description: 'Attempt outcomes that are retried: no_answer, busy, failed, voicemail, voicemail_left' }),
    delaySeconds: t.exposeInt('delaySeconds', { description: 'Wait after an attempt before the next' }),
  }),
});

export const CallBatchType = builder.prismaObject('Batch', {
  name: 'CallBatch',
  interfaces: [NodeInterface],
  // Select mode: a query loads only the columns its fields ask for (Prisma's per-column cost is
  // measurable on hot reads), and always these small ones, which every list and dashboard shows.
  // Their fields read the row with plain resolvers: a field declaring its column (as `expose` does
  // in select mode) is wrapped by plugin-prisma's per-row mapping lookup, a few µs a field, most of
  // a 200-batch page's CPU. The fields batch details shows besides read theirs through
  // withBatchColumns (batch-columns.ts); any other resolver reading a column must declare it in `select`.
  select: BATCH_ROW_COLUMNS,
  fields: (t) => ({
    id: t.id({ ...READS_OWN_PROPERTY, resolve: (b) => b.id }),
    ...batchStateFields(t, { prismaSelect: true }),
    scheduledAt: t.field({ type: 'DateTime', resolve: (b, _a, ctx) => withBatchColumns(b, ['scheduledAt'], ctx, (r) => r.scheduledAt) }),
    timezone: t.string({
      description: 'Plain IANA zone name',
      // Stored plain by design; a label that slipped through (`Area/City (ABBR, UTC±hh:mm)`) is
      // still never shown.
      resolve: (b, _a, ctx) => withBatchColumns(b, ['timezone'], ctx, (r) => r.timezone.replace(/\s*\(.*\)\s*$/, '')),
    }),
    concurrency: t.int({ resolve: (b, _a, ctx) => withBatchColumns(b, ['concurrency'], ctx, (r) => r.concurrency) }),
    voice: t.exposeString('voice'),
    interruption: t.exposeBoolean('interruption'),
    useAlternateNumber: t.exposeBoolean('useAlternateNumber'),
    recordingEnabled: t.exposeBoolean('recordingEnabled'),
    maxDurationSeconds: t.exposeInt('maxDurationSeconds'),
    deduplicateByPhone: t.exposeBoolean('deduplicateByPhone'),
    callbackUrl: t.exposeString('callbackUrl', { nullable: true }),
    metadata: t.expose('metadata', { type: 'JSON' }),
    idempotencyKey: t.exposeString('idempotencyKey', { nullable: true }),
    retry: t.field({
      type: CallBatchRetryType,
      nullable: true,
      description: 'The retry policy; null: each contact is dialled once (plus its alternate number)',
      resolve: (b, _a, ctx) =>
        withBatchColumns(b, ['retryMaxAttempts', 'retryOn', 'retryDelaySeconds'], ctx, (r) =>
          r.retryMaxAttempts === null ? null : { maxAttempts: r.retryMaxAttempts, on: r.retryOn, delaySeconds: r.retryDelaySeconds ?? 0 },
        ),
    }),
    expiresAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'No call is placed after this; null: never expires',
      resolve: (b, _a, ctx) => withBatchColumns(b, ['expiresAt'], ctx, (r) => r.expiresAt),
    }),
    callingWindow: t.field({
      type: CallingWindowType,
      nullable: true,
      description:
        "Local hours and days in which its calls are placed (its own window or the account's default); null: none of its own (enforcedCallingWindow may still narrow it)",
      resolve: (b, _a, ctx) => withBatchColumns(b, ['callingWindow'], ctx, (r) => storedWindow(r.callingWindow)),
    }),
    enforcedCallingWindow: t.field({
      type: CallingWindowType,
      nullable: true,
      description:
        "The account's enforced window (it follows the account's while the batch is unfinished): calls are placed only when both windows are open",
      select: { enforcedWindow: true },
      resolve: (b) => storedWindow(b.enforcedWindow),
    }),
    versionId: t.string({ resolve: (b) => b.promptVersionId }),
    agent: t.relation('agent'),
    promptVersion: t.relation('promptVersion'),
    didNumber: t.relation('didNumber', { nullable: true }),
    outcomeBreakdown: t.field({
      type: [OutcomeCountType],
      description: `The outcome values the batch's calls hold, most common first (at most ${MAX_OUTCOME_PAIRS} key/value pairs); counted at most once every ${OUTCOME_TTL_MS / 1000} s per batch; not in subscriptions`,
      complexity: OUTCOME_BREAKDOWN_COMPLEXITY,
      resolve: (batch, _args, ctx, info) => {
        // A subscription would run the count on every event while paying for it once.
        if (info.operation.operation === 'subscription')
          throw new AppError('BAD_REQUEST', 'outcomeBreakdown is not available in subscriptions; query it instead');
        return ctx.deps.outcomes.of(batch.id);
      },
    }),
  }),
});
