import { builder } from '../builder.ts';
import { NodeInterface } from './node.ts';
import { HEAVY_TEXT_COMPLEXITY } from './field-costs.ts';
import { addDidNumber, createAgent, createPromptVersion, updateAgent } from '../../services/accounts/catalog.ts';
import { updateDidNumber } from '../../services/accounts/caller-id-pool.ts';
import { MAX_DID_DAILY_CAP } from '../../domain/caller-id.ts';

export const AgentType = builder.prismaObject('Agent', {
  interfaces: [NodeInterface],
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    voice: t.exposeString('voice'),
    recordingEnabled: t.exposeBoolean('recordingEnabled', { nullable: true }),
    outcomeKeys: t.exposeStringList('outcomeKeys'),
    providerAgentId: t.exposeString('providerAgentId', { nullable: true }),
    optOutOutcomeKey: t.exposeString('optOutOutcomeKey', {
      nullable: true,
      description: "The outcome key whose yes puts the contact's numbers on the do-not-call list (opt-out); null: none",
    }),
    optOutDetection: t.exposeBoolean('optOutDetection', {
      description:
        'Opt-out detection besides optOutOutcomeKey: the outcome `opt_out` and what the contact said (stop calling me, remove me from your list, do not call, …). On by default; with it off and no key, the agent lists nobody and a create warns (agent_cannot_detect_opt_outs)',
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    promptVersions: t.relation('promptVersions', { query: { orderBy: { id: 'asc' } } }),
  }),
});

export const PromptVersionType = builder.prismaObject('PromptVersion', {
  interfaces: [NodeInterface],
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    prompt: t.exposeString('prompt', { complexity: HEAVY_TEXT_COMPLEXITY }),
    providerAgentVersion: t.exposeInt('providerAgentVersion', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    agent: t.relation('agent'),
  }),
});

