// Vapi as this service ships it: the worker's provider, the account's settings and the server-URL
// route (docs/providers.md "Going live with Vapi"). Its recordings are public links that do not
// expire (artifact.recordingUrl), so it declares no recording refresh.
import type { VoiceProviderModule } from '../provider-module.ts';
import { vapiAccountConfig } from './account-config.ts';
import { vapiFromConfig } from './from-config.ts';
import { vapiWebhookRoute } from './webhook.ts';

export const vapiModule: VoiceProviderModule = {
  name: 'vapi',
  create: (deps) => vapiFromConfig(deps),
  accountConfig: vapiAccountConfig,
  routes: (deps) => [vapiWebhookRoute(deps)],
};
