// A batch's voicemail setting (issue 34 point 5): what a call that reaches voicemail does, and
// whether it left a message. The two batch options (batch-options.ts `voicemail`,
// `voicemailMessage`) must agree, the worker turns them into what a provider is asked to do, and
// an attempt's end says whether the message was left.
import type { BatchOptions } from './batch-options.ts';

/** What the provider is asked to do on voicemail; absent from a dial: its own (or its agent's) behaviour. */
export type VoicemailSetting = { action: 'hangup' } | { action: 'leave_message'; message: string };

export const VOICEMAIL_MESSAGE_REQUIRED_REASON = "Value error, voicemail_message is required when voicemail is 'leave_message'";
// A message that would never play is refused rather than kept: a client sending one expects it heard.
export const VOICEMAIL_MESSAGE_UNUSED_REASON = "Value error, voicemail_message is only used when voicemail is 'leave_message'";

/** The cross-field rule, reported at voicemailMessage; null when the two agree. */
export function voicemailProblem(options: Pick<BatchOptions, 'voicemail' | 'voicemailMessage'>): string | null {
  if (options.voicemail === 'leave_message') return options.voicemailMessage === null ? VOICEMAIL_MESSAGE_REQUIRED_REASON : null;
  return options.voicemailMessage === null ? null : VOICEMAIL_MESSAGE_UNUSED_REASON;
}

/** The setting a batch's stored columns give its dials; null: none was chosen. */
export function voicemailSetting(options: { voicemail: string | null; voicemailMessage: string | null }): VoicemailSetting | null {
  if (options.voicemail === 'hangup') return { action: 'hangup' };
  if (options.voicemail === 'leave_message' && options.voicemailMessage) return { action: 'leave_message', message: options.voicemailMessage };
  return null;
}

/**
 * Whether an attempt that reached voicemail left a message, when its provider does not say: the
 * provider did what it was asked. Null when nothing was asked (the agent's own behaviour is unknown
 * to us) or the attempt did not reach voicemail.
 */
export function voicemailLeftUnder(setting: VoicemailSetting | null, reachedVoicemail: boolean): boolean | null {
  if (!reachedVoicemail || setting === null) return null;
  return setting.action === 'leave_message';
}
