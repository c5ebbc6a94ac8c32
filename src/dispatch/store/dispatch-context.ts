// What a worker needs to place a batch's calls: the batch's dial settings, its agent and prompt
// version, its own caller-ID number (else the account's pool) and the account's voice provider.
// Fixed once the batch exists but for the enforced window, so the worker reads it once per batch
// and again when the window's version it claimed under is newer.
import { profilesInForce } from '../../domain/compliance/profiles.ts';
import type { ComplianceProfile } from '../../domain/compliance/rules-v1.ts';
import type { OptOutRule } from '../../domain/opt-out.ts';
import type { AppDeps } from '../../deps.ts';
import { isRetryOutcome, type RetryPolicy } from '../../domain/retry-policy.ts';
import { effectiveWindows, storedWindow, type CallingWindow } from '../../domain/calling-window.ts';
import { runStatement } from '../../db/sql-statement.ts';
import { voicemailSetting, type VoicemailSetting } from '../../domain/voicemail.ts';

export interface DispatchContext {
  batchId: string;
  accountId: string;
  provider: string;
  /** The batch's own DID (E.164), the only number its calls are placed from; null: chosen per dial from the account's pool. */
  from: string | null;
  /** The batch's own DID's id; null: the account's pool. */
  didNumberId: string | null;
  /** The account's DID numbers when these settings were read: what pacing shares among pool batches. */
  poolNumbers: string[];
  voice: string;
  interruption: boolean;
  recordingEnabled: boolean;
  useAlternateNumber: boolean;
  maxDurationSeconds: number;
  /** What a dial does on voicemail (batches.voicemail and voicemail_message); null: the provider's own behaviour. */
  voicemail: VoicemailSetting | null;
  /** Set at creation; may later be cleared (410 Gone), never set. */
  callbackUrl: string | null;
  /** optOutOutcomeKey as read with the batch; the analysis reads it again (worker/opt-out-keys.ts). */
  agent: { id: string; name: string; voice: string; outcomeKeys: string[]; optOutOutcomeKey: string | null };
  prompt: { id: string; name: string; text: string };
  retry: RetryPolicy | null;
  expiresAt: Date | null;
  /** The batch's calling window and the enforced one, those that are set (empty: none). */
  windows: CallingWindow[];
  /** Bumped when the enforced window changes (services/accounts/enforce-window.ts). */
  windowsVersion: number;
  /** The compliance profiles in force, fixed at the create (batches.compliance_profiles). */
  profiles: ComplianceProfile[];
}

export async function loadDispatchContexts(deps: Pick<AppDeps, 'db'>, batchIds: string[]): Promise<Map<string, DispatchContext>> {
  const out = new Map<string, DispatchContext>();
  if (batchIds.length === 0) return out;
  const batches = await deps.db.prisma.batch.findMany({
    where: { id: { in: batchIds } },
    include: {
      agent: true,
      promptVersion: true,
      didNumber: true,
      account: { select: { provider: true, maxCallDurationSeconds: true } },
    },
  });
  // A batch created without a DID dials from the account's pool, a number chosen per dial (worker/caller-id.ts).
  const needPool = [...new Set(batches.filter((b) => !b.didNumber).map((b) => b.accountId))];
  const pools = new Map<string, string[]>();
  if (needPool.length > 0) {
    const dids = await deps.db.prisma.didNumber.findMany({ where: { accountId: { in: needPool } }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
    for (const d of dids) pools.set(d.accountId, [...(pools.get(d.accountId) ?? []), d.number]);
  }
  for (const b of batches) {
    out.set(b.id, {
      batchId: b.id,
      accountId: b.accountId,
      provider: b.account.provider,
      from: b.didNumber?.number ?? null,
      didNumberId: b.didNumber?.id ?? null,
      poolNumbers: b.didNumber ? [] : (pools.get(b.accountId) ?? []),
      voice: b.voice,
      interruption: b.interruption,
      recordingEnabled: b.recordingEnabled,
      useAlternateNumber: b.useAlternateNumber,
      maxDurationSeconds: b.maxDurationSeconds > 0 ? b.maxDurationSeconds : b.account.maxCallDurationSeconds,
      voicemail: voicemailSetting(b),
      callbackUrl: b.callbackUrl,
      agent: { id: b.agent.id, name: b.agent.name, voice: b.voice, outcomeKeys: b.agent.outcomeKeys, optOutOutcomeKey: b.agent.optOutOutcomeKey },
      prompt: { id: b.promptVersion.id, name: b.promptVersion.name, text: b.promptVersion.prompt },
      retry:
        b.retryMaxAttempts === null
          ? null
          : { maxAttempts: b.retryMaxAttempts, on: b.retryOn.filter(isRetryOutcome), delaySeconds: b.retryDelaySeconds ?? 0 },
      expiresAt: b.expiresAt,
      windows: effectiveWindows(storedWindow(b.callingWindow), storedWindow(b.enforcedWindow)),
      windowsVersion: b.windowsVersion,
      profiles: profilesInForce(b.complianceProfiles),
    });
  }
  return out;
}

/** The opt-out settings (key, detection) of each of these agents (absent: the agent is gone). */
export async function agentOptOutKeys(deps: Pick<AppDeps, 'db'>, agentIds: string[]): Promise<Map<string, OptOutRule>> {
  if (agentIds.length === 0) return new Map();
  const rows = await runStatement<{ id: string; opt_out_outcome_key: string | null; opt_out_detection: boolean }>(
    deps.db,
    'SELECT id, opt_out_outcome_key, opt_out_detection FROM agents WHERE id = ANY($1::text[])',
    [agentIds],
  );
  return new Map(rows.map((r) => [r.id, { key: r.opt_out_outcome_key, detection: r.opt_out_detection }]));
}
