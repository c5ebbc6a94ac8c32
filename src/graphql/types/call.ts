import { builder } from '../builder.ts';
import { NodeInterface } from './node.ts';
import { HEAVY_TEXT_COMPLEXITY } from './field-costs.ts';
import { recordingUrlOf } from '../../services/recording-url.ts';
import { numberDialled } from '../../services/representations.ts';
import { AgentType, PromptVersionType } from './catalog.ts';
import type { GraphQLContext } from '../context.ts';
import type { BatchLabels } from '../../services/batches/batch-labels.ts';
import { attemptsFromHistory, waitsForRetry, type CallAttempt } from '../../domain/call-attempts.ts';
import { waitReasonOf } from '../../domain/wait-reason.ts';
import { CallWaitReason } from './wait-reason.ts';

/** A call's batch is the account's (it was read through it), so a missing one is a bug, not a 404. */
async function labelsOf(ctx: GraphQLContext, batchId: string): Promise<BatchLabels> {
  const labels = await ctx.loaders.batchLabels.load(batchId);
  if (!labels) throw new Error(`Batch ${batchId} of a loaded call was not found`);
  return labels;
}

/** One label of a call's batch: synchronous when the request already read the batch (a page's own). */
function labelOf(ctx: GraphQLContext, batchId: string, label: 'agentName' | 'versionName' | 'voice'): string | Promise<string> {
  const read = ctx.loaders.batchLabelsRead.get(batchId);
  return read ? read[label] : labelsOf(ctx, batchId).then((l) => l[label]);
}

builder.prismaObject('CallEvent', {
  fields: (t) => ({
    fromStatus: t.exposeString('fromStatus', { nullable: true }),
    toStatus: t.exposeString('toStatus'),
    detail: t.expose('detail', { type: 'JSON', nullable: true }),
    at: t.expose('at', { type: 'DateTime' }),
  }),
});

const CallAttemptType = builder.objectRef<CallAttempt>('CallAttempt').implement({
  description: 'One dial of a call (the alternate number is an attempt of its own)',
  fields: (t) => ({
    number: t.exposeInt('number', { description: '1-based' }),
    phoneNumber: t.exposeString('phoneNumber', { description: 'The number dialled' }),
    alternate: t.exposeBoolean('alternate', { description: "Whether this dial went to the contact's alternate number" }),
    status: t.exposeString('status', {
      description: "How the attempt ended (`no_answer` with disconnectReason `voicemail` for voicemail); the call's status while it runs",
    }),
    disconnectReason: t.exposeString('disconnectReason', { nullable: true }),
    hangupBy: t.exposeString('hangupBy', { nullable: true }),
    startedAt: t.expose('startedAt', { type: 'DateTime' }),
    endedAt: t.expose('endedAt', { type: 'DateTime', nullable: true }),
  }),
});

/** A call's consent record as given at create (docs/campaigns.md "Consent records"). */
export interface CallConsent {
  source: string;
  timestamp: Date;
  text: string | null;
  reference: string | null;
}

const CallConsentType = builder.objectRef<CallConsent>('CallConsent').implement({
  description: "The contact's consent record, as given at create (REST `consent`)",
  fields: (t) => ({
    source: t.exposeString('source', { description: 'Where consent was given (e.g. web_form)' }),
    timestamp: t.expose('timestamp', { type: 'DateTime', description: 'When consent was given' }),
    text: t.exposeString('text', { nullable: true, description: 'The wording consented to' }),
    reference: t.exposeString('reference', { nullable: true, description: 'Where the proof is kept' }),
  }),
});

