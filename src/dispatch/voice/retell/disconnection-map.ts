// Retell's `disconnection_reason` (DisconnectionReason enum in retell-openapi.yaml, revision
// 2026-10-04) -> our call status and hangup_by. This is the ONE place that decides it; the original
// Retell value is kept as our `disconnect_reason` so nothing is lost.
//
// Choices where Retell's value does not say who ended a connected call:
// - voicemail / IVR: nobody answered in person -> no_answer (the contact was not reached).
// - transfers: the agent handed the call on -> completed, ended by the agent.
// - user_declined: the callee rejected the ringing call -> busy, by the user.
// - error_* and everything about telephony, payment, spam, limits -> failed, by the system.

import type { CallEndStatus, HangupBy } from '../provider.ts';

export interface DisconnectionOutcome {
  status: CallEndStatus;
  hangupBy: HangupBy | null;
}

export const RETELL_DISCONNECTION_MAP = {
  user_hangup: { status: 'completed', hangupBy: 'user' },
  agent_hangup: { status: 'completed', hangupBy: 'agent' },
  call_transfer: { status: 'completed', hangupBy: 'agent' },
  transfer_bridged: { status: 'completed', hangupBy: 'agent' },
  transfer_cancelled: { status: 'completed', hangupBy: 'system' },
  voicemail_reached: { status: 'no_answer', hangupBy: 'system' },
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

/** A value newer than this table fails the call by the system rather than guessing. */
export function mapDisconnection(reason: string | null | undefined): DisconnectionOutcome & { disconnectReason: string } {
  const known = reason && Object.hasOwn(RETELL_DISCONNECTION_MAP, reason) ? RETELL_DISCONNECTION_MAP[reason as RetellDisconnectionReason] : null;
  return { ...(known ?? { status: 'failed', hangupBy: 'system' }), disconnectReason: reason || 'unknown' };
}
