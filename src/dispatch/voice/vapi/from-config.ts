// The Vapi provider wired to this service: API key, phone numbers and assistant from the account's
// sealed provider config, assistant ids from our agents, events from the provider_events table the
// server-URL endpoint fills (webhook.ts).
import type { AppDeps } from '../../../deps.ts';
import { accountForProviderCall, providerAgentRef } from '../../../services/accounts/provider-config.ts';
import { vapiConfigForAccount, type VapiAccountConfig } from './account-config.ts';
import type { VoiceProvider } from '../provider.ts';
import type { ProviderDeps } from '../provider-module.ts';
import { cachedLoads } from '../account-cache.ts';
import { vapiClients } from './clients.ts';
import { createVapiProvider, type VapiProviderOptions } from './provider.ts';
import { storedVapiReports, takeVapiEvents } from './stored-events.ts';

/** Account configs and agents' assistants are read once per this long (app clock), not once per dial or message. */
const ACCOUNT_CACHE_MS = 30_000;

/** An account's Vapi config, read and decrypted at most once per ACCOUNT_CACHE_MS (one cache per process part). */
export function vapiAccounts(deps: Pick<AppDeps, 'db' | 'appSecret' | 'clock'>): (accountId: string) => Promise<VapiAccountConfig | null> {
  return cachedLoads({ clock: deps.clock, ttlMs: ACCOUNT_CACHE_MS }, (accountId) => vapiConfigForAccount(deps, accountId));
}

export function vapiFromConfig(deps: ProviderDeps, overrides: Partial<VapiProviderOptions> = {}): VoiceProvider {
  const c = deps.config;
  const log = deps.logger.child({ component: 'vapi' });
  return createVapiProvider({
    baseUrl: c.VAPI_BASE_URL,
    clients: vapiClients({ baseUrl: c.VAPI_BASE_URL }),
    account: vapiAccounts(deps),
    // The assistant is our agent's (a prompt version names no Vapi assistant version): per agent.
    assistant: cachedLoads({ clock: deps.clock, ttlMs: ACCOUNT_CACHE_MS }, async (agentId) => (await providerAgentRef(deps, agentId, '')).agentId),
    feed: (callIds, owners) => takeVapiEvents(deps, callIds, owners),
    reports: (vapiCallIds) => storedVapiReports(deps, vapiCallIds),
    accountForCall: (id) => accountForProviderCall(deps, id),
    now: () => deps.clock.now(),
    scheduler: deps.scheduler,
    pollMs: c.VAPI_POLL_MS,
    graceMs: c.VAPI_RECONCILE_GRACE_MS,
    analysisGraceMs: c.VAPI_ANALYSIS_GRACE_MS,
    dialRatePerNumber: c.VAPI_DIAL_RATE_PER_NUMBER,
    onError: (err, context) => log.warn({ err, context }, 'vapi provider error'),
    ...overrides,
  });
}
