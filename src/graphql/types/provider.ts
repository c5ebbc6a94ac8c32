// Operator mutation: an account's voice provider and its secret config (stored sealed, never read back).
import { builder } from '../builder.ts';
import { PROVIDERS, setAccountProvider, type ProviderName } from '../../services/accounts/provider-config.ts';

builder.mutationFields((t) => ({
  adminSetProvider: t.string({
    description: "Sets the account's voice provider ('simulator' or 'retell'); returns the provider name. The Retell API key is encrypted at rest and never returned.",
    args: {
      accountId: t.arg.id({ required: true }),
      provider: t.arg.string({ required: true }),
      retellApiKey: t.arg.string(),
      dialRatePerNumber: t.arg.float(),
    },
    authScopes: { admin: true },
    resolve: async (_r, { accountId, provider, retellApiKey, dialRatePerNumber }, ctx) => {
      const name = provider as ProviderName;
      const config =
        name === 'retell' && PROVIDERS.includes(name)
          ? { apiKey: retellApiKey ?? '', ...(dialRatePerNumber != null ? { dialRatePerNumber } : {}) }
          : null;
      await setAccountProvider(ctx.deps, String(accountId), name, config);
      ctx.deps.keys.clear();
      return name;
    },
  }),
}));
