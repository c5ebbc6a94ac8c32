import { describe, expect, it } from 'vitest';
import { retryReason, waitsForRetry } from '../../src/domain/call-attempts.ts';

describe('why a call waits for a retry', () => {
  it("is the outcome of the attempt the retry_scheduled entry closed, voicemail told apart from no_answer", () => {
    const entry = (status: string, disconnect_reason: string | null) => ({ event: 'retry_scheduled', attempt: 1, status, disconnect_reason, next_attempt_at: '2026-03-02T15:10:00.000Z' });
    expect(retryReason(entry('busy', 'busy'))).toBe('busy');
    expect(retryReason(entry('no_answer', 'no_answer'))).toBe('no_answer');
    expect(retryReason(entry('no_answer', 'voicemail'))).toBe('voicemail');
    expect(retryReason(entry('failed', null))).toBe('failed');
  });

  it('is null for any other entry or a malformed one', () => {
    for (const d of [null, 'retry_scheduled', [], { event: 'dial', status: 'busy' }, { event: 'retry_scheduled' }, { event: 'retry_scheduled', status: 3 }]) {
      expect(retryReason(d)).toBeNull();
    }
  });

  it('waits only while queued with a next attempt time', () => {
    expect(waitsForRetry({ status: 'queued', nextAttemptAt: '2026-03-02T15:10:00.000Z' })).toBe(true);
    expect(waitsForRetry({ status: 'queued', nextAttemptAt: null })).toBe(false);
    expect(waitsForRetry({ status: 'ringing', nextAttemptAt: new Date() })).toBe(false);
  });
});
