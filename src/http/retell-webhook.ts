// POST /providers/retell/webhook — Retell's call events. The signature (x-retell-signature,
// HMAC-SHA256 with the account's Retell API key over the raw body + timestamp, stale after 5 min)
// is checked on the exact bytes received; the event is stored and answered at once: the worker
// holding the call reads it from provider_events.
import Retell from 'retell-sdk';
import type { AppDeps } from '../deps.ts';
import { AppError, ERROR_CODES } from '../errors.ts';
import { json } from './responses.ts';
import { decodeUtf8, MAX_JSON_NESTING, readBodyBytes } from './body.ts';
import { jsonShapeFault } from './json-shape.ts';
import type { BodyBudget, BodyLease } from './body-budget.ts';
import { retellConfigForAccount } from '../services/accounts/provider-config.ts';
import { RETELL_EVENTS, storeRetellEvent } from '../dispatch/voice/retell/stored-events.ts';
import type { RetellStoredEvent } from '../dispatch/voice/retell/provider.ts';

const MAX_BODY = 5 * 1024 * 1024;

export async function handleRetellWebhook(deps: AppDeps, request: Request, bodies: BodyBudget): Promise<Response> {
  if (request.method !== 'POST') return json(405, { detail: 'Method Not Allowed' });
  const signature = request.headers.get('x-retell-signature');
  if (!signature) return json(401, { detail: 'Missing signature' });
  const lease = bodies.open();
  try {
    return await handleSigned(deps, request, signature, lease);
  } finally {
    lease.release();
  }
}

async function handleSigned(deps: AppDeps, request: Request, signature: string, lease: BodyLease): Promise<Response> {
  // Anyone can reach this route: the body is capped while it streams in, not after.
  let bytes: Uint8Array;
  try {
    bytes = await readBodyBytes(request, MAX_BODY, lease);
  } catch (e) {
    if (e instanceof AppError && e.code === 'UNAVAILABLE') return json(503, { detail: 'Service Unavailable' }, e.headers);
    if (e instanceof AppError && e.code === 'PAYLOAD_TOO_LARGE') return json(413, { detail: 'Payload Too Large' });
    // Over the address's share (429), too slow (408), gone (499): their status, in this route's form.
    if (e instanceof AppError) return json(ERROR_CODES[e.code].status, { detail: e.message }, e.headers);
    throw e;
  }
  const raw = decodeUtf8(bytes);
  if (raw === null) return json(400, { detail: 'Invalid UTF-8' });
  // Anyone may send this, signed or not: what JSON.parse would build is bounded first.
  const shape = jsonShapeFault(bytes, MAX_JSON_NESTING);
  if (shape) return json(400, { detail: `JSON ${shape}` });
  let body: RetellStoredEvent;
  try {
    body = JSON.parse(raw);
  } catch {
    return json(400, { detail: 'Invalid JSON' });
  }
  const meta = (body?.call?.metadata ?? {}) as { account_id?: unknown; call_id?: unknown };
  const accountId = typeof meta.account_id === 'string' ? meta.account_id : null;
  // The account named in the (yet unverified) body only selects which key must have signed it.
  const apiKey = (accountId ? (await retellConfigForAccount(deps, accountId).catch(() => null))?.apiKey : null) ?? deps.config.RETELL_API_KEY;
  if (!apiKey || !(await Retell.verify(raw, apiKey, signature))) return json(401, { detail: 'Invalid signature' });
  if (typeof body.call?.call_id !== 'string' || !(RETELL_EVENTS as readonly string[]).includes(body.event)) {
    // Transcript/transfer events and anything newer: acknowledged, not needed.
    return new Response(null, { status: 204 });
  }
  const fresh = await storeRetellEvent(deps, { event: body.event, call: body.call }, typeof meta.call_id === 'string' ? meta.call_id : null);
  deps.logger.debug({ event: body.event, retellCallId: body.call.call_id, duplicate: !fresh }, 'retell webhook');
  return new Response(null, { status: 204 });
}
