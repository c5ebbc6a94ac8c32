// Operator mutation: an account's voice provider and its secret config (stored sealed, never read
// back). Which names exist and what each takes is the providers' (dispatch/voice/account-config.ts).
import { builder } from '../builder.ts';
import { setAccountProvider } from '../../services/accounts/provider-config.ts';
import { MAX_SETTINGS, providerAccountConfig } from '../../dispatch/voice/account-config.ts';

builder.mutationFields((t) => ({
  adminSetProvider: t.string({
    description:
      "Sets the account's voice provider ('simulator' unless another this build ships, e.g. 'retell'); returns the provider name. Its config (API key, settings) is encrypted at rest and never returned; switching to a provider that takes none forgets it.",
    args: {
      accountId: t.arg.id({ required: true }),
      provider: t.arg.string({ required: true }),
      apiKey: t.arg.string({ description: "The provider's API key, for providers that need one." }),
      retellApiKey: t.arg.string({ deprecationReason: 'Use apiKey.' }),
      dialRatePerNumber: t.arg.float({ description: 'Calls per second per from-number for this account, 0 = unpaced (providers that pace).' }),
      settings: t.arg({
        type: 'JSON',
        description: `Provider-specific settings: an object of at most ${MAX_SETTINGS} strings, numbers or booleans (docs/providers.md).`,
      }),
    },
    authScopes: { admin: true },
    resolve: async (_r, { accountId, provider, apiKey, retellApiKey, dialRatePerNumber, settings }, ctx) => {
      const config = providerAccountConfig(ctx.deps.voiceProviders, provider, { apiKey: apiKey ?? retellApiKey, dialRatePerNumber, settings });
      await setAccountProvider(ctx.deps, String(accountId), provider, config);
      ctx.deps.keys.clear();
      return provider;
    },
  }),
}));
