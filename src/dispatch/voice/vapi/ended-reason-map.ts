// Vapi's `endedReason` (the Call.endedReason enum of vapi-openapi.json, 627 values) -> our call
// status and hangup_by. This is the ONE place that decides it. Vapi's value is kept as our
// `disconnect_reason`, except voicemail, which becomes our shared word for it (Vapi's value then
// goes in the history).
//
// The ~30 values that say how a call went are listed; every other published value names a failure
// (call.start.error-*, call.in-progress.error-*, pipeline-error-*, assistant-request-*, sip/twilio/
// vonage/telnyx faults, …) and fails the call by the system, as does a value newer than this table.
// Choices where the name does not say it all:
// - customer-did-not-answer / customer-busy: not reached (no_answer / busy), nobody hung up.
// - voicemail: nobody answered in person -> no_answer (the contact was not reached).
// - assistant-forwarded-call and call.forwarding.*: the agent handed the call on -> completed, by the agent.
// - call.ringing.hook-executed-*: a hook acted while it still rang -> no_answer, by the system.
// - manually-canceled (our own end-call, or the dashboard): completed by the system when the call
//   had a conversation (a transcript), else no_answer - it was cancelled while ringing.
import { VOICEMAIL_DISCONNECT_REASON } from '../../../domain/attempt-outcome.ts';
import type { CallEndStatus, HangupBy } from '../provider.ts';

export interface EndedOutcome {
  status: CallEndStatus;
  hangupBy: HangupBy | null;
  /** Our disconnect_reason when it is not Vapi's value. */
  disconnectReason?: string;
}

export const VAPI_ENDED_REASON_MAP = {
  'customer-ended-call': { status: 'completed', hangupBy: 'user' },
  'customer-ended-call-before-warm-transfer': { status: 'completed', hangupBy: 'user' },
  'customer-ended-call-after-warm-transfer-attempt': { status: 'completed', hangupBy: 'user' },
  'customer-ended-call-during-transfer': { status: 'completed', hangupBy: 'user' },
  'assistant-ended-call': { status: 'completed', hangupBy: 'agent' },
  'assistant-said-end-call-phrase': { status: 'completed', hangupBy: 'agent' },
  'assistant-ended-call-with-hangup-task': { status: 'completed', hangupBy: 'agent' },
  'assistant-ended-call-after-message-spoken': { status: 'completed', hangupBy: 'agent' },
  'assistant-forwarded-call': { status: 'completed', hangupBy: 'agent' },
  'call.forwarding.operator-busy': { status: 'completed', hangupBy: 'agent' },
  'call.forwarding.no-answer': { status: 'completed', hangupBy: 'agent' },
  'exceeded-max-duration': { status: 'completed', hangupBy: 'system' },
  'silence-timed-out': { status: 'completed', hangupBy: 'system' },
  'call.ending.hook-executed-say': { status: 'completed', hangupBy: 'system' },
  'call.ending.hook-executed-transfer': { status: 'completed', hangupBy: 'system' },
  'manually-canceled': { status: 'completed', hangupBy: 'system' },
  'customer-did-not-answer': { status: 'no_answer', hangupBy: null },
  'customer-busy': { status: 'busy', hangupBy: null },
  voicemail: { status: 'no_answer', hangupBy: 'system', disconnectReason: VOICEMAIL_DISCONNECT_REASON },
  'call.ringing.hook-executed-say': { status: 'no_answer', hangupBy: 'system' },
  'call.ringing.hook-executed-transfer': { status: 'no_answer', hangupBy: 'system' },
} as const satisfies Record<string, EndedOutcome>;

const FAILED: EndedOutcome = { status: 'failed', hangupBy: 'system' };

/** A failure that happened while the call was in progress: it had a conversation (a transcript). */
export function failedInProgress(reason: string): boolean {
  return reason.startsWith('call.in-progress.') || reason.startsWith('pipeline-error-');
}

/**
 * Our outcome for Vapi's endedReason. `hadConversation` decides manually-canceled (see above).
 * `detail` (for the call's history) keeps Vapi's value when our disconnect_reason is another word.
 */
export function mapEndedReason(
  reason: string | null | undefined,
  hadConversation: boolean,
): EndedOutcome & { disconnectReason: string; detail?: { provider_reason: string } } {
  if (!reason) return { ...FAILED, disconnectReason: 'unknown' };
  if (!Object.hasOwn(VAPI_ENDED_REASON_MAP, reason)) return { ...FAILED, disconnectReason: reason };
  const o: EndedOutcome = VAPI_ENDED_REASON_MAP[reason as keyof typeof VAPI_ENDED_REASON_MAP];
  if (reason === 'manually-canceled' && !hadConversation) return { status: 'no_answer', hangupBy: 'system', disconnectReason: reason };
  return o.disconnectReason
    ? { status: o.status, hangupBy: o.hangupBy, disconnectReason: o.disconnectReason, detail: { provider_reason: reason } }
    : { status: o.status, hangupBy: o.hangupBy, disconnectReason: reason };
}
