// Operator mutation: an account's voice provider and its secret config (stored sealed, never read
// back). Which names exist and what each takes is the providers' (dispatch/voice/account-config.ts).
import { builder } from '../builder.ts';
import { setAccountProvider } from '../../services/accounts/provider-config.ts';
import { setAccountRoute } from '../../services/accounts/account-route.ts';
import { MAX_SETTINGS, providerAccountConfig, providerRouteConfig } from '../../dispatch/voice/account-config.ts';
import { MAX_ROUTE_PROVIDERS, MAX_ROUTE_WEIGHT } from '../../domain/provider-route.ts';

const ProviderRouteInput = builder.inputType('ProviderRouteInput', {
  description:
    'One provider of an account\'s route (docs/providers.md "Routing and failover"), with its own settings as adminSetProvider takes them.',
  fields: (t) => ({
    provider: t.string({ required: true }),
    weight: t.int({ description: `Share of first dials, 0 to ${MAX_ROUTE_WEIGHT} (default 1; 0: only ever a fallback).` }),
    apiKey: t.string(),
    dialRatePerNumber: t.float(),
    settings: t.field({ type: 'JSON' }),
  }),
});

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
  adminSetProviderRoute: t.stringList({
    description: `Sets the account's provider route: up to ${MAX_ROUTE_PROVIDERS} providers tried in order for each dial, the first drawn by weight, each with its own config (encrypted at rest, never returned). The first becomes the account's provider. Returns the provider names in order. adminSetProvider replaces a route with one provider.`,
    args: {
      accountId: t.arg.id({ required: true }),
      providers: t.arg({ type: [ProviderRouteInput], required: true }),
    },
    authScopes: { admin: true },
    resolve: async (_r, { accountId, providers }, ctx) => {
      const route = providerRouteConfig(ctx.deps.voiceProviders, providers);
      await setAccountRoute(ctx.deps, String(accountId), route);
      ctx.deps.keys.clear();
      return route.map((r) => r.provider);
    },
  }),
}));
