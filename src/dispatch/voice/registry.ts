// Which VoiceProvider places an account's calls. Accounts name their provider (`account.provider`,
// 'simulator' unless configured); the registry turns that name into one shared instance per worker,
// created on first use so a worker never opens connections to providers nobody uses.
//
// VOICE_PROVIDERS is the one list of the providers this build ships: adding a provider is a folder
// under dispatch/voice/ exporting a VoiceProviderModule, and one line here.

import type { VoiceProvider } from './provider.ts';
import type { ProviderDeps, VoiceProviderModule } from './provider-module.ts';
import { simulatorModule } from './simulator-module.ts';
import { retellModule } from './retell/module.ts';
import { vapiModule } from './vapi/module.ts';

export const VOICE_PROVIDERS: readonly VoiceProviderModule[] = [
  simulatorModule, // the default (DEFAULT_PROVIDER)
  retellModule,
  vapiModule,
];

export const DEFAULT_PROVIDER = 'simulator';

export type ProviderFactory = () => VoiceProvider;

export interface ProviderRegistry {
  /** The provider for `name`; throws UnknownProviderError when none is configured under it. */
  get(name: string | null | undefined): VoiceProvider;
  has(name: string | null | undefined): boolean;
  /** Providers created so far. */
  active(): VoiceProvider[];
  close(): Promise<void>;
}

export class UnknownProviderError extends Error {
  constructor(readonly provider: string) {
    super(`No voice provider named '${provider}' is configured on this worker`);
  }
}

export function createProviderRegistry(factories: Record<string, ProviderFactory>): ProviderRegistry {
  const instances = new Map<string, VoiceProvider>();
  const key = (name: string | null | undefined) => name || DEFAULT_PROVIDER;
  return {
    get(name) {
      const k = key(name);
      let p = instances.get(k);
      if (!p) {
        const factory = Object.hasOwn(factories, k) ? factories[k] : undefined;
        if (!factory) throw new UnknownProviderError(k);
        p = factory();
        instances.set(k, p);
      }
      return p;
    },
    has: (name) => Object.hasOwn(factories, key(name)),
    active: () => [...instances.values()],
    async close() {
      const all = [...instances.values()];
      instances.clear();
      await Promise.allSettled(all.map((p) => p.close()));
    },
  };
}

/** A worker's registry of these providers (default: the ones this build ships), each created from `deps`. */
export function defaultProviderRegistry(deps: ProviderDeps, modules: readonly VoiceProviderModule[] = VOICE_PROVIDERS): ProviderRegistry {
  return createProviderRegistry(Object.fromEntries(modules.map((m) => [m.name, () => m.create(deps)])));
}
