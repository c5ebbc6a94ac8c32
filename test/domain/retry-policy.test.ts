import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_ON, nextAttemptAt, parseInstant, type RetryPolicy } from '../../src/domain/retry-policy.ts';

const policy: RetryPolicy = { maxAttempts: 3, on: ['no_answer', 'voicemail'], delaySeconds: 600 };
const endedAt = new Date('2026-03-02T15:00:00.000Z');

describe('nextAttemptAt', () => {
  it('is delay_seconds after the end for an outcome asked for, while attempts are left', () => {
    expect(nextAttemptAt({ attempts: 1, outcome: 'no_answer', endedAt }, { policy, expiresAt: null })).toEqual(new Date('2026-03-02T15:10:00.000Z'));
    expect(nextAttemptAt({ attempts: 2, outcome: 'voicemail', endedAt }, { policy, expiresAt: null })).not.toBeNull();
  });

  it('is null at max_attempts, for an outcome not asked for, without a policy', () => {
    expect(nextAttemptAt({ attempts: 3, outcome: 'no_answer', endedAt }, { policy, expiresAt: null })).toBeNull();
    expect(nextAttemptAt({ attempts: 1, outcome: 'busy', endedAt }, { policy, expiresAt: null })).toBeNull();
    expect(nextAttemptAt({ attempts: 1, outcome: 'completed', endedAt }, { policy, expiresAt: null })).toBeNull();
    expect(nextAttemptAt({ attempts: 1, outcome: 'no_answer', endedAt }, { policy: null, expiresAt: null })).toBeNull();
  });

  it('is null when the next attempt could only start at or after the expiry', () => {
    const at = (iso: string) => nextAttemptAt({ attempts: 1, outcome: 'no_answer', endedAt }, { policy, expiresAt: new Date(iso) });
    expect(at('2026-03-02T15:10:00.000Z')).toBeNull();
    expect(at('2026-03-02T15:10:00.001Z')).toEqual(new Date('2026-03-02T15:10:00.000Z'));
  });
});

describe('parseInstant', () => {
  it('reads ISO 8601 instants with a zone', () => {
    expect(parseInstant('2026-12-01T18:00:00Z')).toEqual(new Date('2026-12-01T18:00:00.000Z'));
    expect(parseInstant('2026-12-01T19:00+01:00')).toEqual(new Date('2026-12-01T18:00:00.000Z'));
    expect(parseInstant('2024-02-29T00:00:00.123456789z')).toEqual(new Date('2024-02-29T00:00:00.123Z'));
  });

  it.each([
    '2026-12-01T18:00:00',
    '2026-12-01',
    '2026-02-30T00:00:00Z',
    '2025-02-29T00:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-12-01T24:00:00Z',
    '2026-12-01T18:60:00Z',
    '2026-12-01 18:00:00Z',
    'tomorrow',
    `2026-12-01T18:00:00.${'1'.repeat(40)}Z`,
  ])('refuses %s', (text) => expect(parseInstant(text)).toBeNull());

  it('refuses a long text', () => {
    // That it does so without looking at it (a time budget): retry-policy.timed.test.ts.
    expect(parseInstant('2'.repeat(5_000_000))).toBeNull();
  });
});

describe('voicemail_left', () => {
  const endedAt = new Date('2026-03-02T15:00:00.000Z');
  it('is not retried by default: the message was delivered', () => {
    expect(DEFAULT_RETRY_ON).toEqual(['no_answer', 'busy', 'voicemail']);
    const policy: RetryPolicy = { maxAttempts: 3, on: DEFAULT_RETRY_ON, delaySeconds: 600 };
    expect(nextAttemptAt({ attempts: 1, outcome: 'voicemail_left', endedAt }, { policy, expiresAt: null })).toBeNull();
    expect(nextAttemptAt({ attempts: 1, outcome: 'voicemail', endedAt }, { policy, expiresAt: null })).not.toBeNull();
  });

  it('is retried when the policy lists it, apart from voicemail', () => {
    const policy: RetryPolicy = { maxAttempts: 3, on: ['voicemail_left'], delaySeconds: 600 };
    expect(nextAttemptAt({ attempts: 1, outcome: 'voicemail_left', endedAt }, { policy, expiresAt: null })).not.toBeNull();
    expect(nextAttemptAt({ attempts: 1, outcome: 'voicemail', endedAt }, { policy, expiresAt: null })).toBeNull();
  });
});
