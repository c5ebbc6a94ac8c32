// The seam between the dispatch worker and whoever actually places calls (the simulator by
// default, Retell or others later). Everything the provider needs travels in PlaceCallRequest so
// providers never read the database.

import type { CallStatus } from '../../domain/call-state.ts';
import type { VoicemailSetting } from '../../domain/voicemail.ts';

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
  /** The batch's voicemail setting; absent: the provider (or its agent) does as it would. */
  voicemail?: VoicemailSetting;
}

/**
 * Events arrive in order per call: 'ringing'? -> 'answered'? -> 'ended' (always last, exactly
 * once). 'ringing' is absent when the dial itself fails; 'answered' is absent unless answered.
 */
export type ProviderCallEvent =
  | { type: 'ringing'; callId: string; at: Date }
  | { type: 'answered'; callId: string; at: Date }
  | { type: 'ended'; callId: string; at: Date; result: CallEndResult };

/**
 * A call's recording: the audio itself (the simulator), or where the provider keeps it (Retell).
 * A provider-held recording is only ever served through our signed /recordings link, which proxies
 * it: the provider's URL is never handed out.
 */
export type CallRecording = { contentType: string; data: Uint8Array } | { contentType: string; sourceUrl: string };

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
  recording: CallRecording | null;
  /**
   * The attempt reached voicemail: whether the message was left. Absent where the provider does not
   * say; the worker then takes it from what the dial asked (domain/voicemail.ts voicemailLeftUnder).
   */
  voicemailLeft?: boolean;
  /** Added to the end event's history detail (e.g. the provider's reason for rejecting a dial). */
  detail?: Record<string, unknown>;
}

/**
 * The provider refused the dial for good (a 4xx such as a bad number or no payment method): the call
 * fails with `disconnectReason` and the provider's message in its history, without retries.
 * Account-level reasons (payment_required, provider_auth_failed, provider_not_configured) skip the
 * alternate number, which would be refused the same way.
 */
export class DialRejectedError extends Error {
  override name = 'DialRejectedError';
  constructor(
    message: string,
    readonly disconnectReason: string,
    readonly detail: Record<string, unknown>,
  ) {
    super(message);
  }
}

/**
 * The provider could not take the dial for a reason of its own (5xx, 429, unreachable, timed out),
 * retries spent. `created`: 'no' when it surely did not create the call (refused before creating,
 * never reached), so the worker may dial through the route's next provider; 'maybe' when a create
 * may have gone through (a timeout or 5xx after a create was sent): the worker then asks the
 * provider's findCall, and fails over only when that finds none (docs/providers.md "Routing and failover").
 */
export class ProviderUnavailableError extends Error {
  override name = 'ProviderUnavailableError';
  /**
   * 'provider': a provider-wide symptom (5xx, timeout, unreachable), counted by the provider's
   * circuit breaker, which every account on the worker shares; 'account': a limit of our account's
   * own key there (a 429, Vapi's concurrency refusal), which fails this dial over but opens no breaker.
   */
  readonly scope: 'provider' | 'account';
  constructor(
    message: string,
    readonly created: 'no' | 'maybe',
    readonly detail: Record<string, unknown> = {},
    options?: ErrorOptions & { scope?: 'provider' | 'account' },
  ) {
    super(message, options);
    this.scope = options?.scope ?? 'provider';
  }
}

/** DialRejectedError reasons about our account at that provider, not the person: another provider of the route may place the dial. */
export const ACCOUNT_REJECTION_REASONS: ReadonlySet<string> = new Set(['payment_required', 'provider_auth_failed', 'provider_not_configured']);

/**
 * The dialling worker lost the call before the provider created it (CallOwnership.confirmDial said
 * no): nothing was placed, and the worker touches the call no more (docs/dispatch.md "Ownership").
 */
export class DialForfeitedError extends Error {
  override name = 'DialForfeitedError';
  constructor(callId: string) {
    super(`call ${callId} is no longer leased by this worker; not dialled`);
  }
}

/** How a provider keeps acting for a worker only while that worker holds the call's lease. */
export interface CallOwnership {
  /** The lease holder (calls.lease_owner): provider events are taken for the call only while it holds it. */
  owner: string;
  /**
   * Resolves true while the worker may still dial: its lease, confirmed by a conditional write,
   * outlasts one request. A provider that waits or retries before a create asks again right before
   * each one and throws DialForfeitedError on false.
   */
  confirmDial(): Promise<boolean>;
  /**
   * Synchronous, from what the worker knows without asking: its lease still outlasts one request.
   * A provider asks it in the same step as it writes a create, so that a pause after confirmDial
   * cannot let a lost dial out (gated-fetch.ts); false means confirm again.
   */
  holdsNow(): boolean;
}

