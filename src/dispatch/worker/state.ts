// What one dispatch worker holds while it runs: its settings, the calls it has in flight, the
// calls whose end or analysis it still owes, its caches and the flags of its loop. Every module
// of the worker receives this object; nothing of it lives at module level.
import type { DialAnswer } from '../../domain/dial-permission.ts';
import type { OptOutRule } from '../../domain/opt-out.ts';
import type { Logger } from 'pino';
import type { AppDeps, Clock } from '../../deps.ts';
import type { CallStatus } from '../../domain/call-state.ts';
import type { Analyser } from '../analysis/analyser.ts';
import type { CallRef } from '../store/call-writes.ts';
import type { DispatchContext } from '../store/dispatch-context.ts';
import type { WriteQueue } from '../store/write-queue.ts';
import type { DialPacer } from '../voice/dial-pacing.ts';
import type { CallEndResult, HangupReason, PlaceCallRequest, ProviderCallEvent, VoiceProvider } from '../voice/provider.ts';
import type { ProviderRegistry } from '../voice/registry.ts';

export interface WorkerSettings {
  /** Lease owner name. */
  id: string;
  pollMs: number;
  leaseMs: number;
  maxInFlight: number;
  claimBatchSize: number;
  shutdownGraceMs: number;
  /** Provider I/O of one recovery round stops this long after it started: well within a lease. */
  recoveryBudgetMs: number;
}

/** A call this worker dialled (or adopted) and watches until it ends. */
export interface LiveCall extends CallRef {
  ctx: DispatchContext;
  provider: VoiceProvider | null;
  providerCallId: string | null;
  /** Status as last written (or queued to be written). */
  status: CallStatus;
  number: string;
  alternatePhone: string | null;
  usedAlternate: boolean;
  attempts: number;
  /** The zones its calling windows are judged in (calls.timezone); null without a window. */
  timezone: string | null;
  /** The contact's own zone (calls.contact_timezone), which judges every number dialled; unknown for an adopted call. */
  contactZone?: string | null;
  /** Start of the current dial, for the max-duration rule. */
  dialledAt: Date;
  /**
   * Until when (app clock, ms) the lease is ours for sure: the expiry the last conditional write
   * that took or confirmed it set. The provider is asked to act only before this, less its margin.
   */
  leaseUntil: number;
  answered: boolean;
  /** When it was answered, if known (an adopted call may have been answered unseen). */
  answeredAt: Date | null;
  /**
   * Asked to end: `since` the first request, `at` the latest (re-sent while the provider still
   * reports the call going or cannot be reached), `checking` while its record is being read.
   */
  hangup: { reason: HangupReason; at: Date; since: Date; checking?: boolean } | null;
  contact: PlaceCallRequest['contact'];
  /** What its current dial was judged against and the answer (dialPermission): zones, windows, rules. */
  permit?: DialAnswer;
}

/** An ended, answered call whose summary and outcomes are still to be made. */
export interface AnalysisJob extends CallRef {
  status: CallStatus;
  hangupBy: string | null;
  transcript: string;
  contactName: string | null;
  metadata: Record<string, unknown>;
  outcomeKeys: string[];
  /** The batch's agent (null: unknown, its batch is gone) and its opt-out key as cached with the batch. */
  agentId: string | null;
  optOutOutcomeKey: string | null;
  callbackUrl: string | null | undefined;
  /** Held back from the end write; undefined when unknown (analysis taken over from another worker). */
  recording?: CallEndResult['recording'];
  recordingEnabled: boolean;
  /** Set when the call's provider analyses it (its analysis replaces the local analyser's). */
  providerAnalysis: { provider: VoiceProvider; providerCallId: string } | null;
}

export type ProviderEvent = ProviderCallEvent & { providerCallId: string };

export interface WorkerState {
  deps: AppDeps;
  settings: WorkerSettings;
  clock: Clock;
  log: Logger;
  /** Whether `call transition` lines are logged (checked once: they are the hottest log lines). */
  logTransitions: boolean;
  providers: ProviderRegistry;
  analyser: Analyser;
  pacer: DialPacer;
  /** Buffers call writes and commits them in groups. */
  queue: WriteQueue;

  // The calls this worker owes something.
  live: Map<string, LiveCall>;
  liveByProviderCall: Map<string, LiveCall>;
  /** Events that arrived before placeCall returned the provider call id. */
  eventsBeforeDial: Map<string, ProviderEvent[]>;
  /** Ended calls whose final write is queued but not committed yet (their lease is still ours). */
  ending: Set<string>;
  /** Ended calls whose analysis is outstanding (lease still ours). */
  analysing: Set<string>;
  /** Calls whose provider analysis is being awaited (they hold no analysis group slot). */
  providerAnalysing: Set<string>;
  analysisQueue: AnalysisJob[];
  analysisGroupsRunning: number;
  dialsInFlight: number;
  /** Leases being confirmed before a provider request (settle waits for them). */
  confirming: number;

  // Caches.
  /** Batch settings by batch id. */
  contexts: Map<string, DispatchContext>;
  /** Each account's provider name and when it was read (Date.now() ms). */
  accountProviders: Map<string, { name: string; at: number }>;
  /** Each agent's opt-out outcome key and when it was read (Date.now() ms). */
  optOutKeys: Map<string, { rule: OptOutRule; at: number }>;
  /** Provider event subscriptions, ended by stop(). */
  subscriptions: Map<VoiceProvider, () => void>;
  /** Lost calls recovery could not settle yet, and when (app clock, ms) to ask about them again. */
  recoveryRetry: Map<string, { at: number; failures: number }>;

  // Leases.
  lastRenewal: number;
  renewal: Promise<void> | null;
  leaseKeepers: number;
  leaseKeeperTimer: ReturnType<typeof setInterval> | null;

  // The loop.
  running: boolean;
  /** When (Date.now()) the loop last finished a tick, or started; readiness watches it. */
  lastTurnAt: number;
  stopping: boolean;
  /** Settles when the latest claim round is done (analysis lets it go first). */
  claiming: Promise<void>;
  /** Ticks and claim rounds run one at a time: each waits for this one. */
  exclusiveTail: Promise<unknown>;
  /** Which account the next claim round starts with (accounts take turns). */
  claimRotation: number;
  /** Accounts whose calls ended since the last claim round. */
  accountsWithFreedSlots: Set<string>;
  claimSoon: boolean;
  /** The last round stopped at its budget: the next one looks at every account again. */
  moreWaiting: boolean;
  /** Ends the loop's wait between polls early. */
  wake: (() => void) | null;
}

export function heldCallIds(s: WorkerState): string[] {
  return [...s.live.keys(), ...s.ending, ...s.analysing];
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
