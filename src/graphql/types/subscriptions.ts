// Live progress over graphql-ws (WebSocket) and SSE (Yoga). Every subscription authenticates with
// the API key when it starts and is scoped to its account: another account's batch is the same
// NOT_FOUND as a missing one. Events come from src/events (LISTEN/NOTIFY, coalesced per batch).
import { builder } from '../builder.ts';
import { CallWaitReason } from './wait-reason.ts';
import { batchStateFields } from './batch-state-fields.ts';
import { withDetailColumns } from '../../services/batches/get-batch.ts';
import { HEAVY_TEXT_COMPLEXITY } from './field-costs.ts';
import type { BatchSnapshot } from '../../events/batch-channel.ts';
import type { CallSnapshot } from '../../events/call-tracker.ts';
import { recordingUrl } from '../../services/recording-url.ts';

const BatchProgressType = builder.objectRef<BatchSnapshot>('BatchProgress').implement({
  description: "A batch's status and counters as one row read: queued + inProgress + completed + failed + cancelled = acceptedContacts",
  fields: (t) => ({
    batchId: t.exposeID('id'),
    ...batchStateFields(t),
    updatedAt: t.expose('updatedAt', { type: 'DateTime', description: 'When the last change was written' }),
    batch: t.prismaField({
      type: 'Batch',
      description: 'The whole batch, read when asked for',
      resolve: (query, p, _a, ctx) => ctx.deps.db.prisma.batch.findUniqueOrThrow({ ...withDetailColumns(query), where: { id: p.id } }),
    }),
  }),
});

const CallUpdateType = builder.objectRef<CallSnapshot>('CallUpdate').implement({
  description: "A call's state after a status or result change; the result fields are null until ready",
  fields: (t) => ({
    callId: t.exposeID('id'),
    batchId: t.exposeString('batchId'),
    seq: t.exposeInt('seq', { description: '1-based position of the contact in the submitted batch' }),
    externalId: t.exposeString('externalId'),
    name: t.exposeString('name', { nullable: true }),
    phoneNumber: t.exposeString('phoneNumber', { description: 'Number dialled (the alternate number when it was used)' }),
    status: t.exposeString('status'),
    transcriptStatus: t.exposeString('transcriptStatus', { nullable: true }),
    durationSeconds: t.exposeInt('durationSeconds', { nullable: true }),
    answerDurationSeconds: t.exposeInt('answerDurationSeconds', { nullable: true }),
    timestamp: t.expose('timestamp', { type: 'DateTime', nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    completedAt: t.expose('completedAt', { type: 'DateTime', nullable: true }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    hangupBy: t.exposeString('hangupBy', { nullable: true }),
    disconnectReason: t.exposeString('disconnectReason', { nullable: true }),
    summary: t.exposeString('summary', { nullable: true }),
    outcomes: t.expose('outcomes', { type: 'JSON', nullable: true }),
    recordingAvailable: t.exposeBoolean('recordingAvailable', { nullable: true }),
    recordingUrl: t.string({
      nullable: true,
      description: 'Signed, expiring URL of the recording',
      resolve: (c, _a, ctx) => (c.recordingAvailable ? recordingUrl(ctx.deps, c.id) : null),
    }),
    llmTranscript: t.exposeString('llmTranscript', { nullable: true, complexity: HEAVY_TEXT_COMPLEXITY }),
    attemptCount: t.exposeInt('attemptCount', { description: 'Dials made so far, the alternate number included' }),
    nextAttemptAt: t.expose('nextAttemptAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When a waiting call is next tried: its retry, or its calling window opening; null otherwise',
    }),
    timezone: t.exposeString('timezone', {
      nullable: true,
      description: 'The zones its calling window is judged in, comma-separated; null without a window',
    }),
    waitReason: t.field({
      type: CallWaitReason,
      nullable: true,
      description: 'Why a waiting call waits until nextAttemptAt (calling window, retry or frequency cap); null when not waiting',
      resolve: (c) => c.waitReason,
    }),
    retryReason: t.exposeString('retryReason', {
      nullable: true,
      description:
        'Why a call waiting for a retry waits: how its last attempt ended (no_answer, busy, failed, voicemail or voicemail_left); null unless it waits',
    }),
    call: t.prismaField({
      type: 'Call',
      description: 'The whole call record, read when asked for',
      resolve: (query, c, _a, ctx) => ctx.deps.db.prisma.call.findUniqueOrThrow({ ...query, where: { id: c.id } }),
    }),
  }),
});

builder.subscriptionType({});

builder.subscriptionFields((t) => ({
  batchProgress: t.field({
    type: BatchProgressType,
    description:
      "The batch's status and counters now, then whenever they change (at most 20 times a second; a slow client gets the latest); completes after the value of a terminal status (completed, cancelled) with every call ended, at once for a batch already there. NOT_FOUND for a missing or foreign batch.",
    args: { batchId: t.arg.id({ required: true }) },
    subscribe: async (_root, { batchId }, ctx) => ctx.deps.events.hub().batchProgress(await ctx.account(), String(batchId)),
    resolve: (snapshot) => snapshot,
  }),
  callUpdated: t.field({
    type: CallUpdateType,
    description:
      "First the latest state of the calls that changed in the 30 s before the batch's last change (at most 200, the largest page), so a page read just before subscribing misses nothing; then each call whose status or results change, in its latest state (changes within one tick coalesce). NOT_FOUND for a missing or foreign batch.",
    args: { batchId: t.arg.id({ required: true }) },
    subscribe: async (_root, { batchId }, ctx) => ctx.deps.events.hub().callUpdates(await ctx.account(), String(batchId)),
    resolve: (call) => call,
  }),
  accountBatches: t.field({
    type: BatchProgressType,
    description: 'Every batch of the account that is created or whose status or counters change, from now on',
    subscribe: async (_root, _args, ctx) => ctx.deps.events.hub().accountBatches(await ctx.account()),
    resolve: (snapshot) => snapshot,
  }),
}));
