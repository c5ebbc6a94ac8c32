// A call's attempts, read back from its history (call_events): each dial opens one, and what
// happened next closes it (the alternate number dialled after it, a retry scheduled, the end, a
// recovery). Pure, so the one reading serves every surface that lists attempts.
import { attemptOutcome } from './attempt-outcome.ts';

export interface HistoryEntry {
  toStatus: string;
  detail: unknown;
  at: Date;
}

export interface CallAttempt {
  /** 1-based; every dial counts, the alternate number's included. */
  number: number;
  phoneNumber: string;
  alternate: boolean;
  /** The attempt's status once it ended (`no_answer` for voicemail); the call's status while it runs. */
  status: string;
  disconnectReason: string | null;
  hangupBy: string | null;
  startedAt: Date;
  endedAt: Date | null;
}

type Detail = Record<string, unknown>;
const asDetail = (v: unknown): Detail => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Detail) : {});
const detailOf = (e: HistoryEntry): Detail => asDetail(e.detail);
const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** The attempts in order; `callStatus` is the status of a still-open last attempt. */
export function attemptsFromHistory(history: readonly HistoryEntry[], callStatus: string): CallAttempt[] {
  const attempts: CallAttempt[] = [];
  let open: CallAttempt | null = null;
  const close = (status: string, d: Detail, at: Date) => {
    if (!open) return;
    open.status = status;
    open.disconnectReason = text(d.disconnect_reason);
    open.hangupBy = text(d.hangup_by);
    open.endedAt = at;
    open = null;
  };
  for (const e of history) {
    const d = detailOf(e);
    switch (d.event) {
      case 'dial': {
        const previous = asDetail(d.previous);
        close(text(previous.status) ?? 'failed', previous, e.at);
        open = {
          number: typeof d.attempt === 'number' ? d.attempt : attempts.length + 1,
          phoneNumber: text(d.number) ?? '',
          alternate: d.alternate === true,
          status: callStatus,
          disconnectReason: null,
          hangupBy: null,
          startedAt: e.at,
          endedAt: null,
        };
        attempts.push(open);
        break;
      }
      case 'retry_scheduled':
        close(text(d.status) ?? 'failed', d, e.at);
        break;
      case 'dial_withheld':
        // A claimed dial the dial-time check did not let through (dial-permission.ts): no attempt.
        if (open) {
          attempts.pop();
          open = null;
        }
        break;
      case 'alternate_waits':
        // Put back until the alternate number's window opens: after the primary's attempt, or in
        // place of a claimed alternate dial that was not made.
        if (d.previous !== undefined) close(text(asDetail(d.previous).status) ?? 'failed', asDetail(d.previous), e.at);
        else if (open) {
          attempts.pop();
          open = null;
        }
        break;
      case 'ended':
      case 'recovered':
        close(e.toStatus, { ...d, disconnect_reason: d.disconnect_reason ?? d.reason }, e.at);
        break;
    }
  }
  return attempts;
}

/** A call put back in line by its batch's retry policy, waiting for its next attempt. */
export const waitsForRetry = (c: { status: string; nextAttemptAt: Date | string | null }): boolean =>
  c.status === 'queued' && c.nextAttemptAt != null;

/**
 * Why a call waits for a retry, from the history entry that put it back in line: how the attempt
 * before the wait ended, in the retry policy's terms (`voicemail` and `voicemail_left` told apart from `no_answer`).
 * Null for any other entry.
 */
export function retryReason(detail: unknown): string | null {
  const d = asDetail(detail);
  const status = text(d.status);
  if (d.event !== 'retry_scheduled' || !status) return null;
  return attemptOutcome({ status, disconnectReason: text(d.disconnect_reason), voicemailLeft: d.voicemail_left === true });
}
