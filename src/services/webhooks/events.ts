// Webhook event types and the envelope every callback carries.

export const BATCH_EVENT_TYPES = ['batch.started', 'batch.completed', 'batch.cancelled'] as const;
export const CALL_EVENT_TYPES = ['call.completed', 'call.failed', 'call.analyzed', 'call.retry_scheduled', 'call.cancelled'] as const;
export type BatchEventType = (typeof BATCH_EVENT_TYPES)[number];
export type CallEventType = (typeof CALL_EVENT_TYPES)[number];
/** A caller-ID number rested by number health, or back from its rest (docs/webhooks.md). */
export const NUMBER_EVENT_TYPES = ['number.rested', 'number.restored'] as const;
export type NumberEventType = (typeof NUMBER_EVENT_TYPES)[number];
export type WebhookEventType = BatchEventType | CallEventType | NumberEventType;

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
const DIALLED_CALL = new Set(['ringing', 'answered', 'in_progress']);
const TERMINAL_CALL = new Set(['completed', 'failed', 'no_answer', 'busy', 'cancelled']);
/** transcript_status values that mean an analysis is still to come / has come (with results or not). */
const ANALYSIS_OUTSTANDING = new Set(['pending', 'processing']);
const ANALYSIS_SETTLED = new Set(['ready', 'failed']);

/**
 * Events a call write causes, decided from the write alone (its from → to status and the
 * transcript_status it sets), so it holds for any voice provider:
 * - call.completed: an answered call that finished, sent ONCE with its final record (summary,
 *   outcomes, recording). When the call ends with its analysis outstanding (transcript_status
 *   pending/processing) it waits for the write that settles the analysis (ready or failed);
 *   a call that ends with the analysis already settled, or with none announced, is sent at once.
 * - call.failed: a call that ended unanswered or broken (no_answer, busy, failed), at its end.
 * - call.analyzed: the analysis settled (transcript_status becoming ready or failed), whatever the status.
 * - call.retry_scheduled: a dialled call put back in line by the batch's retry policy (its record
 *   shows attempts and next_attempt_at); call.completed / call.failed come only with its last attempt.
 * A call cancelled before dialling causes none (batch.cancelled covers it); one dialled before and
 * then ended while it waited (expired, batch cancelled, number listed, windows gone) causes
 * call.cancelled, queued where waiting calls are ended (cancel-waiting-calls.ts, the claim).
 */
export function callWebhookTypes(from: string, to: string, transcriptStatusSet?: string | null): CallEventType[] {
  const out: CallEventType[] = [];
  const ends = !TERMINAL_CALL.has(from);
  const settles = ANALYSIS_SETTLED.has(transcriptStatusSet ?? '');
  if (to === 'completed') {
    const announce = ends ? !ANALYSIS_OUTSTANDING.has(transcriptStatusSet ?? '') : from === 'completed' && settles;
    if (announce) out.push('call.completed');
  } else if (ends && FAILED_CALL.has(to)) {
    out.push('call.failed');
  }
  if (settles) out.push('call.analyzed');
  if (to === 'queued' && DIALLED_CALL.has(from)) out.push('call.retry_scheduled');
  return out;
}
