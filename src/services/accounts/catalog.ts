// Agents, prompt versions and DID numbers: the account's catalogue that batches refer to.
import type { Database } from '../../db/client.ts';
import { newId } from '../../domain/ids.ts';
import { normalizePhone } from '../../domain/contacts.ts';
import { AppError, notFound, requestValidation, unprocessable } from '../../errors.ts';
import {
  MAX_AGENTS_PER_ACCOUNT,
  MAX_DID_NUMBERS_PER_ACCOUNT,
  MAX_NAME_LENGTH,
  MAX_OUTCOME_KEY_LENGTH,
  MAX_OUTCOME_KEYS,
  MAX_PHONE_NUMBER_LENGTH,
  MAX_PROMPT_LENGTH,
  MAX_PROMPT_VERSIONS_PER_ACCOUNT,
  tooLongDetails,
} from '../../domain/limits.ts';
import type { Account, Agent, DidNumber, PromptVersion } from '../../generated/prisma/client.ts';
import { formatIssue } from '../../domain/field-issue.ts';
import { optOutKeyIssues } from '../../domain/opt-out.ts';
import { localityOf } from '../../domain/caller-id.ts';
import { poolSettingIssues, setPoolSettings, withPoolLocked, type PoolSettings } from './caller-id-pool.ts';

export interface AgentInput {
  name: string;
  voice: string;
  recordingEnabled?: boolean | null;
  outcomeKeys?: string[];
  providerAgentId?: string | null;
  /** One of outcomeKeys: its "yes" puts the contact's numbers on the do-not-call list. */
  optOutOutcomeKey?: string | null;
  /** The default key and the phrase list (domain/opt-out.ts); null/undefined: on. */
  optOutDetection?: boolean | null;
}

export interface AgentUpdate {
  /** undefined: unchanged; null: no opt-out key. */
  optOutOutcomeKey?: string | null;
  /** undefined: unchanged. */
  optOutDetection?: boolean;
}

function agentLengthDetails(input: AgentInput): string[] {
  const keys = input.outcomeKeys ?? [];
  const details = tooLongDetails([
    ['name', input.name, MAX_NAME_LENGTH],
    ['voice', input.voice, MAX_NAME_LENGTH],
    ['providerAgentId', input.providerAgentId, MAX_NAME_LENGTH],
    // Past the count limit only its refusal is added: one detail per key spread a caller-sized list.
    ...keys.slice(0, MAX_OUTCOME_KEYS).map((key, i) => [`outcomeKeys.${i}`, key, MAX_OUTCOME_KEY_LENGTH] as const),
  ]);
  if (keys.length > MAX_OUTCOME_KEYS)
    details.push(`outcomeKeys: List should have at most ${MAX_OUTCOME_KEYS} items after validation, not ${keys.length}`);
  return details;
}

/** The catalogue's size limit (concurrent creates may pass it by a few). */
async function checkRoom(count: Promise<number>, max: number, what: string): Promise<void> {
  if ((await count) >= max) throw unprocessable(`An account holds at most ${max} ${what}`);
}

function isUniqueViolation(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as { code?: string }).code === 'P2002';
}

export async function createAgent(db: Database, account: Account, input: AgentInput): Promise<Agent> {
  const problems: string[] = [];
  if (!input.name?.trim()) problems.push('name: String should have at least 1 character');
  if (!input.voice?.trim()) problems.push('voice: String should have at least 1 character');
  problems.push(...agentLengthDetails(input));
  problems.push(...optOutKeyIssues(input.optOutOutcomeKey, input.outcomeKeys ?? []).map((i) => formatIssue(i)));
  if (problems.length) throw requestValidation(problems);
  if (account.voices.length > 0 && !account.voices.includes(input.voice)) {
    throw unprocessable(`Voice '${input.voice}' is not available on this account`);
  }
  await checkRoom(db.prisma.agent.count({ where: { accountId: account.id } }), MAX_AGENTS_PER_ACCOUNT, 'agents');
  try {
    return await db.prisma.agent.create({
      data: {
        id: newId('agent'),
        accountId: account.id,
        name: input.name.trim(),
        voice: input.voice,
        recordingEnabled: input.recordingEnabled ?? null,
        outcomeKeys: input.outcomeKeys ?? [],
        providerAgentId: input.providerAgentId ?? null,
        optOutOutcomeKey: input.optOutOutcomeKey ?? null,
        optOutDetection: input.optOutDetection ?? true,
      },
    });
  } catch (e) {
    if (isUniqueViolation(e)) throw new AppError('CONFLICT', `An agent named '${input.name}' already exists`);
    throw e;
  }
}

