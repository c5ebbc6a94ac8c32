import { describe, expect, it } from 'vitest';
import { attemptsFromHistory, retryReason, waitsForRetry, type HistoryEntry } from '../../src/domain/call-attempts.ts';

const at = (s: number) => new Date(Date.UTC(2026, 2, 2, 15, 0, s));
const dial = (s: number, attempt: number, number: string, extra: Record<string, unknown> = {}): HistoryEntry => ({
  toStatus: 'ringing',
  at: at(s),
  detail: { event: 'dial', number, attempt, alternate: false, ...extra },
});

describe('attemptsFromHistory', () => {
  it('one attempt per dial, closed by the alternate dial, a scheduled retry or the end', () => {
    const history: HistoryEntry[] = [
      dial(0, 1, '+1A'),
      dial(5, 2, '+1B', { alternate: true, previous: { number: '+1A', status: 'busy', disconnect_reason: 'busy' } }),
      {
        toStatus: 'queued',
        at: at(9),
        detail: { event: 'retry_scheduled', attempt: 2, status: 'no_answer', disconnect_reason: 'voicemail', hangup_by: 'system' },
      },
      dial(30, 3, '+1A'),
      { toStatus: 'answered', at: at(31), detail: null },
      { toStatus: 'completed', at: at(40), detail: { event: 'ended', hangup_by: 'agent', disconnect_reason: 'agent_hangup' } },
    ];
    expect(attemptsFromHistory(history, 'completed')).toEqual([
      { number: 1, phoneNumber: '+1A', alternate: false, status: 'busy', disconnectReason: 'busy', hangupBy: null, startedAt: at(0), endedAt: at(5) },
      {
        number: 2,
        phoneNumber: '+1B',
        alternate: true,
        status: 'no_answer',
        disconnectReason: 'voicemail',
        hangupBy: 'system',
        startedAt: at(5),
        endedAt: at(9),
      },
      {
        number: 3,
        phoneNumber: '+1A',
        alternate: false,
        status: 'completed',
        disconnectReason: 'agent_hangup',
        hangupBy: 'agent',
        startedAt: at(30),
        endedAt: at(40),
      },
    ]);
  });

  it("an attempt still running has the call's status and no end; a recovered call ends with the recovery's reason", () => {
    expect(attemptsFromHistory([dial(0, 1, '+1A')], 'in_progress')).toMatchObject([{ status: 'in_progress', endedAt: null }]);
    const lost = attemptsFromHistory(
      [dial(0, 1, '+1A'), { toStatus: 'failed', at: at(50), detail: { event: 'recovered', reason: 'dispatcher_lost' } }],
      'failed',
    );
    expect(lost).toMatchObject([{ status: 'failed', disconnectReason: 'dispatcher_lost', endedAt: at(50) }]);
  });

  it('a call never dialled has no attempts, whatever its history says', () => {
    expect(attemptsFromHistory([{ toStatus: 'cancelled', at: at(0), detail: { event: 'suppressed' } }], 'cancelled')).toEqual([]);
    expect(attemptsFromHistory([{ toStatus: 'x', at: at(0), detail: 'not an object' }], 'pending')).toEqual([]);
  });
});

describe('why a call waits for a retry', () => {
  it('is the outcome of the attempt the retry_scheduled entry closed, voicemail told apart from no_answer', () => {
    const entry = (status: string, disconnect_reason: string | null) => ({
      event: 'retry_scheduled',
      attempt: 1,
      status,
      disconnect_reason,
      next_attempt_at: '2026-03-02T15:10:00.000Z',
    });
    expect(retryReason(entry('busy', 'busy'))).toBe('busy');
    expect(retryReason(entry('no_answer', 'no_answer'))).toBe('no_answer');
    expect(retryReason(entry('no_answer', 'voicemail'))).toBe('voicemail');
    expect(retryReason(entry('failed', null))).toBe('failed');
    expect(retryReason({ ...entry('no_answer', 'voicemail'), voicemail_left: true })).toBe('voicemail_left');
    expect(retryReason({ ...entry('no_answer', 'voicemail'), voicemail_left: false })).toBe('voicemail');
  });

  it('is null for any other entry or a malformed one', () => {
    for (const d of [
      null,
      'retry_scheduled',
      [],
      { event: 'dial', status: 'busy' },
      { event: 'retry_scheduled' },
      { event: 'retry_scheduled', status: 3 },
    ]) {
      expect(retryReason(d)).toBeNull();
    }
  });

  it('waits only while queued with a next attempt time', () => {
    expect(waitsForRetry({ status: 'queued', nextAttemptAt: '2026-03-02T15:10:00.000Z' })).toBe(true);
    expect(waitsForRetry({ status: 'queued', nextAttemptAt: null })).toBe(false);
    expect(waitsForRetry({ status: 'ringing', nextAttemptAt: new Date() })).toBe(false);
  });
});
