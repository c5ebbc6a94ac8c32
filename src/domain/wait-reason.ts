// Why a call still waiting (pending or queued) is not dialled before its next_attempt_at: the
// `calls.wait_reason` column, set by whatever holds the call back and cleared when it is dialled
// or ends. Only the frequency cap sets one so far; calling windows and retries are to follow.
export const WAIT_REASONS = ['frequency_cap'] as const;
export type WaitReason = (typeof WAIT_REASONS)[number];

const isWaitReason = (v: string): v is WaitReason => (WAIT_REASONS as readonly string[]).includes(v);

/** The reason a waiting call waits; null for a call not waiting, or without a known reason. */
export function waitReasonOf(c: { status: string; waitReason: string | null }): WaitReason | null {
  if (c.status !== 'pending' && c.status !== 'queued') return null;
  return c.waitReason !== null && isWaitReason(c.waitReason) ? c.waitReason : null;
}
