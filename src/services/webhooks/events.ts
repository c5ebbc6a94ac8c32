// Webhook event types and the envelope every callback carries.

export const BATCH_EVENT_TYPES = ['batch.started', 'batch.completed', 'batch.cancelled'] as const;
export const CALL_EVENT_TYPES = ['call.completed', 'call.failed', 'call.analyzed'] as const;
export type BatchEventType = (typeof BATCH_EVENT_TYPES)[number];
export type CallEventType = (typeof CALL_EVENT_TYPES)[number];
export type WebhookEventType = BatchEventType | CallEventType;
export const WEBHOOK_EVENT_TYPES: readonly WebhookEventType[] = [...BATCH_EVENT_TYPES, ...CALL_EVENT_TYPES];

/** The JSON body of a callback. `id` equals the `webhook-id` header and is stable across retries. */
export interface WebhookEvent<D = Record<string, unknown>> {
  id: string;
  type: WebhookEventType | string;
  created_at: string;
  data: D;
}

/** Delivery states: pending (due or waiting for a retry), delivered, failed (attempts exhausted), disabled (410 Gone). */
export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'disabled'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

const FAILED_CALL = new Set(['failed', 'no_answer', 'busy']);
const TERMINAL_CALL = new Set(['completed', 'failed', 'no_answer', 'busy', 'cancelled']);

/**
 * Events a call write causes: ending answered-and-finished → call.completed; ending unanswered or
 * broken → call.failed; analysis finishing (transcript_status becoming ready or failed) →
 * call.analyzed. A call cancelled before dialling causes none (batch.cancelled covers it).
 */
export function callWebhookTypes(from: string, to: string, transcriptStatusSet?: string | null): CallEventType[] {
  const out: CallEventType[] = [];
  if (!TERMINAL_CALL.has(from)) {
    if (to === 'completed') out.push('call.completed');
    else if (FAILED_CALL.has(to)) out.push('call.failed');
  }
  if (transcriptStatusSet === 'ready' || transcriptStatusSet === 'failed') out.push('call.analyzed');
  return out;
}
