// The Retell provider wired to this service: API keys from the account's sealed provider config
// (RETELL_API_KEY as the fallback), agent ids from our agents/prompt versions, events from the
// provider_events table the webhook endpoint fills.
import type { AppDeps } from '../../../deps.ts';
import { accountForProviderCall, providerAgentRef } from '../../../services/accounts/provider-config.ts';
import { cachedLoads } from '../account-cache.ts';
import { retellConfigForAccount } from './account-config.ts';
import { storedRetellCalls, takeRetellEvents } from './stored-events.ts';
import type { VoiceProvider } from '../provider.ts';
import type { ProviderDeps } from '../provider-module.ts';
import { retellClients, type RetellClients } from './clients.ts';
import { createRetellProvider, type RetellAccount, type RetellProviderOptions } from './provider.ts';

/** Account configs (read and decrypted) and agent references are read once per this long, not once per dial. */
const ACCOUNT_CACHE_MS = 30_000;

type Deps = Pick<AppDeps, 'config' | 'db' | 'appSecret' | 'clock'>;

/** How this process reaches an account's Retell API: its key (cached) and one SDK client per key. */
export interface RetellAccess {
  account(accountId: string): Promise<RetellAccount | null>;
  client: RetellClients;
}

/**
 * The account's own Retell key (and pacing), else RETELL_API_KEY; null when neither exists. Read
 * and decrypted at most once per ACCOUNT_CACHE_MS of the app clock per account.
 */
export function retellAccess(deps: Deps): RetellAccess {
  const account = cachedLoads({ clock: deps.clock, ttlMs: ACCOUNT_CACHE_MS }, async (accountId): Promise<RetellAccount | null> => {
    const own = await retellConfigForAccount(deps, accountId);
    if (own?.apiKey) return own;
    return deps.config.RETELL_API_KEY ? { apiKey: deps.config.RETELL_API_KEY } : null;
  });
  return { account, client: retellClients({ baseURL: deps.config.RETELL_BASE_URL }) };
}

export function retellFromConfig(deps: ProviderDeps, overrides: Partial<RetellProviderOptions> = {}): VoiceProvider {
  const c = deps.config;
  const log = deps.logger.child({ component: 'retell' });
  const access = retellAccess(deps);
  // Per agent and prompt version, like the account: a dial must not wait for a pool connection to
  // read a row every other dial of the batch just read (5,000 dials at once ran the pool dry).
  const agentRef = cachedLoads({ clock: deps.clock, ttlMs: ACCOUNT_CACHE_MS }, (key) => {
    const [agentId, promptId] = key.split('\n');
    return providerAgentRef(deps, agentId, promptId);
  });
  return createRetellProvider({
    baseURL: c.RETELL_BASE_URL,
    account: access.account,
    clients: access.client,
    agent: (agentId, promptId) => agentRef(`${agentId}\n${promptId}`),
    feed: (callIds, owners) => takeRetellEvents(deps, callIds, owners),
    analyzed: (retellCallIds) => storedRetellCalls(deps, retellCallIds, 'call_analyzed'),
    accountForCall: (id) => accountForProviderCall(deps, id),
    now: () => deps.clock.now(),
    scheduler: deps.scheduler,
    pollMs: c.RETELL_POLL_MS,
    graceMs: c.RETELL_RECONCILE_GRACE_MS,
    analysisGraceMs: c.RETELL_ANALYSIS_GRACE_MS,
    dialRatePerNumber: c.RETELL_DIAL_RATE_PER_NUMBER,
    onError: (err, context) => log.warn({ err, context }, 'retell provider error'),
    ...overrides,
  });
}
