// Retell's `disconnection_reason` (DisconnectionReason enum in retell-openapi.yaml, revision
// 2026-10-04) -> our call status and hangup_by. This is the ONE place that decides it; the original
// Retell value is kept as our `disconnect_reason` so nothing is lost, except where we have a word of
// our own for it (voicemail), which providers share: then Retell's value goes in the history.
//
// Choices where Retell's value does not say who ended a connected call:
// - voicemail / IVR: nobody answered in person -> no_answer (the contact was not reached).
// - transfers: the agent handed the call on -> completed, ended by the agent.
// - user_declined: the callee rejected the ringing call -> busy, by the user.
// - error_* and everything about telephony, payment, spam, limits -> failed, by the system.

import { VOICEMAIL_DISCONNECT_REASON } from '../../../domain/attempt-outcome.ts';
import type { CallEndStatus, HangupBy } from '../provider.ts';

export interface DisconnectionOutcome {
  status: CallEndStatus;
  hangupBy: HangupBy | null;
  /** Our disconnect_reason when it is not Retell's value. */
  disconnectReason?: string;
}

export const RETELL_DISCONNECTION_MAP = {
  user_hangup: { status: 'completed', hangupBy: 'user' },
  agent_hangup: { status: 'completed', hangupBy: 'agent' },
  call_transfer: { status: 'completed', hangupBy: 'agent' },
  transfer_bridged: { status: 'completed', hangupBy: 'agent' },
  transfer_cancelled: { status: 'completed', hangupBy: 'system' },
  voicemail_reached: { status: 'no_answer', hangupBy: 'system', disconnectReason: VOICEMAIL_DISCONNECT_REASON },
  ivr_reached: { status: 'no_answer', hangupBy: 'system' },
  inactivity: { status: 'completed', hangupBy: 'system' },
  max_duration_reached: { status: 'completed', hangupBy: 'system' },
  concurrency_limit_reached: { status: 'failed', hangupBy: 'system' },
  no_valid_payment: { status: 'failed', hangupBy: 'system' },
  scam_detected: { status: 'failed', hangupBy: 'system' },
  dial_busy: { status: 'busy', hangupBy: null },
  dial_failed: { status: 'failed', hangupBy: 'system' },
  dial_no_answer: { status: 'no_answer', hangupBy: null },
  invalid_destination: { status: 'failed', hangupBy: 'system' },
  telephony_provider_permission_denied: { status: 'failed', hangupBy: 'system' },
  telephony_provider_unavailable: { status: 'failed', hangupBy: 'system' },
  sip_routing_error: { status: 'failed', hangupBy: 'system' },
  marked_as_spam: { status: 'failed', hangupBy: 'system' },
  user_declined: { status: 'busy', hangupBy: 'user' },
  error_llm_websocket_open: { status: 'failed', hangupBy: 'system' },
  error_llm_websocket_lost_connection: { status: 'failed', hangupBy: 'system' },
  error_llm_websocket_runtime: { status: 'failed', hangupBy: 'system' },
  error_llm_websocket_corrupt_payload: { status: 'failed', hangupBy: 'system' },
  error_no_audio_received: { status: 'failed', hangupBy: 'system' },
  error_asr: { status: 'failed', hangupBy: 'system' },
  error_retell: { status: 'failed', hangupBy: 'system' },
  error_unknown: { status: 'failed', hangupBy: 'system' },
  error_user_not_joined: { status: 'failed', hangupBy: 'system' },
  registered_call_timeout: { status: 'failed', hangupBy: 'system' },
} as const satisfies Record<string, DisconnectionOutcome>;

export type RetellDisconnectionReason = keyof typeof RETELL_DISCONNECTION_MAP;

/**
 * A value newer than this table fails the call by the system rather than guessing. `detail` (for the
 * call's history) keeps Retell's value when our disconnect_reason is another word.
 */
export function mapDisconnection(
  reason: string | null | undefined,
): DisconnectionOutcome & { disconnectReason: string; detail?: { provider_reason: string } } {
  if (!reason || !Object.hasOwn(RETELL_DISCONNECTION_MAP, reason))
    return { status: 'failed', hangupBy: 'system', disconnectReason: reason || 'unknown' };
  const { status, hangupBy, disconnectReason }: DisconnectionOutcome = RETELL_DISCONNECTION_MAP[reason as RetellDisconnectionReason];
  return disconnectReason
    ? { status, hangupBy, disconnectReason, detail: { provider_reason: reason } }
    : { status, hangupBy, disconnectReason: reason };
}
