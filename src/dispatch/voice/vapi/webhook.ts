// POST /providers/vapi/webhook: one message Vapi sends to our server URL. The HTTP layer
// (http/provider-routes.ts) reads the body under this route's limit and bounds its JSON before it
// is parsed; here the account named in the (yet unverified) call metadata only selects which
// credential must have authenticated it (signature.ts, on the exact text received). The event is
// stored and answered at once: the worker holding the call reads it from provider_events.
import type { AppDeps } from '../../../deps.ts';
import type { ProviderDeps, ProviderRoute } from '../provider-module.ts';
import type { VapiAccountConfig } from './account-config.ts';
import { ourIds } from './call-mapping.ts';
import { vapiAccounts } from './from-config.ts';
import { verifyVapiRequest } from './signature.ts';
import { eventFromMessage, storeVapiEvent } from './stored-events.ts';

/** End-of-call-reports carry the whole transcript and message list. */
export const VAPI_WEBHOOK_MAX_BODY = 5 * 1024 * 1024;

export interface VapiWebhookAnswer {
  status: 204 | 401;
  detail?: string;
}

const objectOr = (v: unknown): Record<string, unknown> | null =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;

export function vapiWebhookRoute(deps: ProviderDeps): ProviderRoute {
  // One cache of account credentials per API process, not one read (and decryption) per message.
  const accounts = vapiAccounts(deps);
  return {
    path: 'webhook',
    maxBodyBytes: VAPI_WEBHOOK_MAX_BODY,
    // No signatureHeader: which header carries the credential depends on the account's kind of it.
    receive: (d) => handleVapiServerMessage(deps, accounts, d.raw, d.body, { get: d.header }),
  };
}

export async function handleVapiServerMessage(
  deps: Pick<AppDeps, 'db' | 'clock' | 'logger'>,
  accountConfig: (accountId: string) => Promise<VapiAccountConfig | null>,
  rawBody: string,
  body: unknown,
  headers: Pick<Headers, 'get'>,
): Promise<VapiWebhookAnswer> {
  const message = objectOr(objectOr(body)?.message);
  const { accountId, callId } = ourIds(objectOr(message?.call) ?? {});
  const config = accountId ? await accountConfig(accountId).catch(() => null) : null;
  if (!config || !verifyVapiRequest({ mode: config.webhookAuth, secret: config.webhookSecret }, rawBody, headers, deps.clock.now().getTime())) {
    return { status: 401, detail: 'Invalid signature' };
  }
  const event = message ? eventFromMessage(message) : null;
  // Transcripts, speech and conversation updates, tool calls and anything newer: acknowledged, not needed.
  if (!event) return { status: 204 };
  const fresh = await storeVapiEvent(deps, event, callId);
  deps.logger.debug({ type: event.type, status: event.status, vapiCallId: event.call.id, duplicate: !fresh }, 'vapi webhook');
  return { status: 204 };
}
