// Which VoiceProvider places an account's calls. Accounts name their provider (`account.provider`,
// 'simulator' unless configured); the registry turns that name into one shared instance per worker,
// created on first use so a worker never opens connections to providers nobody uses.

import type { AppDeps } from '../../deps.ts';
import type { VoiceProvider } from './provider.ts';
import { createSimulatorProvider } from './simulator.ts';
import { retellFromConfig } from './retell/from-config.ts';

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

/**
 * The simulator follows the app clock for its timestamps (so call records agree with the rest of the
 * data, also under a test clock) while its timers run in real time (SIM_CALL_MS).
 */
export function simulatorFromConfig(deps: Pick<AppDeps, 'config' | 'clock' | 'logger'>): VoiceProvider {
  return createSimulatorProvider({
    callMs: deps.config.SIM_CALL_MS,
    clock: {
      now: () => deps.clock.now(),
      setTimeout: (fn, ms) => setTimeout(fn, ms),
      clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
    },
    onListenerError: (err) => deps.logger.error({ err }, 'voice provider listener failed'),
  });
}

export function createProviderRegistry(factories: Record<string, ProviderFactory>): ProviderRegistry {
  const instances = new Map<string, VoiceProvider>();
  const key = (name: string | null | undefined) => name || DEFAULT_PROVIDER;
  return {
    get(name) {
      const k = key(name);
      let p = instances.get(k);
      if (!p) {
        const factory = factories[k];
        if (!factory) throw new UnknownProviderError(k);
        p = factory();
        instances.set(k, p);
      }
      return p;
    },
    has: (name) => key(name) in factories,
    active: () => [...instances.values()],
    async close() {
      const all = [...instances.values()];
      instances.clear();
      await Promise.allSettled(all.map((p) => p.close()));
    },
  };
}

/** The providers this build ships: the simulator and Retell (its API keys come from the accounts' sealed config). */
export function defaultProviderRegistry(deps: Pick<AppDeps, 'config' | 'clock' | 'logger' | 'db' | 'appSecret'>): ProviderRegistry {
  return createProviderRegistry({ simulator: () => simulatorFromConfig(deps), retell: () => retellFromConfig(deps) });
}
