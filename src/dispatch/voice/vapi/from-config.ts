// The Vapi provider wired to this service: API key, phone numbers and assistant from the account's
// sealed provider config, assistant ids from our agents, events from the provider_events table the
// server-URL endpoint fills (webhook.ts).
import type { AppDeps } from '../../../deps.ts';
import { accountForProviderCall, providerAgentRef } from '../../../services/accounts/provider-config.ts';
import { vapiConfigForAccount, type VapiAccountConfig } from './account-config.ts';
import type { VoiceProvider } from '../provider.ts';
import { vapiClients } from './clients.ts';
import { createVapiProvider, type VapiProviderOptions } from './provider.ts';
import { storedVapiReports, takeVapiEvents } from './stored-events.ts';

/** Account configs and agents' assistants are read once per this long, not once per dial or message. */
const ACCOUNT_CACHE_MS = 30_000;

/**
 * `load(key)`, remembered for ACCOUNT_CACHE_MS per key (a failed load is forgotten at once), at most
 * 10,000 keys kept past their time: a worker dialling hundreds of calls a second must not read (and
 * decrypt) the same row for each, nor hold one pool connection per dial to do it.
 */
function cachedFor<T>(load: (key: string) => Promise<T>): (key: string) => Promise<T> {
  const cache = new Map<string, { at: number; value: Promise<T> }>();
  return (key) => {
    const hit = cache.get(key);
    if (hit && Date.now() - hit.at < ACCOUNT_CACHE_MS) return hit.value;
    const value = load(key);
    cache.set(key, { at: Date.now(), value });
    value.catch(() => cache.delete(key));
    if (cache.size > 10_000) for (const [k, v] of cache) if (Date.now() - v.at >= ACCOUNT_CACHE_MS) cache.delete(k);
    return value;
  };
}

/** An account's Vapi config, read and decrypted at most once per ACCOUNT_CACHE_MS (one cache per process part). */
export function vapiAccounts(deps: Pick<AppDeps, 'db' | 'appSecret'>): (accountId: string) => Promise<VapiAccountConfig | null> {
  return cachedFor((accountId) => vapiConfigForAccount(deps, accountId));
}

export function vapiFromConfig(
  deps: Pick<AppDeps, 'config' | 'clock' | 'logger' | 'db' | 'appSecret'>,
  overrides: Partial<VapiProviderOptions> = {},
): VoiceProvider {
  const c = deps.config;
  const log = deps.logger.child({ component: 'vapi' });
  return createVapiProvider({
    baseUrl: c.VAPI_BASE_URL,
    clients: vapiClients({ baseUrl: c.VAPI_BASE_URL }),
    account: vapiAccounts(deps),
    // The assistant is our agent's (a prompt version names no Vapi assistant version): per agent.
    assistant: (() => {
      const byAgent = cachedFor(async (agentId) => (await providerAgentRef(deps, agentId, '')).agentId);
      return (agentId: string) => byAgent(agentId);
    })(),
    feed: (callIds, owners) => takeVapiEvents(deps, callIds, owners),
    reports: (vapiCallIds) => storedVapiReports(deps, vapiCallIds),
    accountForCall: (id) => accountForProviderCall(deps, id),
    now: () => deps.clock.now(),
    pollMs: c.VAPI_POLL_MS,
    graceMs: c.VAPI_RECONCILE_GRACE_MS,
    analysisGraceMs: c.VAPI_ANALYSIS_GRACE_MS,
    dialRatePerNumber: c.VAPI_DIAL_RATE_PER_NUMBER,
    onError: (err, context) => log.warn({ err, context }, 'vapi provider error'),
    ...overrides,
  });
}
