// Turns the references and optional settings of a create request into the values a batch is
// stored with: which agent, prompt version, voice and caller ID, and the effective limits.
import type { AppDeps } from '../../deps.ts';
import type { CreateBatchInput } from '../../domain/create-batch-types.ts';
import { normalizePhone } from '../../domain/contacts.ts';
import { notFound, unprocessable } from '../../errors.ts';
import type { Account, Agent, PromptVersion } from '../../generated/prisma/client.ts';

export interface BatchSettings {
  agent: Agent;
  version: PromptVersion;
  voice: string;
  /** The batch's own caller ID; null: chosen per dial from the account's pool (docs/campaigns.md "Caller-ID pools and local presence"). */
  didNumberId: string | null;
  concurrency: number;
  interruption: boolean;
  recordingEnabled: boolean;
  maxDurationSeconds: number;
}

export async function resolveBatchSettings(deps: AppDeps, account: Account, input: CreateBatchInput): Promise<BatchSettings> {
  // Looked up beside the agent and version; its refusal still comes after theirs.
  const didNumber = resolveDidNumber(deps, account, input.didNumberId);
  didNumber.catch(() => {});
  const agent = await resolveAgent(deps, account, input);
  const version = await resolveVersion(deps, account, agent, input);
  const voice = resolveVoice(account, agent, input.voice);
  const didNumberId = await didNumber;
  return {
    agent,
    version,
    voice,
    didNumberId,
    // An explicit value is capped rather than rejected: the result reports the effective value.
    concurrency: Math.max(1, Math.min(input.concurrency ?? account.batchConcurrency, account.maxConcurrentCalls)),
    interruption: input.interruption && account.interruptionEnabled,
    recordingEnabled: input.recordingEnabled ?? agent.recordingEnabled ?? account.recordingEnabled,
    // Values above the account limit were already refused by request validation.
    maxDurationSeconds: input.maxDurationSecondsPerCall ?? account.maxCallDurationSeconds,
  };
}

// An id wins over a name when both are sent: ids are what integrations store.
async function resolveAgent(deps: AppDeps, account: Account, input: CreateBatchInput): Promise<Agent> {
  const where = input.agentId !== null ? { id: input.agentId } : { name: input.agentName! };
  const agent = await deps.db.prisma.agent.findFirst({ where: { accountId: account.id, ...where } });
  if (!agent) {
    throw notFound(input.agentId !== null ? `Agent '${input.agentId}' not found` : `Agent named '${input.agentName}' not found`);
  }
  return agent;
}

async function resolveVersion(deps: AppDeps, account: Account, agent: Agent, input: CreateBatchInput): Promise<PromptVersion> {
  const where = input.versionId !== null ? { id: input.versionId } : { name: input.versionName! };
  const version = await deps.db.prisma.promptVersion.findFirst({
    where: { accountId: account.id, agentId: agent.id, ...where },
  });
  if (!version) {
    const what = input.versionId !== null ? `Prompt version '${input.versionId}'` : `Prompt version named '${input.versionName}'`;
    throw notFound(`${what} not found for agent '${agent.id}'`);
  }
  return version;
}

// An account with no voice list accepts any voice (as agent creation does).
function resolveVoice(account: Account, agent: Agent, requested: string | null): string {
  const voice = requested ?? agent.voice;
  if (account.voices.length > 0 && !account.voices.includes(voice)) {
    throw unprocessable(`Voice '${voice}' is not available on this account`);
  }
  return voice;
}

/**
 * `did_number_id` names one of the account's numbers by id or by the number itself (the legacy
 * `did_number` sample sends a number). Omitted: none stored, each dial's number is chosen from the
 * account's pool (the contract's "auto-selected"), which must hold one.
 */
async function resolveDidNumber(deps: AppDeps, account: Account, requested: string | null): Promise<string | null> {
  if (requested === null) {
    const first = await deps.db.prisma.didNumber.findFirst({ where: { accountId: account.id }, select: { id: true } });
    if (!first) throw unprocessable('No DID number is available on this account');
    return null;
  }
  const asNumber = normalizePhone(requested);
  const did = await deps.db.prisma.didNumber.findFirst({
    where: { accountId: account.id, OR: [{ id: requested }, ...(asNumber ? [{ number: asNumber }] : [])] },
  });
  if (!did) throw unprocessable(`DID number '${requested}' is not available on this account`);
  return did.id;
}
