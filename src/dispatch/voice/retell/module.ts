// Retell as this service ships it: the worker's provider, the account's key, the webhook route
// and the refresh of expired recording links (docs/providers.md).
import type { VoiceProviderModule } from '../provider-module.ts';
import { retellAccountConfig } from './account-config.ts';
import { retellFromConfig } from './from-config.ts';
import { createRecordingRefresher } from './recording-refresh.ts';
import { retellWebhookRoute } from './webhook.ts';

export const retellModule: VoiceProviderModule = {
  name: 'retell',
  create: (deps) => retellFromConfig(deps),
  accountConfig: retellAccountConfig,
  routes: (deps) => [retellWebhookRoute(deps)],
  recordings: {
    // An operator-configured Retell address (the tests' fake) may serve recordings from a private address.
    trustedOrigin: (config) => config.RETELL_BASE_URL,
    source: (deps) => createRecordingRefresher(deps),
  },
};
