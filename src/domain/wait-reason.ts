// Why a call still waiting (pending or queued) is not dialled before its next_attempt_at. The
// frequency cap and the caller-ID pool (every usable number capped today) record it
// (`calls.wait_reason`, cleared when the call is dialled, ends or is moved to another window);
// otherwise a retry (queued) or a calling window (pending, windowed) is why.
export const WAIT_REASONS = ['calling_window', 'retry', 'frequency_cap', 'caller_id_cap'] as const;
export type WaitReason = (typeof WAIT_REASONS)[number];

/**
 * `calls.wait_reason` of a call whose primary number went unanswered while its alternate number's
 * window was closed: it waits for the alternate's opening, and the claim then dials the alternate.
 * Shown as a calling-window wait.
 */
export const ALTERNATE_WINDOW_WAIT = 'alternate_window';

const isWaitReason = (v: string): v is WaitReason => (WAIT_REASONS as readonly string[]).includes(v);

export interface WaitingCall {
  status: string;
  waitReason: string | null;
  nextAttemptAt: Date | string | null;
  /** Set on calls of a windowed batch. */
  timezone: string | null;
}

/** The reason a waiting call waits; null for a call not waiting. */
export function waitReasonOf(c: WaitingCall): WaitReason | null {
  if ((c.status !== 'pending' && c.status !== 'queued') || c.nextAttemptAt === null) return null;
  if (c.waitReason === ALTERNATE_WINDOW_WAIT) return 'calling_window';
  if (c.waitReason !== null && isWaitReason(c.waitReason)) return c.waitReason;
  if (c.status === 'queued') return 'retry';
  return c.timezone !== null ? 'calling_window' : null;
}
