import { describe, expect, it } from 'vitest';
import { ATTEMPT_OUTCOMES, VOICEMAIL_DISCONNECT_REASON, attemptOutcome } from '../../src/domain/attempt-outcome.ts';

describe('attempt outcome', () => {
  it('lists the outcomes a retry can be asked for', () => {
    expect(ATTEMPT_OUTCOMES).toEqual(['no_answer', 'busy', 'failed', 'voicemail', 'voicemail_left']);
    expect(VOICEMAIL_DISCONNECT_REASON).toBe('voicemail');
  });

  it('is voicemail only for a no_answer ended by voicemail', () => {
    expect(attemptOutcome({ status: 'no_answer', disconnectReason: 'voicemail' })).toBe('voicemail');
    expect(attemptOutcome({ status: 'no_answer', disconnectReason: 'no_answer' })).toBe('no_answer');
    expect(attemptOutcome({ status: 'no_answer', disconnectReason: 'voicemail_reached' })).toBe('no_answer');
    expect(attemptOutcome({ status: 'no_answer', disconnectReason: null })).toBe('no_answer');
    expect(attemptOutcome({ status: 'failed', disconnectReason: 'voicemail' })).toBe('failed');
    expect(attemptOutcome({ status: 'completed', disconnectReason: 'voicemail' })).toBe('completed');
  });

  it('is voicemail_left for a voicemail that took the message; unknown or false reads as voicemail', () => {
    expect(attemptOutcome({ status: 'no_answer', disconnectReason: 'voicemail', voicemailLeft: true })).toBe('voicemail_left');
    expect(attemptOutcome({ status: 'no_answer', disconnectReason: 'voicemail', voicemailLeft: false })).toBe('voicemail');
    expect(attemptOutcome({ status: 'no_answer', disconnectReason: 'voicemail', voicemailLeft: null })).toBe('voicemail');
    expect(attemptOutcome({ status: 'no_answer', disconnectReason: 'no_answer', voicemailLeft: true })).toBe('no_answer');
  });

  it('is the status otherwise', () => {
    for (const status of ['completed', 'busy', 'failed', 'cancelled'] as const) {
      expect(attemptOutcome({ status, disconnectReason: 'agent_hangup' })).toBe(status);
    }
  });
});
