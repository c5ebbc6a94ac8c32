// How one dial of a call ended, in the terms a retry is asked for: its end status, except that a
// call picked up by voicemail is told apart from one nobody answered (both end no_answer).

/** Our one word for a call that reached voicemail, whichever provider placed it. */
export const VOICEMAIL_DISCONNECT_REASON = 'voicemail';

/** The outcomes a retry can be asked for. */
export const ATTEMPT_OUTCOMES = ['no_answer', 'busy', 'failed', 'voicemail'] as const;
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];

export function attemptOutcome<S extends string>(end: { status: S; disconnectReason: string | null | undefined }): S | 'voicemail' {
  return end.status === 'no_answer' && end.disconnectReason === VOICEMAIL_DISCONNECT_REASON ? 'voicemail' : end.status;
}
