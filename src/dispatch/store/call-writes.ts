// The writes a call's life produces, as pure functions of what happened: kept apart from the
// worker's plumbing so the record a call ends with is easy to read and to test.

import type { WaitReason } from '../../domain/wait-reason.ts';
import type { CallStatus } from '../../domain/call-state.ts';
import type { CallWrite } from '../../services/calls/call-transitions.ts';
import { ALTERNATE_WINDOW_WAIT } from '../../domain/wait-reason.ts';
import { callDurations, type CallEndResult, type CallRecording } from '../voice/provider.ts';

export interface CallRef {
  callId: string;
  batchId: string;
  accountId: string;
}

/** The history keeps it per attempt: a retry's reason (domain/call-attempts.ts) tells a message left apart. */
function voicemailDetail(result: CallEndResult): { voicemail_left?: boolean } {
  return result.voicemailLeft !== undefined ? { voicemail_left: result.voicemailLeft } : {};
}

/** Disconnect reason of a call settled because the worker that dialled it went away. */
export const DISPATCHER_LOST = 'dispatcher_lost';

/** Ended at the provider without a retry: the call's final record. */
export function endedWrite(
  ref: CallRef,
  owner: string,
  from: CallStatus,
  result: CallEndResult,
  /** The number this dial went to; null when unknown (recovered from another worker). */
  number: string | null,
  extra: {
    leaseExpiredBefore?: Date;
    detail?: Record<string, unknown>;
    /**
     * The recording rides with the analysis' first write (transcriptWrite 'processing') instead:
     * the end of the call, which frees its slot, then commits without megabytes of audio.
     */
    recordingWithAnalysis?: boolean;
    /** The provider analyses its calls itself: an answered call awaits it even with an empty transcript. */
    providerAnalysis?: boolean;
    /** Recorded with the end (recovery found the provider call without a stored id). */
    providerCallId?: string;
    /** The provider recovery found it at (calls.provider), with providerCallId. */
    provider?: string;
  } = {},
): { write: CallWrite; needsAnalysis: boolean } {
  const answered = result.answeredAt !== null;
  const needsAnalysis = answered && (!!extra.providerAnalysis || !!result.transcript);
  const deferRecording = needsAnalysis && !!extra.recordingWithAnalysis;
  const { durationSeconds, answerDurationSeconds } = callDurations(result);
  const write: CallWrite = {
    ...ref,
    owner,
    leaseExpiredBefore: extra.leaseExpiredBefore,
    from,
    to: result.status,
    events: [
      {
        from,
        to: result.status,
        at: result.endedAt,
        detail: {
          event: 'ended',
          ...(number !== null ? { number } : {}),
          hangup_by: result.hangupBy,
          disconnect_reason: result.disconnectReason,
          ...voicemailDetail(result),
          ...result.detail,
          ...extra.detail,
        },
      },
    ],
    set: {
      ...(extra.providerCallId ? { providerCallId: extra.providerCallId } : {}),
      ...(extra.provider ? { provider: extra.provider } : {}),
      completedAt: result.endedAt,
      ...(result.hangupBy ? { hangupBy: result.hangupBy } : {}),
      disconnectReason: result.disconnectReason,
      ...(result.voicemailLeft !== undefined ? { voicemailLeft: result.voicemailLeft } : {}),
      durationSeconds,
      ...(answerDurationSeconds !== null ? { answerDurationSeconds } : {}),
      ...(result.transcript ? { llmTranscript: result.transcript } : {}),
      // Only answered calls have a conversation to analyse; an answer without a transcript
      // cannot be analysed at all.
      ...(answered ? { transcriptStatus: needsAnalysis ? 'pending' : 'failed' } : {}),
      ...(deferRecording ? {} : { recordingAvailable: !!result.recording }),
    },
    // The lease stays while the analysis is outstanding, so a crash there is recovered too.
    releaseLease: !needsAnalysis,
    recording: deferRecording ? null : result.recording,
  };
  return { write, needsAnalysis };
}

/**
 * An unanswered attempt the batch's retry policy tries again: the call goes back in line (its slot
 * and lease freed) until `nextAttemptAt`; its history keeps how the attempt ended.
 */
/** When a call put back in line is tried again; in a windowed batch, also when that window closes. */
export interface RetryTime {
  at: Date;
  windowClosesAt: Date | null;
}

export function retryWrite(
  ref: CallRef,
  owner: string,
  from: CallStatus,
  result: CallEndResult,
  number: string,
  attempt: number,
  next: RetryTime,
): CallWrite {
  const nextAttemptAt = next.at;
  return {
    ...ref,
    owner,
    from,
    to: 'queued',
    events: [
      {
        from,
        to: 'queued',
        at: result.endedAt,
        detail: {
          event: 'retry_scheduled',
          number,
          attempt,
          status: result.status,
          hangup_by: result.hangupBy,
          disconnect_reason: result.disconnectReason,
          next_attempt_at: nextAttemptAt.toISOString(),
          ...voicemailDetail(result),
          ...result.detail,
        },
      },
    ],
    set: { nextAttemptAt, windowClosesAt: next.windowClosesAt ?? undefined, voicemailLeft: result.voicemailLeft },
    releaseLease: true,
  };
}

