// The dispatch worker: turns queued calls into provider calls and provider events into call
// records. One per process; any number of processes may share a database, each holding the calls
// it works on by lease. This file builds the worker's state and ties its parts together:
//   worker/claiming.ts      claim rounds: due calls leased within free slots, fair share, pacing
//   worker/call-session.ts  one call's dial-time judgement, provider events, what follows a dial's
//                           end; its parts: dial.ts, alternate-dial.ts, hangups.ts, attempt-end.ts
//   worker/route-dial.ts    a dial through the account's provider route: failover, breakers.ts, routes.ts
//   worker/analysis.ts      summary and outcomes of answered calls (provider's or local)
//   worker/ledger.ts        call writes, group-committed, applied only under this worker's lease
//   worker/leases.ts        renewal on a timer of its own, hand-over on shutdown
//   worker/ownership.ts     the lease proof a dial or hang-up needs; lost calls are left untouched
//   worker/recovery.ts      lost calls of workers that went away: settled, adopted or failed
//   worker/loop.ts          the tick and the loop; worker/shutdown.ts settle, wind-down, drain
//   worker/lifecycle.ts     the worker's modes (idle, running, stopping, stopped), asserted moves
//   worker/state.ts         settings, the book of calls, caches, lease keeping, the loop's state
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
import { createLifecycle, type WorkerMode } from './worker/lifecycle.ts';
import { createCaches, createCallBook, createLeaseKeeping, createLoopState, type WorkerSettings, type WorkerState } from './worker/state.ts';
import { realScheduler, type Scheduler } from '../scheduler.ts';

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
  /** Every wait and deadline of the worker and its write queue; tests inject one they advance. */
  scheduler?: Scheduler;
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
  /** When the loop last finished a tick (app clock ms), or started; 0 before start(). */
  lastTurnAt(): number;
  /** How many ticks the loop has finished (each arms the next poll). */
  turns(): number;
  /** Where the worker is in its lifecycle (worker/lifecycle.ts). */
  mode(): WorkerMode;
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
    shortCallSeconds: deps.config.NUMBER_HEALTH_SHORT_CALL_SECONDS,
  };
}

function createWorkerState(deps: AppDeps, opts: WorkerOptions): WorkerState {
  const settings = workerSettings(deps, opts);
  const log = deps.logger.child({ component: 'dispatch', worker: settings.id });
  const scheduler = opts.scheduler ?? realScheduler;
  const s: WorkerState = {
    deps,
    settings,
    clock: deps.clock,
    scheduler,
    log,
    logTransitions: log.isLevelEnabled('info'),
    providers: opts.providers ?? defaultProviderRegistry({ ...deps, scheduler }, opts.voiceProviders),
    analyser: opts.analyser ?? createLocalAnalyser(),
    pacer: opts.dialPacer ?? createDialPacer(() => deps.clock.now().getTime()),
    queue: new WriteQueue({
      apply: (writes) => applyCallWrites(deps, writes, deps.clock.now()),
      parallel: deps.db.kind === 'postgres' ? WRITE_PARALLELISM : 1,
      onCommitted: (writes, result) => afterCommit(s, writes, result),
      onError: (err, attempt) => log.error({ err, attempt }, 'call writes failed; retrying'),
      scheduler,
    }),
    lifecycle: createLifecycle(),
    book: createCallBook(),
    caches: createCaches(),
    leases: createLeaseKeeping(),
    loop: createLoopState(),
  };
  return s;
}

export function createWorker(deps: AppDeps, opts: WorkerOptions = {}): DispatchWorker {
  const s = createWorkerState(deps, opts);
  const ownsProviders = !opts.providers;
  let loopDone: Promise<void> | null = null;
  let stopped: Promise<void> | null = null;
  let releaseLoopKeeper: (() => void) | null = null;
  let removeInFlightSource: (() => void) | null = null;

  async function stop(graceMs: number): Promise<void> {
    s.lifecycle.to('stopping');
    s.loop.wake?.();
    await loopDone;
    await s.loop.exclusiveTail;
    try {
      await windDown(s, graceMs);
    } finally {
      releaseLoopKeeper?.();
      releaseLoopKeeper = null;
    }
    // No renewals from here on; whatever else is still in flight keeps its lease, which lapses.
    s.queue.close();
    await handOverProviderAnalyses(s);
    removeInFlightSource?.();
    removeInFlightSource = null;
    for (const unsubscribe of s.caches.subscriptions.values()) unsubscribe();
    s.caches.subscriptions.clear();
    if (ownsProviders) await s.providers.close();
    s.lifecycle.to('stopped');
    s.log.info({ abandoned: s.book.live.size }, 'dispatch worker stopped');
  }

  return {
    id: s.settings.id,
    start() {
      // Started already, or stopping: nothing to start. A stopped worker is not started again (throws).
      if (s.lifecycle.mode === 'running' || s.lifecycle.mode === 'stopping') return;
      s.lifecycle.to('running');
      s.loop.lastTurnAt = s.clock.now().getTime();
      s.log.info({ pollMs: s.settings.pollMs, leaseMs: s.settings.leaseMs, maxInFlight: s.settings.maxInFlight }, 'dispatch worker started');
      releaseLoopKeeper = keepLeases(s);
      removeInFlightSource = deps.metrics.addInFlightSource(() => s.book.live.size);
      loopDone = runLoop(s);
    },
    // A second stop() waits for the first.
    stop: (o = {}) => (stopped ??= stop(o.graceMs ?? s.settings.shutdownGraceMs)),
    runOnce: () => exclusive(s, () => tick(s, true)),
    settle: () => settle(s),
    drain: (o = {}) => drain(s, o.timeoutMs ?? 20_000),
    lastTurnAt: () => s.loop.lastTurnAt,
    turns: () => s.loop.turns,
    mode: () => s.lifecycle.mode,
    stats: () => ({ inFlight: s.book.live.size, ending: s.book.ending.size, analysing: s.book.analysing.size, pendingWrites: s.queue.size }),
  };
}
