// The dispatch worker: turns queued calls into provider calls and provider events into call
// records. One per process; any number of processes may share a database, each holding the calls
// it works on by lease. This file builds the worker's state and ties its parts together:
//   worker/claiming.ts      claim rounds: due calls leased within free slots, fair share, pacing
//   worker/call-session.ts  one call's dial, provider events, alternate number, hang-up, end
//   worker/analysis.ts      summary and outcomes of answered calls (provider's or local)
//   worker/ledger.ts        call writes, group-committed, applied only under this worker's lease
//   worker/leases.ts        renewal on a timer of its own, hand-over on shutdown
//   worker/ownership.ts     the lease proof a dial or hang-up needs; lost calls are left untouched
//   worker/recovery.ts      lost calls of workers that went away: settled, adopted or failed
//   worker/loop.ts          the tick and the loop; worker/shutdown.ts settle, wind-down, drain
import crypto from 'node:crypto';
import os from 'node:os';
import type { AppDeps } from '../deps.ts';
import { applyCallWrites } from '../services/calls/call-transitions.ts';
import type { Analyser } from './analysis/analyser.ts';
import { createLocalAnalyser } from './analysis/local-analyser.ts';
import { WriteQueue } from './store/write-queue.ts';
import { createDialPacer, type DialPacer } from './voice/dial-pacing.ts';
import { defaultProviderRegistry, type ProviderRegistry } from './voice/registry.ts';
import type { VoiceProviderModule } from './voice/provider-module.ts';
import { afterCommit } from './worker/commits.ts';
import { keepLeases } from './worker/leases.ts';
import { exclusive, runLoop, tick, type TickReport } from './worker/loop.ts';
import { drain, handOverProviderAnalyses, settle, windDown } from './worker/shutdown.ts';
import type { WorkerSettings, WorkerState } from './worker/state.ts';

export type { TickReport } from './worker/loop.ts';

export interface WorkerOptions {
  /** Lease owner name; a random suffix keeps two processes started with the same name apart. */
  workerId?: string;
  pollMs?: number;
  leaseMs?: number;
  /** Voice providers by name; default: built from `voiceProviders`. Injected ones are not closed by stop(). */
  providers?: ProviderRegistry;
  /** The providers the default registry offers; default: all this build ships (voice/registry.ts). */
  voiceProviders?: readonly VoiceProviderModule[];
  analyser?: Analyser;
  /** Most calls this worker keeps in flight, over all accounts. */
  maxInFlight?: number;
  /** Most calls taken per claim transaction. */
  claimBatchSize?: number;
  /** How long stop() lets in-flight calls finish before hanging them up. */
  shutdownGraceMs?: number;
  /** Dial pacing slots (per worker process); tests inject one with their own clock. */
  dialPacer?: DialPacer;
}

export interface WorkerStats {
  inFlight: number;
  ending: number;
  analysing: number;
  pendingWrites: number;
}

export interface DispatchWorker {
  readonly id: string;
  /** Runs the loop (polling every pollMs, immediately when a call ends). */
  start(): void;
  /**
   * Stops claiming, lets in-flight calls finish (up to the grace period), then leaves the rest to
   * the next worker when their provider can hand them over (adopt), and hangs up the others.
   */
  stop(opts?: { graceMs?: number }): Promise<void>;
  /** One tick, for tests and operators; does not wait for the calls it dialled. */
  runOnce(): Promise<TickReport>;
  /** Waits until buffered writes and analyses are committed. */
  settle(): Promise<void>;
  /** Ticks until nothing this worker can do is left (no calls in flight, none claimable). */
  drain(opts?: { timeoutMs?: number }): Promise<void>;
  stats(): WorkerStats;
  /** When the loop last finished a tick (Date.now()), or started; 0 before start(). */
  lastTurnAt(): number;
}

/** Parallel write transactions on PostgreSQL (PGlite has one session: they would only queue). */
const WRITE_PARALLELISM = 4;

function defaultWorkerId(configured?: string): string {
  const base = configured || `${os.hostname()}-${process.pid}`;
  return `${base}#${crypto.randomBytes(3).toString('hex')}`;
}

