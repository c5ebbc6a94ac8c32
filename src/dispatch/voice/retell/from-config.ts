// The Retell provider wired to this service: API keys from the account's sealed provider config
// (RETELL_API_KEY as the fallback), agent ids from our agents/prompt versions, events from the
// provider_events table the webhook endpoint fills.
import type { AppDeps } from '../../../deps.ts';
import { accountForProviderCall, providerAgentRef, retellConfigForAccount } from '../../../services/provider-config.ts';
import { takeRetellEvents } from '../../../services/retell-events.ts';
import type { VoiceProvider } from '../provider.ts';
import { createRetellProvider } from './provider.ts';

export function retellFromConfig(deps: Pick<AppDeps, 'config' | 'clock' | 'logger' | 'db' | 'appSecret'>): VoiceProvider {
  const c = deps.config;
  const log = deps.logger.child({ component: 'retell' });
  return createRetellProvider({
    baseURL: c.RETELL_BASE_URL,
    account: async (accountId) => {
      const own = await retellConfigForAccount(deps, accountId);
      if (own?.apiKey) return own;
      return c.RETELL_API_KEY ? { apiKey: c.RETELL_API_KEY } : null;
    },
    agent: (agentId, promptId) => providerAgentRef(deps, agentId, promptId),
    feed: (callIds) => takeRetellEvents(deps, callIds),
    accountForCall: (id) => accountForProviderCall(deps, id),
    now: () => deps.clock.now(),
    pollMs: c.RETELL_POLL_MS,
    graceMs: c.RETELL_RECONCILE_GRACE_MS,
    dialRatePerNumber: c.RETELL_DIAL_RATE_PER_NUMBER,
    onError: (err, context) => log.warn({ err, context }, 'retell provider error'),
  });
}
