// A Vapi account's sealed settings, from `provider set vapi` (--api-key, --dial-rate, --settings):
// its private API key, the Vapi phone number id of each from-number of ours, the assistant for
// agents that name none, and the server-URL credential its messages must carry (signature.ts).
import type { AppDeps } from '../../../deps.ts';
import { requestValidation } from '../../../errors.ts';
import { accountProviderConfig } from '../../../services/accounts/provider-config.ts';
import { checkedDialRate } from '../account-config.ts';
import type { ProviderAccountInput } from '../provider-module.ts';

/** How Vapi authenticates its server-URL requests to us (a Custom Credential on the Vapi side). */
export const VAPI_WEBHOOK_AUTH = ['hmac', 'secret'] as const;
export type VapiWebhookAuth = (typeof VAPI_WEBHOOK_AUTH)[number];

export interface VapiAccountConfig {
  apiKey: string;
  /** Vapi phone number id for each of our from-numbers (E.164); the key '*' is used for any other. */
  phoneNumberIds: Record<string, string>;
  /** The Vapi assistant for agents of ours that name none (provider_agent_id). */
  assistantId?: string;
  /** 'hmac': x-signature over `{x-timestamp}.{body}` (HMAC-SHA256, hex); 'secret': X-Vapi-Secret or Bearer token. */
  webhookAuth: VapiWebhookAuth;
  /** The credential's secret key / token. */
  webhookSecret: string;
  dialRatePerNumber?: number;
}

const SETTINGS = ['phoneNumbers', 'assistantId', 'webhookAuth', 'webhookSecret'] as const;
const MAX_ID_LENGTH = 200;
const E164 = /^\+[1-9]\d{1,14}$/;

/** `+14155550100=pn_…,*=pn_…` (the `phoneNumbers` setting) as the config's map, or the faults found. */
function phoneNumberIds(v: unknown, faults: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof v !== 'string' || !v.trim()) {
    faults.push('settings.phoneNumbers: Field required: <from-number or *>=<Vapi phone number id>, comma-separated');
    return out;
  }
  for (const entry of v.split(',')) {
    const i = entry.indexOf('=');
    const from = entry.slice(0, Math.max(i, 0)).trim();
    const id = entry.slice(i + 1).trim();
    if (i <= 0 || (from !== '*' && !E164.test(from)) || !id || id.length > MAX_ID_LENGTH) {
      faults.push(`settings.phoneNumbers: '${entry.trim().slice(0, 40)}' should be <E.164 from-number or *>=<Vapi phone number id>`);
    } else out[from] = id;
  }
  return out;
}

/** `provider set vapi`: the key, the numbers and the webhook credential are required. */
export function vapiAccountConfig(input: ProviderAccountInput): VapiAccountConfig {
  const s = input.settings ?? {};
  const faults: string[] = [];
  if (!input.apiKey?.trim()) faults.push('apiKey: Field required');
  for (const k of Object.keys(s))
    if (!(SETTINGS as readonly string[]).includes(k)) faults.push(`settings.${k.slice(0, 40)}: Vapi takes ${SETTINGS.join(', ')}`);
  const numbers = phoneNumberIds(s.phoneNumbers, faults);
  if (!VAPI_WEBHOOK_AUTH.includes(s.webhookAuth as VapiWebhookAuth)) faults.push("settings.webhookAuth: Input should be 'hmac' or 'secret'");
  const secret = typeof s.webhookSecret === 'string' ? s.webhookSecret : '';
  if (!secret.trim() || secret.length > MAX_ID_LENGTH) faults.push(`settings.webhookSecret: Field required (at most ${MAX_ID_LENGTH} characters)`);
  const assistant = s.assistantId;
  if (assistant !== undefined && (typeof assistant !== 'string' || !assistant.trim() || assistant.length > MAX_ID_LENGTH))
    faults.push('settings.assistantId: a Vapi assistant id');
  const rate = checkedDialRate(input.dialRatePerNumber);
  if (faults.length) throw requestValidation(faults);
  return {
    apiKey: input.apiKey!,
    phoneNumberIds: numbers,
    ...(typeof assistant === 'string' ? { assistantId: assistant } : {}),
    webhookAuth: s.webhookAuth as VapiWebhookAuth,
    webhookSecret: secret,
    ...(rate !== undefined ? { dialRatePerNumber: rate } : {}),
  };
}

/** The account's Vapi config; null when it has none, or another provider's (no numbers of Vapi's). */
export async function vapiConfigForAccount(deps: Pick<AppDeps, 'db' | 'appSecret'>, accountId: string): Promise<VapiAccountConfig | null> {
  const c = await accountProviderConfig<VapiAccountConfig>(deps, accountId, 'vapi');
  return c && c.phoneNumberIds && typeof c.webhookSecret === 'string' ? c : null;
}