/** Changes an agent's settings; a worker applies a new opt-out key within seconds (docs/campaigns.md). */
export async function updateAgent(db: Database, account: Account, id: string, input: AgentUpdate): Promise<Agent> {
  const agent = await db.prisma.agent.findFirst({ where: { id, accountId: account.id } });
  if (!agent) throw notFound(`Agent ${id} not found`);
  if (input.optOutOutcomeKey === undefined && input.optOutDetection === undefined) return agent;
  const problems = input.optOutOutcomeKey === undefined ? [] : optOutKeyIssues(input.optOutOutcomeKey, agent.outcomeKeys).map((i) => formatIssue(i));
  if (problems.length) throw requestValidation(problems);
  return db.prisma.agent.update({
    where: { id: agent.id },
    data: {
      ...(input.optOutOutcomeKey !== undefined ? { optOutOutcomeKey: input.optOutOutcomeKey } : {}),
      ...(input.optOutDetection !== undefined ? { optOutDetection: input.optOutDetection } : {}),
    },
  });
}

export async function createPromptVersion(
  db: Database,
  account: Account,
  input: { agentId: string; name: string; prompt: string; providerAgentVersion?: number | null },
): Promise<PromptVersion> {
  const agent = await db.prisma.agent.findFirst({ where: { id: input.agentId, accountId: account.id } });
  if (!agent) throw notFound(`Agent ${input.agentId} not found`);
  const problems = tooLongDetails([
    ['name', input.name, MAX_NAME_LENGTH],
    ['prompt', input.prompt, MAX_PROMPT_LENGTH],
  ]);
  if (!input.name?.trim()) problems.unshift('name: String should have at least 1 character');
  if (problems.length) throw requestValidation(problems);
  await checkRoom(db.prisma.promptVersion.count({ where: { accountId: account.id } }), MAX_PROMPT_VERSIONS_PER_ACCOUNT, 'prompt versions');
  try {
    return await db.prisma.promptVersion.create({
      data: {
        id: newId('promptVersion'),
        accountId: account.id,
        agentId: agent.id,
        name: input.name.trim(),
        prompt: input.prompt,
        providerAgentVersion: input.providerAgentVersion ?? null,
      },
    });
  } catch (e) {
    if (isUniqueViolation(e)) throw new AppError('CONFLICT', `Agent ${agent.id} already has a version named '${input.name}'`);
    throw e;
  }
}

export async function addDidNumber(db: Database, account: Account, number: string, pool: PoolSettings = {}): Promise<DidNumber> {
  const e164 = number.length <= MAX_PHONE_NUMBER_LENGTH ? normalizePhone(number) : null;
  if (!e164) throw requestValidation(['number: Value error, Invalid phone number']);
  const issues = poolSettingIssues(pool);
  if (issues.length) throw requestValidation(issues);
  await checkRoom(db.prisma.didNumber.count({ where: { accountId: account.id } }), MAX_DID_NUMBERS_PER_ACCOUNT, 'DID numbers');
  // Where it is local, for the pool's choice (domain/caller-id.ts): derived once, here.
  const { areaCode, region } = localityOf(e164);
  const id = newId('didNumber');
  // One transaction: the number and its becoming the default commit together or not at all.
  await withPoolLocked(db, account.id, async (tx) => {
    const added = await tx.query(
      `INSERT INTO did_numbers (id, account_id, number, area_code, region, daily_cap) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (account_id, number) DO NOTHING RETURNING id`,
      [id, account.id, e164, areaCode, region, pool.dailyCap ?? null],
    );
    if (added.length === 0) throw new AppError('CONFLICT', `DID number ${e164} already exists on this account`);
    if (pool.isDefault) await setPoolSettings(tx, account.id, id, { isDefault: true });
  });
  return db.prisma.didNumber.findUniqueOrThrow({ where: { id } });
}