function workerSettings(deps: AppDeps, opts: WorkerOptions): WorkerSettings {
  const leaseMs = opts.leaseMs ?? deps.config.LEASE_MS;
  return {
    id: defaultWorkerId(opts.workerId ?? deps.config.WORKER_ID),
    pollMs: opts.pollMs ?? deps.config.WORKER_POLL_MS,
    leaseMs,
    maxInFlight: opts.maxInFlight ?? 5000,
    claimBatchSize: opts.claimBatchSize ?? 500,
    shutdownGraceMs: opts.shutdownGraceMs ?? leaseMs,
    recoveryBudgetMs: Math.max(100, Math.min(leaseMs / 4, 10_000)),
  };
}

function createWorkerState(deps: AppDeps, opts: WorkerOptions): WorkerState {
  const settings = workerSettings(deps, opts);
  const log = deps.logger.child({ component: 'dispatch', worker: settings.id });
  const s: WorkerState = {
    deps,
    settings,
    clock: deps.clock,
    log,
    logTransitions: log.isLevelEnabled('info'),
    providers: opts.providers ?? defaultProviderRegistry(deps, opts.voiceProviders),
    analyser: opts.analyser ?? createLocalAnalyser(),
    pacer: opts.dialPacer ?? createDialPacer(),
    queue: new WriteQueue({
      apply: (writes) => applyCallWrites(deps, writes, deps.clock.now()),
      parallel: deps.db.kind === 'postgres' ? WRITE_PARALLELISM : 1,
      onCommitted: (writes, result) => afterCommit(s, writes, result),
      onError: (err, attempt) => log.error({ err, attempt }, 'call writes failed; retrying'),
    }),
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
    contexts: new Map(),
    accountProviders: new Map(),
    optOutKeys: new Map(),
    subscriptions: new Map(),
    recoveryRetry: new Map(),
    lastRenewal: 0,
    renewal: null,
    leaseKeepers: 0,
    leaseKeeperTimer: null,
    running: false,
    lastTurnAt: 0,
    stopping: false,
    claiming: Promise.resolve(),
    exclusiveTail: Promise.resolve(),
    claimRotation: 0,
    accountsWithFreedSlots: new Set(),
    claimSoon: false,
    moreWaiting: false,
    wake: null,
  };
  return s;
}

export function createWorker(deps: AppDeps, opts: WorkerOptions = {}): DispatchWorker {
  const s = createWorkerState(deps, opts);
  const ownsProviders = !opts.providers;
  let loopDone: Promise<void> | null = null;
  let releaseLoopKeeper: (() => void) | null = null;
  let removeInFlightSource: (() => void) | null = null;

  return {
    id: s.settings.id,
    start() {
      if (s.running) return;
      s.running = true;
      s.stopping = false;
      s.lastTurnAt = Date.now();
      s.log.info({ pollMs: s.settings.pollMs, leaseMs: s.settings.leaseMs, maxInFlight: s.settings.maxInFlight }, 'dispatch worker started');
      releaseLoopKeeper = keepLeases(s);
      removeInFlightSource = deps.metrics.addInFlightSource(() => s.live.size);
      loopDone = runLoop(s);
    },

    async stop(o = {}) {
      s.stopping = true;
      s.wake?.();
      await loopDone;
      await s.exclusiveTail;
      try {
        await windDown(s, o.graceMs ?? s.settings.shutdownGraceMs);
      } finally {
        releaseLoopKeeper?.();
        releaseLoopKeeper = null;
      }
      // No renewals from here on; whatever else is still in flight keeps its lease, which lapses.
      s.queue.close();
      await handOverProviderAnalyses(s);
      s.running = false;
      removeInFlightSource?.();
      removeInFlightSource = null;
      for (const unsubscribe of s.subscriptions.values()) unsubscribe();
      s.subscriptions.clear();
      if (ownsProviders) await s.providers.close();
      s.log.info({ abandoned: s.live.size }, 'dispatch worker stopped');
    },

    runOnce: () => exclusive(s, () => tick(s, true)),
    settle: () => settle(s),
    drain: (o = {}) => drain(s, o.timeoutMs ?? 20_000),
    lastTurnAt: () => s.lastTurnAt,
    stats: () => ({ inFlight: s.live.size, ending: s.ending.size, analysing: s.analysing.size, pendingWrites: s.queue.size }),
  };
}