/** What identifies one dial of one of our calls at a provider (our ids travel in its metadata). */
export interface ProviderCallRef {
  callId: string;
  accountId: string;
  /** The call's attempt number: the alternate-number dial is a second provider call for the same call id. */
  attempt: number;
  recordingEnabled: boolean;
  /** The dial's caller ID, when known: lets findCall search as narrowly as the create's own lookup does. */
  from?: string;
  /** No earlier than this was the dial's create sent, when known (findCall's search starts there). */
  since?: Date;
}

export interface ProviderAnalysisRequest {
  accountId: string;
  providerCallId: string;
  /** Outcome keys configured on our agent: the only keys the result may carry. */
  outcomeKeys: string[];
  /** The call ended without a recording (and may have one): take one from the analysis if it brings it. */
  wantRecording: boolean;
}

/** The provider's own post-call analysis, in our terms. */
export interface ProviderAnalysis {
  summary: string | null;
  /** Values as strings; only keys configured on the agent. */
  outcomes: Record<string, string>;
  /** A recording that only became known with the analysis. */
  recording?: CallRecording | null;
}

export type HangupReason = 'max_duration' | 'cancelled' | 'shutdown';

export type ProviderCallLookup =
  | { state: 'ended'; result: CallEndResult }
  /** Still going at the provider; `answeredAt` once the callee picked up. */
  | { state: 'in_flight'; answeredAt?: Date | null }
  | { state: 'unknown' };

export type ProviderEventListener = (e: ProviderCallEvent & { providerCallId: string }) => void;

export interface VoiceProvider {
  readonly name: string;
  /** Starts a call; resolves once the provider accepted it. Events for it arrive through `onEvent`. */
  placeCall(req: PlaceCallRequest, ownership?: CallOwnership): Promise<{ providerCallId: string }>;
  /**
   * The longest one request to the provider (a create, a stop) may take; a worker sends one only
   * while its lease outlasts this (capped at half a lease). Absent: requests are instant (in-process).
   */
  readonly requestTimeoutMs?: number;
  /**
   * Ends an in-flight call (max duration reached, batch cancelled); the provider then emits 'ended'
   * with hangupBy 'system'. Unknown or already-ended calls are ignored. `call` names the account of a
   * call this process did not place (recovery), for providers that need it to reach the call.
   */
  hangup(providerCallId: string, reason: HangupReason, call?: { accountId: string; holdsNow?: () => boolean }): Promise<void>;
  /** Returns an unsubscribe function. */
  onEvent(listener: ProviderEventListener): () => void;
  /**
   * Optional: what the provider knows about a call, so a call whose worker died after dialling can
   * be settled with its real result. Providers without it (the simulator, whose calls die with
   * their process) get such calls ended as failed by the system.
   */
  lookup?(providerCallId: string, call?: ProviderCallRef): Promise<ProviderCallLookup>;
  /**
   * Optional: the provider call placed for this dial of our call, found by our ids in its metadata -
   * for a worker that died after dialling but before the provider call id was stored. null: none.
   */
  findCall?(call: ProviderCallRef): Promise<string | null>;
  /**
   * Optional: takes over watching a call another (dead) worker placed; its events then arrive
   * through `onEvent` like those of calls placed here. Without it such calls are hung up and failed.
   */
  adopt?(providerCallId: string, req: PlaceCallRequest, state: { answered: boolean; dialledAt: Date; owner?: string }): Promise<void>;
  /**
   * Optional: stop watching a call without telling the provider anything (the worker lost its
   * lease: the call's new owner watches it, and its events are left for that owner).
   */
  forget?(providerCallId: string): void;
  /**
   * Optional: the provider analyses its calls itself (summary, outcomes), so its analysis replaces
   * the local analyser for its calls. Resolves once the analysis is known, null when the provider
   * has none (the call's transcript_status becomes failed).
   */
  analyse?(req: ProviderAnalysisRequest): Promise<ProviderAnalysis | null>;
  /** Optional: dial pacing, in calls per second per from-number for this account (0 = unpaced). */
  dialRate?(accountId: string): Promise<number>;
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