/** The primary number ended unanswered: the same call record goes on to the alternate number. */
export function alternateDialWrite(
  ref: CallRef,
  owner: string,
  from: CallStatus,
  previous: { number: string; result: CallEndResult },
  alternate: string,
  attempt: number,
): CallWrite {
  return {
    ...ref,
    owner,
    from,
    // Still in flight: the slot stays taken while the alternate is dialled.
    to: from,
    events: [
      {
        from,
        to: from,
        at: previous.result.endedAt,
        detail: {
          event: 'dial',
          number: alternate,
          attempt,
          alternate: true,
          previous: {
            number: previous.number,
            status: previous.result.status,
            disconnect_reason: previous.result.disconnectReason,
            ...voicemailDetail(previous.result),
            ...previous.result.detail,
          },
        },
      },
    ],
    set: { dialedNumber: alternate, usedAlternate: true, attemptsIncrement: 1, voicemailLeft: previous.result.voicemailLeft },
  };
}

/**
 * A dialled call whose worker's lease expired and whose provider cannot say how it went: ended as
 * failed by the system. Never dialled again: the provider call may have happened.
 */
export function lostCallWrite(
  ref: CallRef,
  lost: { status: CallStatus; leaseOwner: string; leaseExpiresAt: Date },
  now: Date,
  recoveredBy: string,
): CallWrite {
  const wasAnswered = lost.status === 'answered' || lost.status === 'in_progress';
  return {
    ...ref,
    owner: lost.leaseOwner,
    leaseExpiredBefore: now,
    from: lost.status,
    to: 'failed',
    events: [
      {
        from: lost.status,
        to: 'failed',
        at: now,
        detail: {
          event: 'recovered',
          reason: DISPATCHER_LOST,
          previous_worker: lost.leaseOwner,
          lease_expired_at: lost.leaseExpiresAt.toISOString(),
          worker: recoveredBy,
        },
      },
    ],
    set: {
      completedAt: now,
      hangupBy: 'system',
      disconnectReason: DISPATCHER_LOST,
      recordingAvailable: false,
      ...(wasAnswered ? { transcriptStatus: 'failed' } : {}),
    },
    releaseLease: true,
  };
}

export function transcriptWrite(
  ref: CallRef,
  owner: string,
  status: CallStatus,
  change: {
    transcriptStatus: 'processing' | 'ready' | 'failed';
    summary?: string;
    outcomes?: Record<string, string>;
    /** A recording held back from the call's end write (endedWrite recordingWithAnalysis). */
    recording?: CallRecording | null;
    /** The outcomes say the contact opted out: the number goes on the do-not-call list with this write. */
    optOut?: boolean;
  },
): CallWrite {
  return {
    ...ref,
    owner,
    from: status,
    to: status,
    events: [],
    set: {
      transcriptStatus: change.transcriptStatus,
      ...(change.summary !== undefined ? { summary: change.summary } : {}),
      ...(change.outcomes !== undefined ? { outcomes: change.outcomes } : {}),
      ...(change.recording !== undefined ? { recordingAvailable: change.recording !== null } : {}),
    },
    releaseLease: change.transcriptStatus !== 'processing',
    recording: change.recording ?? null,
    ...(change.optOut ? { optOut: true } : {}),
  };
}

/**
 * A claimed dial that the dial-time check withheld (dial-permission.ts: its window or a compliance
 * rule is closed for the number now, or a rule's frequency limit is reached): not made, so the
 * call goes back in line until `next.at` (its slot and lease freed), the claim's count of the
 * attempt taken back. No webhook: nothing happened that its receiver was told about.
 */
export function dialWithheldWrite(
  ref: CallRef,
  owner: string,
  from: CallStatus,
  c: { number: string; at: Date; next: RetryTime; reason: WaitReason; detail?: Record<string, unknown> },
): CallWrite {
  return {
    ...ref,
    owner,
    from,
    to: 'queued',
    events: [
      {
        from,
        to: 'queued',
        at: c.at,
        detail: { event: 'dial_withheld', number: c.number, reason: c.reason, next_attempt_at: c.next.at.toISOString(), ...c.detail },
      },
    ],
    set: { nextAttemptAt: c.next.at, windowClosesAt: c.next.windowClosesAt ?? undefined, waitReason: c.reason, attemptsIncrement: -1 },
    releaseLease: true,
    webhooks: false,
  };
}

/**
 * The primary number ended unanswered while the alternate number's calling window was closed: the
 * call goes back in line (its slot and lease freed) until the alternate's opening, when the claim
 * dials the alternate (wait_reason ALTERNATE_WINDOW_WAIT). `undial` takes back a claim's count of a
 * dial that was not made.
 */
export function alternateWaitWrite(
  ref: CallRef,
  owner: string,
  from: CallStatus,
  c: { alternate: string; at: Date; next: RetryTime; previous?: { number: string; result: CallEndResult }; undial?: boolean },
): CallWrite {
  return {
    ...ref,
    owner,
    from,
    to: 'queued',
    events: [
      {
        from,
        to: 'queued',
        at: c.at,
        detail: {
          event: 'alternate_waits',
          number: c.alternate,
          reason: 'calling_window',
          next_attempt_at: c.next.at.toISOString(),
          ...(c.previous
            ? {
                previous: {
                  number: c.previous.number,
                  status: c.previous.result.status,
                  disconnect_reason: c.previous.result.disconnectReason,
                  ...voicemailDetail(c.previous.result),
                  ...c.previous.result.detail,
                },
              }
            : {}),
        },
      },
    ],
    set: {
      nextAttemptAt: c.next.at,
      windowClosesAt: c.next.windowClosesAt ?? undefined,
      waitReason: ALTERNATE_WINDOW_WAIT,
      voicemailLeft: c.previous?.result.voicemailLeft,
      ...(c.undial ? { attemptsIncrement: -1 } : {}),
    },
    releaseLease: true,
  };
}
