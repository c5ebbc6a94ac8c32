// What one dispatch worker holds while it runs: its settings and tools, its lifecycle mode, the
// book of calls it owes something, its caches, its lease keeping and its loop's state. Every
// module of the worker receives this object; nothing of it lives at module level.
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
import type { BreakerState } from '../../domain/circuit-breaker.ts';
import type { RouteEntry } from '../../domain/provider-route.ts';
import type { CallEndResult, HangupReason, PlaceCallRequest, ProviderCallEvent, VoiceProvider } from '../voice/provider.ts';
import type { ProviderRegistry } from '../voice/registry.ts';
import { delay, type Scheduler } from '../../scheduler.ts';
import type { Lifecycle } from './lifecycle.ts';

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
  /** An answered attempt that talked for less than this (seconds) counts as short in its number's health. */
  shortCallSeconds: number;
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
  /** The caller ID its current dial is placed from (worker/caller-id.ts); unset: none chosen. */
  from?: string;
  /**
   * The daily-cap counts its choices took (DID, UTC day), the latest (`from`'s) last, until given
   * back: a dial that is not placed gives its count back with the call's next write
   * (worker/caller-id.ts takeUnplacedCallerId).
   */
  callerIdCounts?: { didId: string; day: string }[];
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

/**
 * How the parts of a call's session below call-session.ts (dial.ts, alternate-dial.ts,
 * hangups.ts) hand back to it without importing it: call-session.ts decides what follows.
 */
export interface SessionSeam {
  /** The call's dial ended (never placed, rejected, ended at the provider): alternate, retry or end. */
  ended(call: LiveCall, result: CallEndResult): void;
  /** A provider event, also one that arrived before its dial returned. */
  event(e: ProviderEvent): void;
  /** The dial, judged again before a later provider of the route, may not be made now: it waits (or ends) as a withheld claimed dial does. */
  withheld(call: LiveCall, permit: Extract<DialAnswer, { allowed: false }>): Promise<void>;
}

/**
 * The calls this worker owes something, from the claim until their last write: watched at the
 * provider (live), ending (final write queued), analysing. A call leaves the book when its lease is
 * lost (ledger.ts dropLostCall) and is touched no more.
 */
export interface CallBook {
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
}

/** What the worker read once and keeps for a while; times are app clock ms. */
export interface WorkerCaches {
  /** Batch settings by batch id. */
  contexts: Map<string, DispatchContext>;
  /** Each account's provider name and when it was read. */
  accountProviders: Map<string, { name: string; at: number }>;
  /** Each agent's opt-out outcome key and when it was read. */
  optOutKeys: Map<string, { rule: OptOutRule; at: number }>;
  /** Provider event subscriptions, ended by stop(). */
  subscriptions: Map<VoiceProvider, () => void>;
  /** Lost calls recovery could not settle yet, and when to ask about them again. */
  recoveryRetry: Map<string, { at: number; failures: number }>;
  /** Each account's provider route and when it was read (routes.ts). */
  routes: Map<string, { route: RouteEntry[]; at: number }>;
  /** Each provider's circuit breaker in this process (breakers.ts). */
  breakers: Map<string, BreakerState>;
}

/** A cache entry this old (app clock ms) is read again; so is one from the future (the clock was set back). */
export const isStale = (ageMs: number, ttlMs: number): boolean => ageMs >= ttlMs || ageMs < 0;

/** Renewal of the leases on the book's calls (leases.ts). */
export interface LeaseKeeping {
  /** App clock ms of the last renewal. */
  lastRenewal: number;
  renewal: Promise<void> | null;
  /** Who needs the renewal timer running (the loop, a recovery round, shutdown). */
  keepers: number;
  stopTimer: (() => void) | null;
}

export type PendingClaim = 'none' | 'freed' | 'all';

/** The loop's own state between ticks (loop.ts). */
export interface LoopState {
  /** When (app clock ms) the loop last finished a tick, or started; readiness watches it. */
  lastTurnAt: number;
  /** Ticks the loop has finished: what a test waits on to know the loop saw a moved clock. */
  turns: number;
  /** Settles when the latest claim round is done (analysis lets it go first). */
  claiming: Promise<void>;
  /** Ticks and claim rounds run one at a time: each waits for this one. */
  exclusiveTail: Promise<unknown>;
  /** Which account the next claim round starts with (accounts take turns). */
  claimRotation: number;
  /** Accounts whose calls ended since the last claim round. */
  accountsWithFreedSlots: Set<string>;
  /**
   * The claim round owed before the next poll: none; one for the accounts whose slots were freed;
   * or one over every account, when the last round stopped at its budget (more calls waiting).
   */
  pendingClaim: PendingClaim;
  /** Ends the loop's wait between polls early. */
  wake: (() => void) | null;
}

export interface WorkerState {
  deps: AppDeps;
  settings: WorkerSettings;
  /** The one time source: deps.clock. */
  clock: Clock;
  /** Every wait and deadline of the worker. */
  scheduler: Scheduler;
  log: Logger;
  /** Whether `call transition` lines are logged (checked once: they are the hottest log lines). */
  logTransitions: boolean;
  providers: ProviderRegistry;
  analyser: Analyser;
  pacer: DialPacer;
  /** Buffers call writes and commits them in groups. */
  queue: WriteQueue;
  lifecycle: Lifecycle;
  book: CallBook;
  caches: WorkerCaches;
  leases: LeaseKeeping;
  loop: LoopState;
}

export function createCallBook(): CallBook {
  return {
    live: new Map(),
    liveByProviderCall: new Map(),
    eventsBeforeDial: new Map(),
    ending: new Set(),
    analysing: new Set(),
    providerAnalysing: new Set(),
    analysisQueue: [],
    analysisGroupsRunning: 0,
    dialsInFlight: 0,
    confirming: 0,
  };
}

export function createCaches(): WorkerCaches {
  return {
    contexts: new Map(),
    accountProviders: new Map(),
    optOutKeys: new Map(),
    subscriptions: new Map(),
    recoveryRetry: new Map(),
    routes: new Map(),
    breakers: new Map(),
  };
}

export function createLeaseKeeping(): LeaseKeeping {
  return { lastRenewal: 0, renewal: null, keepers: 0, stopTimer: null };
}

export function createLoopState(): LoopState {
  return {
    lastTurnAt: 0,
    turns: 0,
    claiming: Promise.resolve(),
    exclusiveTail: Promise.resolve(),
    claimRotation: 0,
    accountsWithFreedSlots: new Set(),
    pendingClaim: 'none',
    wake: null,
  };
}

export function heldCallIds(s: WorkerState): string[] {
  return [...s.book.live.keys(), ...s.book.ending, ...s.book.analysing];
}

/** Resolves after `ms` of the worker's scheduler. */
export const sleep = (s: WorkerState, ms: number) => delay(s.scheduler, ms);