// Include mode (no `select` on the type): every Call row carries all its columns, so the computed
// fields below read them without declaring a `select` of columns. A field with one is wrapped by
// plugin-prisma's per-row mapping lookup, a few µs per field and row: most of a 200-call page's
// GraphQL time. Only the fields that load relations (agent, promptVersion, attempts) declare theirs.
export const CallType = builder.prismaObject('Call', {
  interfaces: [NodeInterface],
  fields: (t) => ({
    id: t.exposeID('id'),
    batchId: t.exposeString('batchId'),
    seq: t.exposeInt('seq', { description: '1-based position of the contact in the submitted batch' }),
    contactId: t.exposeString('externalId'),
    externalId: t.exposeString('externalId'),
    name: t.exposeString('name', { nullable: true }),
    phoneNumber: t.string({
      description: 'Number dialled (the alternate number when it was used)',
      resolve: numberDialled,
    }),
    primaryPhoneNumber: t.exposeString('phoneNumber', {
      description: "The contact's primary number, whichever number was dialled (REST `primary_phone_number`)",
    }),
    metadata: t.expose('metadata', { type: 'JSON' }),
    status: t.exposeString('status'),
    callStatus: t.exposeString('status'),
    transcriptStatus: t.exposeString('transcriptStatus', { nullable: true }),
    durationSeconds: t.exposeInt('durationSeconds', { nullable: true }),
    answerDurationSeconds: t.exposeInt('answerDurationSeconds', { nullable: true }),
    timestamp: t.expose('timestamp', { type: 'DateTime', nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    completedAt: t.expose('completedAt', { type: 'DateTime', nullable: true }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime', description: 'When the last change was written (compare with CallUpdate.updatedAt)' }),
    hangupBy: t.exposeString('hangupBy', { nullable: true }),
    disconnectReason: t.exposeString('disconnectReason', { nullable: true }),
    summary: t.exposeString('summary', { nullable: true }),
    outcomes: t.expose('outcomes', { type: 'JSON', nullable: true }),
    recordingAvailable: t.exposeBoolean('recordingAvailable', { nullable: true }),
    recordingUrl: t.string({
      nullable: true,
      description: 'Signed, expiring URL of the recording',
      resolve: (c, _a, ctx) => recordingUrlOf(ctx.deps, c),
    }),
    llmTranscript: t.exposeString('llmTranscript', { nullable: true, complexity: HEAVY_TEXT_COMPLEXITY }),
    agentId: t.exposeString('agentId'),
    versionId: t.exposeString('promptVersionId'),
    // A call's agent and prompt version are its batch's (one foreign key holds them together).
    // The names and voice come from the request's batch-labels loader: one statement for all the
    // batches of a page, none when the page's own batch read primed it (calls, results).
    agentName: t.string({ resolve: (c, _a, ctx) => labelOf(ctx, c.batchId, 'agentName') }),
    versionName: t.string({ resolve: (c, _a, ctx) => labelOf(ctx, c.batchId, 'versionName') }),
    voice: t.string({
      description: "Voice used for the call (the batch's voice)",
      resolve: (c, _a, ctx) => labelOf(ctx, c.batchId, 'voice'),
    }),
    agent: t.field({
      type: AgentType,
      select: (_a, _c, nested) => ({ batch: { select: { agent: nested(true) } } }),
      resolve: (c) => c.batch.agent,
    }),
    promptVersion: t.field({
      type: PromptVersionType,
      select: (_a, _c, nested) => ({ batch: { select: { promptVersion: nested(true) } } }),
      resolve: (c) => c.batch.promptVersion,
    }),
    attemptCount: t.exposeInt('attempts', { description: 'Dials made so far, the alternate number included (REST `attempts`)' }),
    nextAttemptAt: t.expose('nextAttemptAt', {
      type: 'DateTime',
      nullable: true,
      description:
        'When a waiting call is next tried: its retry, its calling window opening, or the frequency cap letting it through; null otherwise',
    }),
    timezone: t.exposeString('timezone', {
      nullable: true,
      description: 'The zones its calling window is judged in, comma-separated (a number can have several); null without a window',
    }),
    consent: t.field({
      type: CallConsentType,
      nullable: true,
      description: "The contact's consent record as given at create; null without one",
      resolve: (c) =>
        c.consentSource === null || c.consentAt === null
          ? null
          : { source: c.consentSource, timestamp: c.consentAt, text: c.consentText, reference: c.consentReference },
    }),
    fromNumber: t.exposeString('fromNumber', {
      nullable: true,
      description:
        "The caller-ID number (E.164) its latest dial was placed from: the batch's own DID, else chosen from the account's pool (same area code, else same region, else the default); null: never dialled",
    }),
    voicemailLeft: t.exposeBoolean('voicemailLeft', {
      nullable: true,
      description: "Whether an attempt that reached voicemail left the batch's voicemailMessage; null: voicemail not reached, or unknown",
    }),
    retryReason: t.string({
      nullable: true,
      description:
        'Why a call waiting for a retry waits: how its last attempt ended (no_answer, busy, failed, voicemail or voicemail_left); null unless it waits (nextAttemptAt set)',
      resolve: (c, _a, ctx) => (waitsForRetry(c) ? ctx.loaders.retryReasons.load(c.id) : null),
    }),
    waitReason: t.field({
      type: CallWaitReason,
      nullable: true,
      description: 'Why a waiting call (pending or queued) waits until nextAttemptAt; null when it is not held back, or not waiting',
      resolve: (c) => waitReasonOf(c),
    }),
    attempts: t.field({
      type: [CallAttemptType],
      description: "The call's dials in order, read from its history",
      select: { status: true, events: { select: { toStatus: true, detail: true, at: true }, orderBy: { id: 'asc' } } },
      resolve: (c) => attemptsFromHistory(c.events, c.status),
    }),
    batch: t.relation('batch'),
    history: t.relation('events', { query: { orderBy: { id: 'asc' } } }),
  }),
});
