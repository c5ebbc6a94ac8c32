import type { AppDeps } from '../../deps.ts';
import { createAccount } from './accounts.ts';
import { addDidNumber, createAgent, createPromptVersion } from './catalog.ts';

export interface DemoSeed {
  accountId: string;
  apiKey: string;
  agentId: string;
  versionId: string;
}

/** On an empty database, a ready-to-use account so a new user can call the API in a minute. */
export async function seedDemoIfEmpty(deps: AppDeps): Promise<DemoSeed | null> {
  if ((await deps.db.prisma.account.count()) > 0) return null;
  const { account, apiKey } = await createAccount(deps.db, {
    name: 'Demo Account',
    email: 'demo@example.com',
    voices: ['alloy', 'verse', 'sage'],
    // Its calls go to the simulator and reach nobody: no quiet hours, so the README's first batch
    // completes at any hour. Every other account gets DEFAULT_COMPLIANCE_PROFILES (us_tcpa).
    complianceProfiles: [],
  });
  const agent = await createAgent(deps.db, account, {
    name: 'Demo Agent',
    voice: 'alloy',
    outcomeKeys: ['interested', 'callback_requested', 'sentiment'],
  });
  const version = await createPromptVersion(deps.db, account, {
    agentId: agent.id,
    name: 'v1',
    prompt: 'You are a friendly assistant confirming appointment details. Be brief and polite.',
  });
  await addDidNumber(deps.db, account, '+14155550100');
  return { accountId: account.id, apiKey, agentId: agent.id, versionId: version.id };
}
