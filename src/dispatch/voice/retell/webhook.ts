// POST /providers/retell/webhook — Retell's call events. The signature (x-retell-signature,
// HMAC-SHA256 with the account's Retell API key over the raw body + timestamp, stale after 5 min)
// is checked on the exact bytes received; the event is stored and answered at once: the worker
// holding the call reads it from provider_events. Reading the body under its limits is the HTTP
// layer's (http/provider-routes.ts).
import Retell from 'retell-sdk';
import type { ProviderDeps, ProviderDelivery, ProviderReply, ProviderRoute } from '../provider-module.ts';
import { retellConfigForAccount } from './account-config.ts';
import type { RetellStoredEvent } from './provider.ts';
import { RETELL_EVENTS, storeRetellEvent } from './stored-events.ts';

/** Retell's largest events carry a whole transcript. */
const MAX_BODY = 5 * 1024 * 1024;
const SIGNATURE_HEADER = 'x-retell-signature';

export function retellWebhookRoute(deps: ProviderDeps): ProviderRoute {
  return { path: 'webhook', maxBodyBytes: MAX_BODY, signatureHeader: SIGNATURE_HEADER, receive: (d) => receiveRetellEvent(deps, d) };
}

async function receiveRetellEvent(deps: ProviderDeps, delivery: ProviderDelivery): Promise<ProviderReply> {
  const body = delivery.body as RetellStoredEvent;
  const meta = (body?.call?.metadata ?? {}) as { account_id?: unknown; call_id?: unknown };
  const accountId = typeof meta.account_id === 'string' ? meta.account_id : null;
  // The account named in the (yet unverified) body only selects which key must have signed it.
  const apiKey = (accountId ? (await retellConfigForAccount(deps, accountId).catch(() => null))?.apiKey : null) ?? deps.config.RETELL_API_KEY;
  const signature = delivery.header(SIGNATURE_HEADER) ?? '';
  if (!apiKey || !(await Retell.verify(delivery.raw, apiKey, signature))) return { status: 401, detail: 'Invalid signature' };
  if (typeof body?.call?.call_id !== 'string' || !(RETELL_EVENTS as readonly string[]).includes(body.event)) {
    // Transcript/transfer events and anything newer: acknowledged, not needed.
    return { status: 204 };
  }
  const fresh = await storeRetellEvent(deps, { event: body.event, call: body.call }, typeof meta.call_id === 'string' ? meta.call_id : null);
  deps.logger.debug({ event: body.event, retellCallId: body.call.call_id, duplicate: !fresh }, 'retell webhook');
  return { status: 204 };
}
