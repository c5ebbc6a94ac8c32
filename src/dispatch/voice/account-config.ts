// `provider set`: which provider an account may name and what its sealed settings hold. The
// provider validates its own input (VoiceProviderModule.accountConfig); this module checks what is
// the same for all: the name is one this build ships, and the provider-specific settings are a
// small flat object (an operator's input, yet bounded like any other).
import { MAX_ROUTE_PROVIDERS, routeFaults } from '../../domain/provider-route.ts';
import { AppError, requestValidation } from '../../errors.ts';
import type { RouteSetting } from '../../services/accounts/account-route.ts';
import type { ProviderAccountInput, VoiceProviderModule } from './provider-module.ts';

/** Provider-specific settings: at most this many keys, each value a scalar, strings at most SETTING_CHARS long. */
export const MAX_SETTINGS = 20;
export const SETTING_CHARS = 1_000;
/** Dial pacing an account may set, in calls per second per from-number (0 = unpaced). */
export const MAX_DIAL_RATE = 1000;

export interface RawAccountInput {
  apiKey?: string | null;
  dialRatePerNumber?: number | null;
  settings?: unknown;
}

/**
 * The JSON to seal on the account for `provider` (null: it keeps none), or a validation error:
 * an unknown name, settings of the wrong shape, or what the provider itself refuses.
 */
export function providerAccountConfig(modules: readonly VoiceProviderModule[], provider: string, raw: RawAccountInput): object | null {
  const module = modules.find((m) => m.name === provider);
  if (!module) throw requestValidation([`provider: Input should be ${modules.map((m) => `'${m.name}'`).join(' or ')}`]);
  if (!module.accountConfig) return null;
  return module.accountConfig({ apiKey: raw.apiKey ?? null, dialRatePerNumber: raw.dialRatePerNumber ?? null, settings: flatSettings(raw.settings) });
}

function flatSettings(settings: unknown): ProviderAccountInput['settings'] {
  if (settings === null || settings === undefined) return null;
  const bad = () =>
    requestValidation([
      `settings: Input should be an object of at most ${MAX_SETTINGS} strings (up to ${SETTING_CHARS} characters), numbers or booleans`,
    ]);
  if (typeof settings !== 'object' || Array.isArray(settings)) throw bad();
  const entries = Object.entries(settings);
  if (entries.length > MAX_SETTINGS) throw bad();
  for (const [, v] of entries) {
    const ok = typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v)) || (typeof v === 'string' && v.length <= SETTING_CHARS);
    if (!ok) throw bad();
  }
  return Object.fromEntries(entries) as Record<string, string | number | boolean>;
}

/** For providers that pace by account: the rate as given, or a validation error. */
export function checkedDialRate(rate: number | null): number | undefined {
  if (rate === null) return undefined;
  if (!(Number.isFinite(rate) && rate >= 0 && rate <= MAX_DIAL_RATE)) {
    throw requestValidation([`dialRatePerNumber: Input should be a number from 0 (unpaced) to ${MAX_DIAL_RATE}`]);
  }
  return rate;
}

export interface RawRouteEntry extends RawAccountInput {
  provider: string;
  /** Share of first dials (default 1; 0: only ever a fallback). */
  weight?: number | null;
}

/**
 * An operator's route (`provider route`, adminSetProviderRoute) checked and each entry's settings
 * made by its provider, or a validation error naming the entry at fault.
 */
export function providerRouteConfig(modules: readonly VoiceProviderModule[], raw: readonly RawRouteEntry[]): RouteSetting[] {
  if (raw.length > MAX_ROUTE_PROVIDERS) throw requestValidation([`providers: Input should list 1 to ${MAX_ROUTE_PROVIDERS} providers`]);
  const route = raw.map((r) => ({ provider: r.provider, weight: r.weight ?? 1 }));
  const faults = routeFaults(
    route,
    modules.map((m) => m.name),
  );
  if (faults.length) throw requestValidation(faults);
  return raw.map((r, i) => {
    try {
      return { ...route[i], config: providerAccountConfig(modules, r.provider, r) };
    } catch (err) {
      if (err instanceof AppError && err.details.length) throw requestValidation(err.details.map((d) => `providers[${i}].${String(d)}`));
      throw err;
    }
  });
}
