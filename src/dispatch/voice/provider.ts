// The seam between the dispatch worker and whoever actually places calls (the simulator by
// default, Retell or others later). Everything the provider needs travels in PlaceCallRequest so
// providers never read the database.

import type { CallStatus } from '../../domain/call-state.ts';

export interface PlaceCallRequest {
  callId: string;
  batchId: string;
  accountId: string;
  attempt: number;
  /** E.164 DID number the call is placed from. */
  from: string;
  /** E.164 number dialled. */
  to: string;
  agent: { id: string; name: string; voice: string; outcomeKeys: string[] };
  prompt: { id: string; name: string; text: string };
  contact: { externalId: string; name: string | null; metadata: Record<string, unknown> };
  recordingEnabled: boolean;
  interruption: boolean;
  maxDurationSeconds: number;
}

/**
 * Events arrive in order per call: 'ringing'? -> 'answered'? -> 'ended' (always last, exactly
 * once). 'ringing' is absent when the dial itself fails; 'answered' is absent unless answered.
 */
export type ProviderCallEvent =
  | { type: 'ringing'; callId: string; at: Date }
  | { type: 'answered'; callId: string; at: Date }
  | { type: 'ended'; callId: string; at: Date; result: CallEndResult };

export type CallEndStatus = 'completed' | 'no_answer' | 'busy' | 'failed';
export type HangupBy = 'agent' | 'user' | 'system';

export interface CallEndResult {
  status: CallEndStatus;
  hangupBy: HangupBy | null;
  disconnectReason: string;
  startedAt: Date;
  answeredAt: Date | null;
  endedAt: Date;
  /** null when not answered. */
  transcript: string | null;
  /** Only when answered and recordingEnabled. */
  recording: { contentType: string; data: Uint8Array } | null;
}

export type HangupReason = 'max_duration' | 'cancelled' | 'shutdown';

export type ProviderCallLookup =
  | { state: 'ended'; result: CallEndResult }
  | { state: 'in_flight' }
  | { state: 'unknown' };

export type ProviderEventListener = (e: ProviderCallEvent & { providerCallId: string }) => void;

export interface VoiceProvider {
  readonly name: string;
  /** Starts a call; resolves once the provider accepted it. Events for it arrive through `onEvent`. */
  placeCall(req: PlaceCallRequest): Promise<{ providerCallId: string }>;
  /** Ends an in-flight call (max duration reached, batch cancelled); the provider then emits 'ended' with hangupBy 'system'. Unknown or already-ended calls are ignored. */
  hangup(providerCallId: string, reason: HangupReason): Promise<void>;
  /** Returns an unsubscribe function. */
  onEvent(listener: ProviderEventListener): () => void;
  /**
   * Optional: what the provider knows about a call, so a call whose worker died after dialling can
   * be settled with its real result. Providers without it (the simulator, whose calls die with
   * their process) get such calls ended as failed by the system.
   */
  lookup?(providerCallId: string): Promise<ProviderCallLookup>;
  close(): Promise<void>;
}

/** Status the call record takes for a provider event (the worker may then move answered -> in_progress). */
export function callStatusForEvent(e: ProviderCallEvent): CallStatus {
  return e.type === 'ended' ? e.result.status : e.type;
}

/**
 * Integer durations for the call record, derived from the timestamps so the two never disagree:
 * duration_seconds spans start to end, answer_duration_seconds answer to end (null if unanswered).
 */
export function callDurations(r: Pick<CallEndResult, 'startedAt' | 'answeredAt' | 'endedAt'>): {
  durationSeconds: number;
  answerDurationSeconds: number | null;
} {
  const seconds = (from: Date) => Math.max(0, Math.round((r.endedAt.getTime() - from.getTime()) / 1000));
  return {
    durationSeconds: seconds(r.startedAt),
    answerDurationSeconds: r.answeredAt ? seconds(r.answeredAt) : null,
  };
}

export const HANGUP_DISCONNECT_REASON: Record<HangupReason, string> = {
  max_duration: 'max_duration_reached',
  cancelled: 'cancelled',
  shutdown: 'worker_shutdown',
};
