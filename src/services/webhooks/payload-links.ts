// Signed links inside a webhook payload are made for the attempt that carries them, not for the
// moment the event was queued: a retry can go out ~18 h after the event (longer with Retry-After,
// any time with a manual redelivery), long after a link signed at enqueue time expired. The
// outbox keeps the payload as queued; each attempt re-signs `recording_url` (everything else,
// webhook-id included, stays byte for byte the same).
import type { AppDeps } from '../../deps.ts';
import { recordingUrl } from '../recording-url.ts';
import type { WebhookEvent } from './events.ts';

/**
 * How long a recording link in a delivered webhook stays valid, counted from the attempt: long
 * enough for a receiver that queues events and downloads later; REST/GraphQL always give a fresh one.
 */
export const WEBHOOK_RECORDING_URL_TTL_SECONDS = 24 * 3600;

export function withFreshLinks(deps: Pick<AppDeps, 'config' | 'appSecret' | 'clock'>, event: WebhookEvent): WebhookEvent {
  const data = event.data;
  if (!event.type.startsWith('call.') || typeof data.recording_url !== 'string' || typeof data.call_id !== 'string') return event;
  return { ...event, data: { ...data, recording_url: recordingUrl(deps, data.call_id, WEBHOOK_RECORDING_URL_TTL_SECONDS) } };
}