builder.prismaObject('DidNumber', {
  fields: (t) => ({
    id: t.exposeID('id'),
    number: t.exposeString('number'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    areaCode: t.exposeString('areaCode', { nullable: true, description: 'Its NANP area code, derived from the number when added; null outside +1' }),
    region: t.exposeString('region', {
      nullable: true,
      description: "Where it is local, derived from the number: a US number's state as US-XX (US-NY), any other its ISO country",
    }),
    dailyCap: t.exposeInt('dailyCap', {
      nullable: true,
      description: `Most dials placed from it per UTC day (1..${MAX_DID_DAILY_CAP}); null: no cap. A call no number may dial from waits until the next day`,
    }),
    isDefault: t.exposeBoolean('isDefault', {
      description: "The caller-ID pool's default: a call with no local number is placed from it (none marked: the oldest number is)",
    }),
  }),
});

builder.queryFields((t) => ({
  agents: t.prismaField({
    type: ['Agent'],
    resolve: async (query, _r, _a, ctx) => {
      const account = await ctx.account();
      return ctx.deps.db.prisma.agent.findMany({ ...query, where: { accountId: account.id }, orderBy: { id: 'asc' } });
    },
  }),
  agent: t.prismaField({
    type: 'Agent',
    nullable: true,
    args: { id: t.arg.id({ required: true }) },
    resolve: async (query, _r, { id }, ctx) => {
      const account = await ctx.account();
      return ctx.deps.db.prisma.agent.findFirst({ ...query, where: { id: String(id), accountId: account.id } });
    },
  }),
  promptVersions: t.prismaField({
    type: ['PromptVersion'],
    args: { agentId: t.arg.id() },
    resolve: async (query, _r, { agentId }, ctx) => {
      const account = await ctx.account();
      return ctx.deps.db.prisma.promptVersion.findMany({
        ...query,
        where: { accountId: account.id, ...(agentId ? { agentId: String(agentId) } : {}) },
        orderBy: { id: 'asc' },
      });
    },
  }),
  didNumbers: t.prismaField({
    type: ['DidNumber'],
    resolve: async (query, _r, _a, ctx) => {
      const account = await ctx.account();
      return ctx.deps.db.prisma.didNumber.findMany({ ...query, where: { accountId: account.id }, orderBy: { id: 'asc' } });
    },
  }),
}));

const CreateAgentInput = builder.inputType('CreateAgentInput', {
  fields: (t) => ({
    name: t.string({ required: true }),
    voice: t.string({ required: true }),
    recordingEnabled: t.boolean(),
    outcomeKeys: t.stringList(),
    providerAgentId: t.string(),
    optOutOutcomeKey: t.string({
      description: "One of outcomeKeys: a call whose analysis sets it to yes (or true) puts the contact's numbers on the do-not-call list",
    }),
    optOutDetection: t.boolean({ description: 'Default true: the outcome `opt_out` and the phrase list detect opt-outs too (docs/campaigns.md)' }),
  }),
});

const UpdateAgentInput = builder.inputType('UpdateAgentInput', {
  fields: (t) => ({
    optOutOutcomeKey: t.string({ description: "One of the agent's outcomeKeys, or null for no opt-out key; absent: unchanged" }),
    optOutDetection: t.boolean({ description: 'Opt-out detection by the default key and the phrase list; absent or null: unchanged' }),
  }),
});

const CreatePromptVersionInput = builder.inputType('CreatePromptVersionInput', {
  fields: (t) => ({
    agentId: t.id({ required: true }),
    name: t.string({ required: true }),
    prompt: t.string({ required: true }),
    providerAgentVersion: t.int(),
  }),
});

const AddDidNumberInput = builder.inputType('AddDidNumberInput', {
  fields: (t) => ({
    number: t.string({ required: true }),
    dailyCap: t.int({ description: `Most dials per UTC day from this number (1..${MAX_DID_DAILY_CAP}); omitted or null: no cap` }),
    isDefault: t.boolean({ description: "Make it the caller-ID pool's default (the previous default stops being it)" }),
  }),
});

const UpdateDidNumberInput = builder.inputType('UpdateDidNumberInput', {
  fields: (t) => ({
    dailyCap: t.int({ description: `Most dials per UTC day (1..${MAX_DID_DAILY_CAP}); null: no cap; omitted: unchanged` }),
    isDefault: t.boolean({ description: "true: the pool's default (the previous one stops being it); false: no longer it; omitted: unchanged" }),
  }),
});

builder.mutationFields((t) => ({
  createAgent: t.prismaField({
    type: 'Agent',
    args: { input: t.arg({ type: CreateAgentInput, required: true }) },
    resolve: async (_q, _r, { input }, ctx) =>
      createAgent(ctx.deps.db, await ctx.account(), {
        name: input.name,
        voice: input.voice,
        recordingEnabled: input.recordingEnabled,
        outcomeKeys: input.outcomeKeys ?? [],
        providerAgentId: input.providerAgentId,
        optOutOutcomeKey: input.optOutOutcomeKey,
        optOutDetection: input.optOutDetection,
      }),
  }),
  updateAgent: t.prismaField({
    type: 'Agent',
    description: "Changes an agent's settings (its opt-out outcome key and detection)",
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: UpdateAgentInput, required: true }) },
    resolve: async (_q, _r, { id, input }, ctx) =>
      updateAgent(ctx.deps.db, await ctx.account(), String(id), {
        optOutOutcomeKey: input.optOutOutcomeKey,
        optOutDetection: input.optOutDetection ?? undefined,
      }),
  }),
  createPromptVersion: t.prismaField({
    type: 'PromptVersion',
    args: { input: t.arg({ type: CreatePromptVersionInput, required: true }) },
    resolve: async (_q, _r, { input }, ctx) =>
      createPromptVersion(ctx.deps.db, await ctx.account(), {
        agentId: String(input.agentId),
        name: input.name,
        prompt: input.prompt,
        providerAgentVersion: input.providerAgentVersion,
      }),
  }),
  addDidNumber: t.prismaField({
    type: 'DidNumber',
    args: { input: t.arg({ type: AddDidNumberInput, required: true }) },
    resolve: async (_q, _r, { input }, ctx) =>
      addDidNumber(ctx.deps.db, await ctx.account(), input.number, { dailyCap: input.dailyCap, isDefault: input.isDefault }),
  }),
  updateDidNumber: t.prismaField({
    type: 'DidNumber',
    description: 'Changes a DID number\'s caller-ID pool settings (docs/campaigns.md "Caller-ID pools and local presence")',
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: UpdateDidNumberInput, required: true }) },
    resolve: async (_q, _r, { id, input }, ctx) =>
      updateDidNumber(ctx.deps.db, await ctx.account(), String(id), {
        ...(input.dailyCap !== undefined ? { dailyCap: input.dailyCap } : {}),
        isDefault: input.isDefault,
      }),
  }),
}));
