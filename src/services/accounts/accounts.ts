import type { Database } from '../../db/client.ts';
import { newId } from '../../domain/ids.ts';
import { notFound, requestValidation } from '../../errors.ts';
import { MAX_EMAIL_LENGTH, MAX_NAME_LENGTH, MAX_VOICES, tooLongDetails } from '../../domain/limits.ts';
import { Prisma, type Account } from '../../generated/prisma/client.ts';
import { callingWindowProblems, normalizeWindow, RECIPIENT_ZONE } from '../../domain/calling-window.ts';
import type { CallingWindowRequest } from '../../domain/create-batch-types.ts';
import { issueApiKey } from '../auth/api-keys.ts';
import { setEnforcedWindow } from './enforce-window.ts';
import { formatIssue } from '../../domain/field-issue.ts';
import { frequencyCapIssues, type FrequencyCap } from '../../domain/frequency-cap.ts';
import { releaseCapHolds } from './release-cap-holds.ts';
import { complianceProfilesProblems } from '../../domain/compliance/profiles.ts';

export interface AccountLimitsInput {
  maxBatchSize?: number;
  maxConcurrentCalls?: number;
  maxCallDurationSeconds?: number;
  rateLimitPerMinute?: number;
}

export interface AccountInput {
  name?: string;
  email?: string;
  limits?: AccountLimitsInput;
  batchConcurrency?: number;
  apiAccessEnabled?: boolean;
  interruptionEnabled?: boolean;
  recordingEnabled?: boolean;
  voices?: string[];
  /** Calling windows (docs/campaigns.md): undefined leaves one as it is, null clears it. */
  defaultCallingWindow?: CallingWindowRequest | null;
  enforcedCallingWindow?: CallingWindowRequest | null;
  /** undefined: unchanged; null: no cap. */
  frequencyCap?: FrequencyCap | null;
  /** Compliance profiles (docs/campaigns.md): undefined unchanged; null: the service default; []: none. */
  complianceProfiles?: readonly string[] | null;
  /** The national registry spares contacts with a consent record (docs/campaigns.md "National do-not-call registry"). */
  registryConsentExempt?: boolean;
  /** Number health's webhooks go to the account's live callback URLs (docs/webhooks.md); default false. */
  numberHealthWebhooks?: boolean;
}

function checkLengths(input: AccountInput): void {
  const voices = input.voices ?? [];
  const details = tooLongDetails([
    ['name', input.name, MAX_NAME_LENGTH],
    ['email', input.email, MAX_EMAIL_LENGTH],
    ...voices.map((voice, i) => [`voices.${i}`, voice, MAX_NAME_LENGTH] as const),
  ]);
  if (voices.length > MAX_VOICES) details.push(`voices: List should have at most ${MAX_VOICES} items after validation, not ${voices.length}`);
  for (const field of ['defaultCallingWindow', 'enforcedCallingWindow'] as const) {
    const w = input[field];
    if (w) details.push(...callingWindowProblems({ ...w, timezone: w.timezone ?? RECIPIENT_ZONE }).map(([f, reason]) => `${field}.${f}: ${reason}`));
  }
  if (input.frequencyCap) details.push(...frequencyCapIssues(input.frequencyCap).map((i) => formatIssue(i)));
  for (const [index, reason] of complianceProfilesProblems(input.complianceProfiles ?? []))
    details.push(`complianceProfiles${index === null ? '' : `.${index}`}: ${reason}`);
  if (details.length) throw requestValidation(details);
}

const requestedWindow = (w: CallingWindowRequest) => normalizeWindow({ ...w, timezone: w.timezone ?? RECIPIENT_ZONE });

/** A window to store: the normalised JSON, JSON null to clear, undefined to leave as is. */
function windowData(w: CallingWindowRequest | null | undefined) {
  if (w === undefined) return undefined;
  if (w === null) return Prisma.DbNull;
  return { ...requestedWindow(w) };
}

function accountData(input: AccountInput) {
  checkLengths(input);
  const defined = <T extends object>(o: T) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== null)) as Partial<T>;
  const cap = input.frequencyCap;
  return {
    ...defined({
      name: input.name,
      email: input.email,
      maxBatchSize: input.limits?.maxBatchSize,
      maxConcurrentCalls: input.limits?.maxConcurrentCalls,
      maxCallDurationSeconds: input.limits?.maxCallDurationSeconds,
      rateLimitPerMinute: input.limits?.rateLimitPerMinute,
      batchConcurrency: input.batchConcurrency,
      apiAccessEnabled: input.apiAccessEnabled,
      interruptionEnabled: input.interruptionEnabled,
      recordingEnabled: input.recordingEnabled,
      registryConsentExempt: input.registryConsentExempt,
      numberHealthWebhooks: input.numberHealthWebhooks,
      voices: input.voices,
      defaultCallingWindow: windowData(input.defaultCallingWindow),
      enforcedCallingWindow: windowData(input.enforcedCallingWindow),
    }),
    // null clears the cap: not dropped like the other absent fields.
    ...(cap === undefined ? {} : { frequencyCapMaxCalls: cap?.maxCalls ?? null, frequencyCapPeriodSeconds: cap?.periodSeconds ?? null }),
    // null: back to the service default, not dropped like the other absent fields.
    ...(input.complianceProfiles === undefined
      ? {}
      : { complianceProfiles: input.complianceProfiles === null ? Prisma.DbNull : [...input.complianceProfiles] }),
  };
}

export async function createAccount(
  db: Database,
  input: AccountInput & { name: string; email: string },
): Promise<{ account: Account; apiKey: string; apiKeyId: string }> {
  const account = await db.prisma.account.create({
    data: { id: newId('account'), voices: ['alloy', 'verse'], ...accountData(input), name: input.name, email: input.email },
  });
  const { id, apiKey } = await issueApiKey(db, account.id);
  return { account, apiKey, apiKeyId: id };
}

export async function updateAccount(db: Database, id: string, input: AccountInput, now: Date): Promise<Account> {
  const existing = await db.prisma.account.findUnique({ where: { id } });
  if (!existing) throw notFound(`Account ${id} not found`);
  const { enforcedCallingWindow: _set, ...data } = accountData(input);
  // With the batches it reaches, in its own transaction; the other settings after it.
  const enforced = input.enforcedCallingWindow;
  if (enforced !== undefined) await setEnforcedWindow(db, id, enforced === null ? null : requestedWindow(enforced), now);
  const updated = await db.prisma.account.update({ where: { id }, data });
  const capChanged =
    existing.frequencyCapMaxCalls !== updated.frequencyCapMaxCalls || existing.frequencyCapPeriodSeconds !== updated.frequencyCapPeriodSeconds;
  // Calls held under the old cap are judged again under the new one at the next claim.
  if (capChanged) await releaseCapHolds(db, id, now);
  return updated;
}
