import { builder } from '../builder.ts';
import { NodeInterface } from './node.ts';
import { HEAVY_TEXT_COMPLEXITY } from '../plugins/query-cost.ts';
import { recordingUrlOf } from '../../services/calls/recording-url.ts';
import { numberDialled } from '../../services/representations.ts';
import { AgentType, PromptVersionType } from './catalog.ts';

builder.prismaObject('CallEvent', {
  fields: (t) => ({
    fromStatus: t.exposeString('fromStatus', { nullable: true }),
    toStatus: t.exposeString('toStatus'),
    detail: t.expose('detail', { type: 'JSON', nullable: true }),
    at: t.expose('at', { type: 'DateTime' }),
  }),
});

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
      select: { phoneNumber: true, dialedNumber: true },
      resolve: numberDialled,
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
      select: { id: true, recordingAvailable: true },
      resolve: (c, _a, ctx) => recordingUrlOf(ctx.deps, c),
    }),
    llmTranscript: t.exposeString('llmTranscript', { nullable: true, complexity: HEAVY_TEXT_COMPLEXITY }),
    agentId: t.exposeString('agentId'),
    versionId: t.exposeString('promptVersionId'),
    // A call's agent and prompt version are its batch's (one foreign key holds them together), so
    // they are reached through the batch; selected with the call's own query so a page of calls
    // costs one query per relation, not one per call.
    agentName: t.string({ select: { batch: { select: { agent: { select: { name: true } } } } }, resolve: (c) => c.batch.agent.name }),
    versionName: t.string({
      select: { batch: { select: { promptVersion: { select: { name: true } } } } },
      resolve: (c) => c.batch.promptVersion.name,
    }),
    voice: t.string({
      description: "Voice used for the call (the batch's voice)",
      select: { batch: { select: { voice: true } } },
      resolve: (c) => c.batch.voice,
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
    batch: t.relation('batch'),
    history: t.relation('events', { query: { orderBy: { id: 'asc' } } }),
  }),
});
