// A batch's retry policy and expiry (issue 15), and the rule that decides, when an attempt ends,
// whether the call is tried again and when. Pure: the create checks and the worker share it.
//
// Every dial is an attempt, the alternate number's included: a call's `attempts` counts dials,
// and `max_attempts` caps them. When an attempt goes unanswered the alternate number (if the batch
// uses it) is dialled at once, as without a policy, while attempts remain; a retry after
// `delay_seconds` starts again from the primary number.

import { ATTEMPT_OUTCOMES, type AttemptOutcome } from './attempt-outcome.ts';
import { nextOpening, recipientZonesOf, type CallingWindow } from './calling-window.ts';

export const MAX_ATTEMPTS_LIMIT = 10;
export const RETRY_DELAY_MAX_SECONDS = 86_400;
/** The documented minimum delay; the server setting RETRY_MIN_DELAY_SECONDS may lower it (tests, development). */
export const RETRY_DELAY_MIN_SECONDS = 60;
// Not voicemail_left: the message was delivered, which is what a retry would try for.
export const DEFAULT_RETRY_ON: readonly AttemptOutcome[] = ['no_answer', 'busy', 'voicemail'];
export const DEFAULT_RETRY_DELAY_SECONDS = 3_600;
/** disconnect_reason of a call its batch's expiry kept from being dialled. */
export const EXPIRED_DISCONNECT_REASON = 'expired';

export interface RetryPolicy {
  maxAttempts: number;
  on: readonly AttemptOutcome[];
  delaySeconds: number;
}

export function isRetryOutcome(v: unknown): v is AttemptOutcome {
  return typeof v === 'string' && (ATTEMPT_OUTCOMES as readonly string[]).includes(v);
}

// Zone required: a bare local time would mean a different moment on every server.
const ISO_INSTANT_RE =
  /^(\d{4})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d{1,9})?)?(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)$/i;

/** An ISO 8601 instant with a time zone, or null. Bounded: the pattern has no nested repetition and the text is at most 40 characters. */
export function parseInstant(text: string): Date | null {
  const m = text.length <= 40 ? ISO_INSTANT_RE.exec(text) : null;
  if (!m) return null;
  // A day the month does not have (2026-02-30) would roll over into the next month.
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (new Date(Date.UTC(year, month - 1, day)).getUTCDate() !== day) return null;
  const d = new Date(text);
  return Number.isNaN(d.getTime()) ? null : d;
}

export interface AttemptEnd {
  /** Dials so far, this one included. */
  attempts: number;
  outcome: string;
  endedAt: Date;
}

export interface RetryLimits {
  policy: RetryPolicy | null;
  expiresAt: Date | null;
}

/** When the call is to be tried again, or null when this attempt is its last. */
export function nextAttemptAt(end: AttemptEnd, limits: RetryLimits): Date | null {
  const { policy } = limits;
  if (!policy) return null;
  if (end.attempts >= policy.maxAttempts) return null;
  if (!(policy.on as readonly string[]).includes(end.outcome)) return null;
  const at = new Date(end.endedAt.getTime() + policy.delaySeconds * 1000);
  // An attempt that could only start after the batch expires is never made: this one is the last.
  if (limits.expiresAt && at.getTime() >= limits.expiresAt.getTime()) return null;
  return at;
}

/**
 * A retry due at `at` in a windowed batch: at the first opening of the call's windows from then on,
 * with that window's close; null when none opens before the batch expires (the attempt was the last).
 */
export function retryInWindow(
  at: Date,
  windows: readonly CallingWindow[],
  timezone: string | null,
  expiresAt: Date | null,
): { at: Date; windowClosesAt: Date } | null {
  const opening = nextOpening(windows, recipientZonesOf(windows, timezone), at);
  if (!opening || (expiresAt && opening.opensAt.getTime() >= expiresAt.getTime())) return null;
  return { at: opening.opensAt, windowClosesAt: opening.closesAt };
}
