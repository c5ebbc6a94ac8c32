// How one dial of a call ended, in the terms a retry is asked for: its end status, except that a
// call picked up by voicemail is told apart from one nobody answered (both end no_answer), and one
// that left the batch's voicemail message from one that left nothing.

/** Our one word for a call that reached voicemail, whichever provider placed it. */
export const VOICEMAIL_DISCONNECT_REASON = 'voicemail';

/** The outcomes a retry can be asked for. */
export const ATTEMPT_OUTCOMES = ['no_answer', 'busy', 'failed', 'voicemail', 'voicemail_left'] as const;
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];

export function attemptOutcome<S extends string>(end: {
  status: S;
  disconnectReason: string | null | undefined;
  /** The attempt reached voicemail: whether it left the message (absent or null: nothing known, read as not). */
  voicemailLeft?: boolean | null;
}): S | 'voicemail' | 'voicemail_left' {
  if (end.status !== 'no_answer' || end.disconnectReason !== VOICEMAIL_DISCONNECT_REASON) return end.status;
  return end.voicemailLeft === true ? 'voicemail_left' : 'voicemail';
}
