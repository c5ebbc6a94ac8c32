// A Retell account's sealed settings: its API key (which also signs its webhooks) and, optionally,
// its own dial pacing.
import type { AppDeps } from '../../../deps.ts';
import { requestValidation } from '../../../errors.ts';
import { accountProviderConfig } from '../../../services/accounts/provider-config.ts';
import { checkedDialRate } from '../account-config.ts';
import type { ProviderAccountInput } from '../provider-module.ts';

export interface RetellAccountConfig {
  apiKey: string;
  /** Calls per second per from-number for this account; the global RETELL_DIAL_RATE_PER_NUMBER otherwise. */
  dialRatePerNumber?: number;
}

/** `provider set retell`: the key is required; Retell takes no other settings. */
export function retellAccountConfig(input: ProviderAccountInput): RetellAccountConfig {
  if (!input.apiKey?.trim()) throw requestValidation(['apiKey: Field required']);
  if (input.settings && Object.keys(input.settings).length > 0) throw requestValidation(['settings: Retell takes none']);
  const rate = checkedDialRate(input.dialRatePerNumber);
  return { apiKey: input.apiKey, ...(rate !== undefined ? { dialRatePerNumber: rate } : {}) };
}

/** The account's Retell config; null when it has none, or names another provider (a Vapi account's key is Vapi's). */
export function retellConfigForAccount(deps: Pick<AppDeps, 'db' | 'appSecret'>, accountId: string): Promise<RetellAccountConfig | null> {
  return accountProviderConfig<RetellAccountConfig>(deps, accountId, 'retell');
}
