// The dispatch worker: turns queued calls into provider calls and provider events into call records.
//
// One loop per process (any number of processes may share a database):
//   tick     = start due scheduled batches, renew own leases, recover other workers' expired
//              leases, hang up calls that ran too long or whose batch was cancelled, claim calls;
//   events   = provider events become call writes, buffered for a moment and committed in groups
//              (WriteQueue), each with its counter update and history row;
//   analysis = ended, answered calls get transcript_status pending -> processing -> ready (or
//              failed) with summary and outcomes; the recording is stored with `processing`.
//              A provider that analyses its own calls (Retell) supplies them; otherwise the
//              local analyser reads the transcript.
// Dials are paced per from-number when the account's provider asks for it: the claim takes only
// the calls that may start now, so a claimed (dialled) call does not wait for its turn.
// A call ending frees its slot at once: the loop claims again without waiting for the next poll.
//
// Leases are kept alive by a timer of their own while the worker runs (and during recovery), so
// no slow step of a tick - a provider taking its time over a dial or a lookup - lets them lapse.
// Recovery asks providers about lost calls a few at a time, within a time budget per round, and a
// call the provider could not tell about is asked again later with backoff, not every round.

import crypto from 'node:crypto';
import os from 'node:os';
import type { Logger } from 'pino';
import type { AppDeps } from '../deps.ts';
import { canTransitionCall, isTerminalCall, type CallStatus } from '../domain/call-state.ts';
import { applyCallWrites, sweepFinishedBatches, type ApplyCallWritesResult, type CallWrite } from '../services/call-transitions.ts';
import {
  accountsWithWaitingCalls,
  claimCalls,
  startDueBatches,
  type ClaimedCall,
  type ClaimInput,
} from '../services/claim-calls.ts';
import { loadDispatchContexts, type DispatchContext } from '../services/dispatch-context.ts';
import { accountProviders } from '../services/provider-config.ts';
import {
  adoptLostCall,
  batchStatuses,
  findLostCalls,
  renewLeases,
  expireLeasesNow,
  requeueExpiredUndialled,
  takeOverStaleAnalysis,
  type LostCall,
} from '../services/lease-recovery.ts';
import type { Analyser } from './analysis/analyser.ts';
import { createLocalAnalyser } from './analysis/local-analyser.ts';
import { alternateDialWrite, endedWrite, lostCallWrite, transcriptWrite, type CallRef } from './call-writes.ts';
import { createDialPacer, type DialPacer } from './voice/dial-pacing.ts';
import {
  DialRejectedError,
  type CallEndResult,
  type HangupReason,
  type PlaceCallRequest,
  type ProviderAnalysis,
  type ProviderCallEvent,
  type ProviderCallRef,
  type VoiceProvider,
} from './voice/provider.ts';
import { defaultProviderRegistry, type ProviderRegistry } from './voice/registry.ts';
import { WriteQueue } from './write-queue.ts';

export interface WorkerOptions {
  /** Lease owner name; a random suffix keeps two processes started with the same name apart. */
  workerId?: string;
  pollMs?: number;
  leaseMs?: number;
  /** Voice providers by name; default: the simulator from config. Injected ones are not closed by stop(). */
  providers?: ProviderRegistry;
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

export interface TickReport {
  /** Scheduled (or pending immediate) batches that started dispatching. */
  started: number;
  claimed: number;
  /** More calls are waiting than this tick could take. */
  more: boolean;
  requeued: number;
  settled: number;
  analysisRecovered: number;
  hungUp: number;
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
}

interface LiveCall extends CallRef {
  ctx: DispatchContext;
  provider: VoiceProvider | null;
  providerCallId: string | null;
  /** Status as last written (or queued to be written). */
  status: CallStatus;
  number: string;
  alternatePhone: string | null;
  usedAlternate: boolean;
  attempts: number;
  /** Start of the current dial, for the max-duration rule. */
  dialledAt: Date;
  answered: boolean;
  /** When it was answered, if known (an adopted call may have been answered unseen). */
  answeredAt: Date | null;
  hangup: { reason: HangupReason; at: Date } | null;
  contact: PlaceCallRequest['contact'];
}

interface AnalysisJob extends CallRef {
  status: CallStatus;
  hangupBy: string | null;
  transcript: string;
  contactName: string | null;
  metadata: Record<string, unknown>;
  outcomeKeys: string[];
  callbackUrl: string | null | undefined;
  /** Held back from the end write; undefined when unknown (analysis taken over from another worker). */
  recording?: CallEndResult['recording'];
  recordingEnabled: boolean;
  /** Set when the call's provider analyses it (its analysis replaces the local analyser's). */
  providerAnalysis: { provider: VoiceProvider; providerCallId: string } | null;
}

const ALTERNATE_AFTER: ReadonlySet<string> = new Set(['no_answer', 'busy', 'failed']);
/** Failures of our own making or of the account (DialRejectedError): the alternate number would fail the same way. */
const NO_ALTERNATE_REASONS: ReadonlySet<string> = new Set([
  'no_caller_id',
  'provider_unavailable',
  'provider_not_configured',
  'provider_auth_failed',
  'payment_required',
]);
const CONTEXT_CACHE_MAX = 2000;
const WRITE_PARALLELISM = 4;
const PROVIDER_ID_DEFER_MS = 250;
const ANALYSIS_GROUP = 500;
const ANALYSIS_PARALLEL = 3;
/** How long an account's provider name is trusted before it is read again (pacing). */
const ACCOUNT_PROVIDER_TTL_MS = 10_000;
/** How long recovery keeps asking a failing provider about a lost call before failing it as lost. */
const LOOKUP_PATIENCE_MS = 10 * 60_000;
/** Lost calls whose provider is asked at the same time, per recovery round. */
const RECOVERY_PARALLEL = 8;
/** A lost call the provider could not tell about is asked again after this, doubling up to the max. */
const RECOVERY_RETRY_BASE_MS = 5_000;
const RECOVERY_RETRY_MAX_MS = 2 * 60_000;

class RecoveryDeadline extends Error {
  override name = 'RecoveryDeadline';
}

export function defaultWorkerId(configured?: string): string {
  const base = configured || `${os.hostname()}-${process.pid}`;
  return `${base}#${crypto.randomBytes(3).toString('hex')}`;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** `p`, or a RecoveryDeadline rejection once Date.now() reaches `deadline` (p runs on, ignored). */
function beforeDeadline<T>(p: Promise<T>, deadline: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new RecoveryDeadline('provider did not answer within the recovery round')), Math.max(0, deadline - Date.now()));
  });
  p.catch(() => undefined);
  return Promise.race([p, expired]).finally(() => clearTimeout(timer));
}

/** Resolves with `p` or after `ms`, whichever comes first. */
function atMost(p: Promise<unknown>, ms: number): Promise<unknown> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([p, new Promise<void>((r) => (timer = setTimeout(r, ms)))]).finally(() => clearTimeout(timer));
}

/** Runs `fn` over `items`, at most `parallel` at a time. */
async function forEachLimited<T>(items: T[], parallel: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(parallel, items.length) }, lane));
}

export function createWorker(deps: AppDeps, opts: WorkerOptions = {}): DispatchWorker {
  const id = defaultWorkerId(opts.workerId ?? deps.config.WORKER_ID);
  const pollMs = opts.pollMs ?? deps.config.WORKER_POLL_MS;
  const leaseMs = opts.leaseMs ?? deps.config.LEASE_MS;
  const maxInFlight = opts.maxInFlight ?? 5000;
  const claimBatchSize = opts.claimBatchSize ?? 500;
  const shutdownGraceMs = opts.shutdownGraceMs ?? leaseMs;
  const ownsProviders = !opts.providers;
  const providers = opts.providers ?? defaultProviderRegistry(deps);
  const analyser = opts.analyser ?? createLocalAnalyser();
  const clock = deps.clock;
  const log: Logger = deps.logger.child({ component: 'dispatch', worker: id });

  const live = new Map<string, LiveCall>();
  const byProviderCall = new Map<string, LiveCall>();
  /** Events that arrived before placeCall returned the provider call id. */
  const early = new Map<string, Array<ProviderCallEvent & { providerCallId: string }>>();
  /** Ended calls whose final write is queued but not committed yet (their lease is still ours). */
  const ending = new Set<string>();
  /** Ended calls whose analysis is outstanding (lease still ours). */
  const analysing = new Set<string>();
  const analysisQueue: AnalysisJob[] = [];
  const contexts = new Map<string, DispatchContext>();
  const subscriptions = new Map<VoiceProvider, () => void>();
  /** Calls whose provider analysis is being awaited (they hold no analysis group slot). */
  const providerAnalysing = new Set<string>();
  const pacer = opts.dialPacer ?? createDialPacer();
  const accountProvider = new Map<string, { name: string; at: number }>();
  /** Lost calls recovery could not settle yet, and when (app clock, ms) to ask about them again. */
  const recoveryRetry = new Map<string, { at: number; failures: number }>();
  /** Provider I/O of one recovery round stops this long after it started: well within a lease. */
  const recoveryBudgetMs = Math.max(100, Math.min(leaseMs / 4, 10_000));

  let running = false;
  let stopping = false;
  let analysisGroups = 0;
  /** Settles when the latest claim round is done (analysis lets it go first). */
  let claiming: Promise<void> = Promise.resolve();
  let dialsInFlight = 0;
  let lastRenewal = 0;
  let renewal: Promise<void> | null = null;
  let keepers = 0;
  let keeperTimer: ReturnType<typeof setInterval> | null = null;
  let rotate = 0;
  let serial: Promise<unknown> = Promise.resolve();
  let wake: (() => void) | null = null;
  let loopDone: Promise<void> | null = null;
  let claimSoon = false;
  /** Accounts whose calls ended since the last claim round. */
  const kicked = new Set<string>();
  /** The last round stopped at its budget: the next one looks at every account again. */
  let moreWaiting = false;

  const transitionLogging = log.isLevelEnabled('info');

  const queue = new WriteQueue({
    apply: (writes) => applyCallWrites(deps, writes, clock.now()),
    // PGlite has one session: parallel transactions would only queue behind each other.
    parallel: deps.db.kind === 'postgres' ? WRITE_PARALLELISM : 1,
    onCommitted: (writes, result) => onCommitted(writes, result),
    onError: (err, attempt) => log.error({ err, attempt }, 'call writes failed; retrying'),
  });

  /** Serialises ticks and claim rounds of this worker. */
  function exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = serial.then(fn, fn);
    serial = run.catch(() => undefined);
    return run;
  }

  function onCommitted(writes: CallWrite[], result: ApplyCallWritesResult) {
    const freed = new Set<string>();
    for (const w of writes) {
      if (!result.applied.has(w.callId)) continue;
      if (isTerminalCall(w.to) && !isTerminalCall(w.from)) freed.add(w.accountId);
      if (transitionLogging) {
        for (const e of w.events) {
          log.info({ callId: w.callId, batchId: w.batchId, accountId: w.accountId, from: e.from, to: e.to, at: e.at, ...e.detail }, 'call transition');
        }
        if (w.set.transcriptStatus) log.info({ callId: w.callId, batchId: w.batchId, transcriptStatus: w.set.transcriptStatus }, 'call analysis');
      }
    }
    for (const b of result.finishedBatches) {
      log.info({ batchId: b.id, status: b.status, completedAt: b.completedAt }, b.status === 'cancelled' ? 'cancelled batch drained' : 'batch completed');
      contexts.delete(b.id);
    }
    if (freed.size > 0) kick(freed);
  }

  function providerFor(ctx: DispatchContext): VoiceProvider {
    return subscribed(providers.get(ctx.provider));
  }

  function subscribed(p: VoiceProvider): VoiceProvider {
    if (!subscriptions.has(p)) subscriptions.set(p, p.onEvent((e) => onProviderEvent(e)));
    return p;
  }

  async function ensureContexts(batchIds: string[]) {
    const missing = [...new Set(batchIds)].filter((b) => !contexts.has(b));
    if (missing.length === 0) return;
    if (contexts.size + missing.length > CONTEXT_CACHE_MAX) {
      const inUse = new Set([...live.values()].map((c) => c.batchId));
      for (const k of contexts.keys()) if (!inUse.has(k)) contexts.delete(k);
    }
    const loaded = await loadDispatchContexts(deps, missing);
    for (const [k, v] of loaded) {
      contexts.set(k, v);
      accountProvider.set(v.accountId, { name: v.provider, at: Date.now() });
    }
  }

  // ---- writes -------------------------------------------------------------------------------

  /** Queues a write; a batch known to have no callback_url spares the transaction an outbox lookup. */
  function enqueue(w: CallWrite, callbackUrl: string | null | undefined, opts?: { deferMs?: number }): Promise<boolean> {
    return queue.enqueue(callbackUrl === null ? { ...w, webhooks: false } : w, opts);
  }

  /** Recorded as reported: the provider is the authority on what happened, the rule flags surprises. */
  function checkTransition(call: LiveCall, from: CallStatus, to: CallStatus) {
    if (!canTransitionCall(from, to)) log.warn({ callId: call.callId, from, to }, 'provider reported an unexpected call transition');
  }

  function transition(call: LiveCall, to: CallStatus, at: Date, detail?: Record<string, unknown>) {
    const from = call.status;
    checkTransition(call, from, to);
    call.status = to;
    void enqueue({ ...ref(call), owner: id, from, to, events: [{ from, to, at, detail }], set: {} }, call.ctx.callbackUrl).then((ok) => {
      if (!ok) lostOwnership(call, 'transition');
    });
  }

  const ref = (c: CallRef): CallRef => ({ callId: c.callId, batchId: c.batchId, accountId: c.accountId });

  /** Our write did not apply: someone else settled the call (our lease lapsed). Stop caring about it. */
  function lostOwnership(call: LiveCall, during: string) {
    if (live.get(call.callId) !== call) return;
    log.warn({ callId: call.callId, batchId: call.batchId, during }, 'call no longer leased by this worker; abandoning it');
    forget(call);
    if (call.provider && call.providerCallId) {
      call.provider.hangup(call.providerCallId, 'shutdown', { accountId: call.accountId }).catch((err) => log.warn({ err, callId: call.callId }, 'hangup failed'));
    }
  }

  function forget(call: LiveCall) {
    live.delete(call.callId);
    if (call.providerCallId) byProviderCall.delete(call.providerCallId);
  }

  // ---- dialling -----------------------------------------------------------------------------

  function request(call: LiveCall): PlaceCallRequest {
    return {
      callId: call.callId,
      batchId: call.batchId,
      accountId: call.accountId,
      attempt: call.attempts,
      from: call.ctx.from ?? '',
      to: call.number,
      agent: call.ctx.agent,
      prompt: call.ctx.prompt,
      contact: call.contact,
      recordingEnabled: call.ctx.recordingEnabled,
      interruption: call.ctx.interruption,
      maxDurationSeconds: call.ctx.maxDurationSeconds,
    };
  }

  /** A dial that never reached the provider ends the call like a failed dial would. */
  function failedDial(call: LiveCall, reason: string, detail?: Record<string, unknown>): CallEndResult {
    const now = clock.now();
    return {
      status: 'failed',
      hangupBy: 'system',
      disconnectReason: reason,
      startedAt: call.dialledAt,
      answeredAt: null,
      endedAt: now,
      transcript: null,
      recording: null,
      ...(detail ? { detail } : {}),
    };
  }

  /** The dial's pacing slot (normally free at once: the claim only took calls that may start now). */
  async function waitForDialSlot(call: LiveCall, provider: VoiceProvider) {
    if (!provider.dialRate || !call.ctx.from) return;
    const rate = await provider.dialRate(call.accountId);
    const wait = pacer.take(call.ctx.from, rate);
    if (wait <= 0) return;
    await sleep(wait);
    // The max-duration clock starts when the call is really placed.
    call.dialledAt = clock.now();
  }

  async function place(call: LiveCall) {
    if (!call.ctx.from) return onEnded(call, failedDial(call, 'no_caller_id'));
    let provider: VoiceProvider;
    try {
      provider = providerFor(call.ctx);
    } catch (err) {
      log.error({ err, callId: call.callId, provider: call.ctx.provider }, 'voice provider unavailable');
      return onEnded(call, failedDial(call, 'provider_unavailable'));
    }
    call.provider = provider;
    dialsInFlight += 1;
    try {
      await waitForDialSlot(call, provider);
      if (live.get(call.callId) !== call) return;
      const { providerCallId } = await provider.placeCall(request(call));
      if (live.get(call.callId) !== call) {
        // Abandoned while dialling (lease lost): the provider call must not run on unobserved.
        await provider.hangup(providerCallId, 'shutdown', { accountId: call.accountId }).catch(() => undefined);
        return;
      }
      call.providerCallId = providerCallId;
      byProviderCall.set(providerCallId, call);
      // Recorded with the call's next change, or on its own shortly after: it only matters for
      // recovery (provider lookup), which starts a lease length later anyway.
      const idWrite: CallWrite = { ...ref(call), owner: id, from: call.status, to: call.status, events: [], set: { providerCallId } };
      void enqueue(idWrite, call.ctx.callbackUrl, { deferMs: PROVIDER_ID_DEFER_MS }).then((ok) => {
        if (!ok) lostOwnership(call, 'provider id');
      });
      if (call.hangup) await provider.hangup(providerCallId, call.hangup.reason, { accountId: call.accountId }).catch(() => undefined);
      const buffered = early.get(providerCallId);
      if (buffered) {
        early.delete(providerCallId);
        for (const e of buffered) onProviderEvent(e);
      }
    } catch (err) {
      if (err instanceof DialRejectedError) {
        log.warn({ callId: call.callId, reason: err.disconnectReason, message: err.message }, 'provider rejected the call');
        onEnded(call, failedDial(call, err.disconnectReason, err.detail));
      } else {
        log.warn({ err, callId: call.callId }, 'dial failed');
        onEnded(call, failedDial(call, 'dial_error', { error: err instanceof Error ? err.message : String(err) }));
      }
    } finally {
      dialsInFlight -= 1;
    }
  }

  async function dialClaimed(c: ClaimedCall): Promise<void> {
    const ctx = contexts.get(c.batchId);
    if (!ctx) {
      // The batch vanished (deleted with its account). Left alone, the lease lapses and recovery settles it.
      log.error({ callId: c.id, batchId: c.batchId }, 'claimed call without batch settings; not dialled');
      return;
    }
    const call: LiveCall = {
      callId: c.id,
      batchId: c.batchId,
      accountId: c.accountId,
      ctx,
      provider: null,
      providerCallId: null,
      status: 'ringing',
      number: c.phoneNumber,
      alternatePhone: c.alternatePhone,
      usedAlternate: false,
      attempts: c.attempts,
      dialledAt: c.dialledAt,
      answered: false,
      answeredAt: null,
      hangup: null,
      contact: { externalId: c.externalId, name: c.name, metadata: c.metadata },
    };
    live.set(call.callId, call);
    if (transitionLogging) log.info({ callId: c.id, batchId: c.batchId, from: 'queued', to: 'ringing', number: c.phoneNumber, attempt: c.attempts }, 'call transition');
    return place(call);
  }

  // ---- provider events ----------------------------------------------------------------------

  function onProviderEvent(e: ProviderCallEvent & { providerCallId: string }) {
    const call = byProviderCall.get(e.providerCallId);
    if (!call) {
      // placeCall has not returned yet for a provider that reports eagerly; keep the event briefly.
      if (dialsInFlight > 0) {
        const list = early.get(e.providerCallId) ?? [];
        list.push(e);
        early.set(e.providerCallId, list);
        setTimeout(() => early.delete(e.providerCallId), 60_000).unref?.();
      }
      return;
    }
    switch (e.type) {
      case 'ringing':
        if (call.status === 'queued') transition(call, 'ringing', e.at);
        return;
      case 'answered':
        call.answered = true;
        call.answeredAt = e.at;
        transition(call, 'answered', e.at);
        transition(call, 'in_progress', e.at);
        return;
      case 'ended':
        byProviderCall.delete(e.providerCallId);
        onEnded(call, e.result);
        return;
    }
  }

  function onEnded(call: LiveCall, result: CallEndResult) {
    if (live.get(call.callId) !== call) return;
    if (
      call.ctx.useAlternateNumber &&
      call.alternatePhone &&
      call.alternatePhone !== call.number &&
      !call.usedAlternate &&
      !call.answered &&
      result.answeredAt === null &&
      ALTERNATE_AFTER.has(result.status) &&
      !NO_ALTERNATE_REASONS.has(result.disconnectReason) &&
      !call.hangup &&
      !stopping
    ) {
      void dialAlternate(call, result);
      return;
    }
    forget(call);
    ending.add(call.callId);
    const from = call.status;
    checkTransition(call, from, result.status);
    call.status = result.status;
    const byProvider = call.provider?.analyse && call.providerCallId ? { provider: call.provider, providerCallId: call.providerCallId } : null;
    const { write, needsAnalysis } = endedWrite(ref(call), id, from, result, call.number, {
      detail: call.hangup ? { hangup_reason: call.hangup.reason } : undefined,
      recordingWithAnalysis: true,
      providerAnalysis: !!byProvider,
    });
    void enqueue(write, call.ctx.callbackUrl).then((ok) => {
      ending.delete(call.callId);
      if (!ok) {
        log.warn({ callId: call.callId, batchId: call.batchId }, 'call end not recorded: call no longer leased by this worker');
        return;
      }
      if (needsAnalysis) {
        analyse({
          ...ref(call),
          status: result.status,
          hangupBy: result.hangupBy,
          transcript: result.transcript ?? '',
          contactName: call.contact.name,
          metadata: call.contact.metadata,
          outcomeKeys: call.ctx.agent.outcomeKeys,
          callbackUrl: call.ctx.callbackUrl,
          recording: result.recording,
          recordingEnabled: call.ctx.recordingEnabled,
          providerAnalysis: byProvider,
        });
      }
    });
  }

  async function dialAlternate(call: LiveCall, previous: CallEndResult) {
    const alternate = call.alternatePhone!;
    const from = call.status;
    const write = alternateDialWrite(ref(call), id, from, { number: call.number, result: previous }, alternate, call.attempts + 1);
    const previousNumber = call.number;
    call.number = alternate;
    call.usedAlternate = true;
    call.attempts += 1;
    call.providerCallId = null;
    call.dialledAt = clock.now();
    // The durable record of this dial commits before the dial: a crash in between never redials.
    const ok = await enqueue(write, call.ctx.callbackUrl);
    if (!ok) return lostOwnership(call, 'alternate dial');
    if (transitionLogging) log.info({ callId: call.callId, batchId: call.batchId, number: alternate, previousNumber, previousStatus: previous.status }, 'dialling alternate number');
    await place(call);
  }

  // ---- analysis -----------------------------------------------------------------------------

  /** The call's analysis: the provider's own when it makes one, else the local analyser's. */
  function analyse(job: AnalysisJob) {
    analysing.add(job.callId);
    if (job.providerAnalysis) {
      void analyseWithProvider(job, job.providerAnalysis);
      return;
    }
    analysisQueue.push(job);
    pumpAnalysis();
  }

  /**
   * Waits for the provider's analysis (it may take minutes) outside the analysis groups, so local
   * analyses never queue behind it. processing is written first, ready/failed once it is known.
   */
  async function analyseWithProvider(j: AnalysisJob, by: NonNullable<AnalysisJob['providerAnalysis']>) {
    providerAnalysing.add(j.callId);
    try {
      const started = await enqueue(transcriptWrite(ref(j), id, j.status, { transcriptStatus: 'processing', recording: j.recording }), j.callbackUrl);
      if (!started) return;
      let a: ProviderAnalysis | null;
      try {
        a = await by.provider.analyse!({
          accountId: j.accountId,
          providerCallId: by.providerCallId,
          outcomeKeys: j.outcomeKeys,
          wantRecording: j.recordingEnabled && !j.recording,
        });
      } catch (err) {
        // Provider closed (shutdown): the lease lapses and another worker takes the analysis over.
        log.warn({ err, callId: j.callId }, 'provider analysis interrupted; left to lease recovery');
        return;
      }
      const write = a
        ? transcriptWrite(ref(j), id, j.status, {
            transcriptStatus: 'ready',
            ...(a.summary !== null ? { summary: a.summary } : {}),
            outcomes: a.outcomes,
            ...(a.recording ? { recording: a.recording } : {}),
          })
        : transcriptWrite(ref(j), id, j.status, { transcriptStatus: 'failed' });
      if (!a) log.warn({ callId: j.callId, providerCallId: by.providerCallId }, 'provider has no analysis for the call');
      await enqueue(write, j.callbackUrl);
    } catch (err) {
      log.error({ err, callId: j.callId }, 'provider analysis failed');
    } finally {
      analysing.delete(j.callId);
      providerAnalysing.delete(j.callId);
    }
  }

  /**
   * Runs analysis groups, a few at a time, so analysis keeps pace with calls ending. A group starts
   * after the claim round under way (the one the same call endings triggered): refilling the freed
   * slots comes first, the transcript can wait a few milliseconds.
   */
  function pumpAnalysis() {
    while (analysisGroups < ANALYSIS_PARALLEL && analysisQueue.length > 0) {
      analysisGroups += 1;
      const jobs = analysisQueue.splice(0, ANALYSIS_GROUP);
      void new Promise<void>((r) => setImmediate(r))
        .then(() => claiming)
        .then(() => analyseGroup(jobs))
        .catch((err) => log.error({ err }, 'call analysis group failed'))
        .finally(() => {
          analysisGroups -= 1;
          pumpAnalysis();
        });
    }
  }

  async function analyseGroup(jobs: AnalysisJob[]) {
    const started = await Promise.all(
      jobs.map((j) => enqueue(transcriptWrite(ref(j), id, j.status, { transcriptStatus: 'processing', recording: j.recording }), j.callbackUrl)),
    );
    await Promise.all(
      jobs.map(async (j, i) => {
        if (!started[i]) {
          analysing.delete(j.callId);
          return;
        }
        let write: CallWrite;
        try {
          // A transcript lost with a crashed worker cannot be analysed.
          if (!j.transcript) throw new Error('no transcript stored for the call');
          const r = await analyser.analyse({
            transcript: j.transcript,
            outcomeKeys: j.outcomeKeys,
            contactMetadata: j.metadata,
            callStatus: j.status,
            hangupBy: j.hangupBy,
            contactName: j.contactName,
          });
          write = transcriptWrite(ref(j), id, j.status, { transcriptStatus: 'ready', summary: r.summary, outcomes: r.outcomes });
        } catch (err) {
          log.warn({ err, callId: j.callId }, 'call analysis failed');
          write = transcriptWrite(ref(j), id, j.status, { transcriptStatus: 'failed' });
        }
        await enqueue(write, j.callbackUrl);
        analysing.delete(j.callId);
      }),
    );
  }

  // ---- tick ---------------------------------------------------------------------------------

  function heldIds(): string[] {
    return [...live.keys(), ...ending, ...analysing];
  }

  /** Renews this worker's leases when a third of a lease has passed since the last renewal. */
  function renewIfDue(now: Date): Promise<void> {
    // One renewal at a time (the tick and the keeper may both ask).
    renewal ??= renewIfDue0(now).finally(() => {
      renewal = null;
    });
    return renewal;
  }

  async function renewIfDue0(now: Date) {
    const ids = heldIds();
    if (ids.length === 0 || now.getTime() - lastRenewal < leaseMs / 3) {
      if (ids.length === 0) lastRenewal = now.getTime();
      return;
    }
    const liveBefore = new Map(live);
    const held = await renewLeases(deps, id, ids, new Date(now.getTime() + leaseMs));
    lastRenewal = now.getTime();
    // Only a call still in flight can have lost its lease to another worker: ended ones may simply
    // have released theirs meanwhile, and their own writes notice if they were taken over.
    for (const [callId, call] of liveBefore) {
      if (!held.has(callId) && live.get(callId) === call) lostOwnership(call, 'lease renewal');
    }
  }

  /**
   * Keeps leases renewed on a timer for as long as someone holds it (the running loop, a recovery
   * round): a tick stuck in a slow provider must not let this worker's own calls go to others.
   * Returns the release function.
   */
  function keepLeases(): () => void {
    keepers += 1;
    if (!keeperTimer) {
      keeperTimer = setInterval(
        () => void renewIfDue(clock.now()).catch((err) => log.warn({ err }, 'lease renewal failed')),
        Math.max(20, Math.min(leaseMs / 6, 5_000)),
      );
      keeperTimer.unref?.();
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      keepers -= 1;
      if (keepers === 0 && keeperTimer) {
        clearInterval(keeperTimer);
        keeperTimer = null;
      }
    };
  }

  /**
   * Settles or adopts dialled calls of workers that went away. The provider is asked about a few
   * at a time and only until the round's budget is spent: the rest wait for the next round. A call
   * it could not tell about (error, no answer in time, batch settings missing) is skipped with
   * backoff, so the same failing calls neither hammer the provider nor crowd out the others.
   */
  async function recoverLost(now: Date): Promise<number> {
    const nowMs = now.getTime();
    const waiting: string[] = [];
    for (const [callId, r] of recoveryRetry) {
      if (r.at > nowMs) waiting.push(callId);
      // Long overdue and not seen since: settled elsewhere.
      else if (nowMs - r.at > RECOVERY_RETRY_MAX_MS) recoveryRetry.delete(callId);
    }
    const lost = await findLostCalls(deps, now, [...heldIds(), ...waiting]);
    if (lost.length === 0) return 0;
    await ensureContexts(lost.map((l) => l.batchId)).catch((err) => log.warn({ err }, 'could not load batch settings of lost calls'));
    const deadline = Date.now() + recoveryBudgetMs;
    const writes: CallWrite[] = [];
    let adopted = 0;
    let deferred = 0;
    const release = keepLeases();
    try {
      await forEachLimited(lost, RECOVERY_PARALLEL, async (l) => {
        if (Date.now() >= deadline || stopping) {
          deferred += 1;
          return;
        }
        const r = await recoverCall(l, now, deadline);
        if (r === null) {
          retryLater(l.id, nowMs);
          return;
        }
        recoveryRetry.delete(l.id);
        if (r === 'adopted') adopted += 1;
        else writes.push(r);
      });
    } finally {
      release();
    }
    if (deferred > 0) log.info({ deferred }, 'recovery round budget spent; remaining lost calls wait for the next round');
    const result = await applyCallWrites(deps, writes, now);
    onCommitted(writes, result);
    for (const l of lost) {
      if (result.applied.has(l.id)) log.warn({ callId: l.id, batchId: l.batchId, previousWorker: l.leaseOwner, status: l.status }, 'recovered call of a lost worker');
    }
    return result.applied.size + adopted;
  }

  function retryLater(callId: string, nowMs: number) {
    const failures = (recoveryRetry.get(callId)?.failures ?? 0) + 1;
    const delay = Math.min(RECOVERY_RETRY_MAX_MS, RECOVERY_RETRY_BASE_MS * 2 ** (failures - 1));
    recoveryRetry.set(callId, { at: nowMs + delay, failures });
  }

  function knownProvider(name: string): VoiceProvider | null {
    try {
      return providers.has(name) ? providers.get(name) : null;
    } catch {
      return null;
    }
  }

  /**
   * A dialled call whose worker died: settled with the provider's result when it ended, adopted
   * (watched from here on) when the provider still has it in flight and can report on it, failed
   * as dispatcher_lost when nobody can tell how it went. Never dialled again. null: try later.
   * Provider answers count only if they come before `deadline` (Date.now() ms).
   */
  async function recoverCall(l: LostCall, now: Date, deadline: number): Promise<CallWrite | 'adopted' | null> {
    const r: CallRef = { callId: l.id, batchId: l.batchId, accountId: l.accountId };
    const ctx = contexts.get(l.batchId);
    const provider = knownProvider(l.provider);
    const patient = now.getTime() - l.leaseExpiresAt.getTime() < LOOKUP_PATIENCE_MS;
    if (provider?.lookup) {
      // A call still talking is adopted, which needs its batch's settings: without them (not
      // loadable right now), later - failing it would leave it running unobserved.
      if (provider.adopt && !ctx && patient) return null;
      const callRef: ProviderCallRef = { callId: l.id, accountId: l.accountId, attempt: l.attempts, recordingEnabled: ctx?.recordingEnabled ?? false };
      try {
        // The worker may have died between the provider accepting the call and storing its id.
        const providerCallId = l.providerCallId ?? (provider.findCall ? await beforeDeadline(provider.findCall(callRef), deadline) : null);
        const found = providerCallId ? await beforeDeadline(provider.lookup(providerCallId, callRef), deadline) : ({ state: 'unknown' } as const);
        if (found.state === 'ended') {
          // The lease stays (expired) when analysis is due: takeOverStaleAnalysis picks it up.
          const { write } = endedWrite(r, l.leaseOwner, l.status, found.result, l.dialedNumber, {
            leaseExpiredBefore: now,
            detail: { recovered: true, previous_worker: l.leaseOwner, worker: id },
            providerAnalysis: !!provider.analyse,
            ...(l.providerCallId ? {} : { providerCallId: providerCallId! }),
          });
          return write;
        }
        if (found.state === 'in_flight') {
          if (provider.adopt && ctx) {
            const taken = await adopt(l, ctx, provider, providerCallId!, found.answeredAt ?? null);
            return taken ? 'adopted' : null;
          }
          // Its events go to the process that died; nobody could record the rest of it.
          await beforeDeadline(provider.hangup(providerCallId!, 'shutdown', { accountId: l.accountId }), deadline).catch((err) =>
            log.warn({ err, callId: l.id }, 'could not hang up a lost call'),
          );
        }
      } catch (err) {
        // The provider knows how the call went: ask again later rather than guess, for a while.
        if (patient) {
          log.warn({ err, callId: l.id }, 'provider lookup failed; asking again later');
          return null;
        }
        log.warn({ err, callId: l.id }, 'provider lookup kept failing; settling the call as lost');
      }
    }
    return lostCallWrite(r, l, now, id);
  }

  /** Takes over a lost call the provider still has in flight: new lease, then watched like our own. */
  async function adopt(l: LostCall, ctx: DispatchContext, provider: VoiceProvider, providerCallId: string, answeredAt: Date | null): Promise<boolean> {
    // The lease runs from now, not from the start of a round that may have taken a while.
    const now = clock.now();
    const taken = await adoptLostCall(deps, l, {
      workerId: id,
      now,
      leaseMs,
      providerCallId,
      detail: { event: 'adopted', provider_call_id: providerCallId, previous_worker: l.leaseOwner, worker: id },
    });
    if (!taken) return false;
    subscribed(provider);
    const call: LiveCall = {
      callId: l.id,
      batchId: l.batchId,
      accountId: l.accountId,
      ctx,
      provider,
      providerCallId,
      status: l.status,
      number: l.dialedNumber ?? l.phoneNumber,
      alternatePhone: l.alternatePhone,
      usedAlternate: l.usedAlternate,
      attempts: l.attempts,
      // The max-duration clock runs from the real dial, not from the answer or the adoption.
      dialledAt: l.dialledAt ?? answeredAt ?? now,
      answered: l.status !== 'ringing',
      answeredAt,
      hangup: null,
      contact: { externalId: l.externalId, name: l.name, metadata: l.metadata },
    };
    live.set(call.callId, call);
    byProviderCall.set(providerCallId, call);
    if (!call.answered && answeredAt) {
      // Answered while nobody was watching.
      call.answered = true;
      call.answeredAt = answeredAt;
      transition(call, 'answered', answeredAt);
      transition(call, 'in_progress', answeredAt);
    }
    log.warn({ callId: l.id, batchId: l.batchId, previousWorker: l.leaseOwner, providerCallId, status: call.status }, 'adopted in-flight call of a lost worker');
    try {
      await provider.adopt!(providerCallId, request(call), { answered: call.answered, dialledAt: call.dialledAt });
    } catch (err) {
      // Still ours: the max-duration rule hangs it up and ends it if the provider never reports.
      log.error({ err, callId: l.id }, 'provider could not take over the call');
    }
    return true;
  }

  async function recoverAnalysis(now: Date): Promise<number> {
    const stale = await takeOverStaleAnalysis(deps, id, now, leaseMs);
    if (stale.length === 0) return 0;
    await ensureContexts(stale.map((s) => s.batchId));
    for (const s of stale) {
      const ctx = contexts.get(s.batchId);
      const provider = ctx ? knownProvider(ctx.provider) : null;
      analyse({
        callId: s.id,
        batchId: s.batchId,
        accountId: s.accountId,
        status: s.status,
        hangupBy: s.hangupBy,
        transcript: s.transcript ?? '',
        contactName: s.name,
        metadata: s.metadata,
        outcomeKeys: ctx?.agent.outcomeKeys ?? [],
        callbackUrl: ctx?.callbackUrl,
        recordingEnabled: ctx?.recordingEnabled ?? false,
        providerAnalysis: provider?.analyse && s.providerCallId ? { provider, providerCallId: s.providerCallId } : null,
      });
    }
    return stale.length;
  }

  function hangup(call: LiveCall, reason: HangupReason, now: Date): boolean {
    if (call.hangup) {
      // A provider that ignores hangups must not hold the slot forever.
      if (now.getTime() - call.hangup.at.getTime() > leaseMs) {
        log.warn({ callId: call.callId, reason: call.hangup.reason }, 'provider did not end the call after hangup; ending it');
        // An answered call ends as one (completed, its analysis settled), so it gets the events
        // every completed call gets; the others fail.
        const answeredAt = call.answered ? (call.answeredAt ?? call.dialledAt) : null;
        onEnded(call, { ...failedDial(call, 'provider_unresponsive'), status: answeredAt ? 'completed' : 'failed', answeredAt });
      }
      return false;
    }
    call.hangup = { reason, at: now };
    if (call.provider && call.providerCallId) {
      call.provider.hangup(call.providerCallId, reason, { accountId: call.accountId }).catch((err) => log.warn({ err, callId: call.callId }, 'hangup failed'));
    }
    log.info({ callId: call.callId, batchId: call.batchId, reason }, 'hanging up call');
    return true;
  }

  async function enforceLimits(now: Date): Promise<number> {
    if (live.size === 0) return 0;
    const statuses = await batchStatuses(deps, [...new Set([...live.values()].map((c) => c.batchId))]);
    let n = 0;
    for (const call of [...live.values()]) {
      if (statuses.get(call.batchId) === 'cancelled') {
        if (hangup(call, 'cancelled', now)) n++;
      } else if (now.getTime() - call.dialledAt.getTime() >= call.ctx.maxDurationSeconds * 1000) {
        if (hangup(call, 'max_duration', now)) n++;
      }
    }
    return n;
  }

  async function refreshAccountProviders(accountIds: string[]) {
    const stale = accountIds.filter((a) => {
      const hit = accountProvider.get(a);
      return !hit || Date.now() - hit.at >= ACCOUNT_PROVIDER_TTL_MS;
    });
    if (stale.length === 0) return;
    const names = await accountProviders(deps, stale);
    for (const [a, name] of names) accountProvider.set(a, { name, at: Date.now() });
  }

  /**
   * Dial pacing for one account's claim, when its provider paces dials: each batch gets at most
   * the slots its from-number has within the next poll interval, shared by the batches that dial
   * from that number; a batch whose settings this worker hasn't loaded yet gets one call (its
   * number is learnt from it). undefined: unpaced.
   */
  async function dialPacing(accountId: string): Promise<ClaimInput['limitAllocation']> {
    const name = accountProvider.get(accountId)?.name;
    const provider = name ? knownProvider(name) : null;
    if (!provider?.dialRate) return undefined;
    let rate: number;
    try {
      rate = await provider.dialRate(accountId);
    } catch (err) {
      log.warn({ err, accountId }, 'could not read dial pacing; claiming one call');
      return (alloc) => new Map([...alloc].slice(0, 1).map(([id]) => [id, 1]));
    }
    if (!(rate > 0)) return undefined;
    return (alloc) => {
      const left = new Map<string, number>();
      const out = new Map<string, number>();
      for (const [batchId, wanted] of alloc) {
        const from = contexts.get(batchId)?.from;
        if (!from) {
          out.set(batchId, Math.min(wanted, 1));
          continue;
        }
        const slots = left.get(from) ?? pacer.available(from, rate, pollMs);
        const n = Math.min(wanted, slots);
        left.set(from, slots - n);
        out.set(batchId, n);
      }
      return out;
    };
  }

  /** `only`: accounts known to have free slots (a call of theirs just ended); default: all with waiting calls. */
  async function claimRound(only?: string[]): Promise<{ claimed: number; more: boolean }> {
    const round = claimRound0(only);
    claiming = round.then(
      () => undefined,
      () => undefined,
    );
    return round;
  }

  async function claimRound0(only?: string[]): Promise<{ claimed: number; more: boolean }> {
    if (stopping) return { claimed: 0, more: false };
    let budget = maxInFlight - live.size;
    if (budget <= 0) return { claimed: 0, more: false };
    const accounts = only ?? (await accountsWithWaitingCalls(deps));
    if (accounts.length === 0) return { claimed: 0, more: false };
    const start = rotate++ % accounts.length;
    const order = [...accounts.slice(start), ...accounts.slice(0, start)];
    await refreshAccountProviders(order);
    let claimed = 0;
    let more = false;
    for (const accountId of order) {
      if (budget <= 0 || stopping) {
        more = true;
        break;
      }
      const r = await claimCalls(deps, {
        accountId,
        workerId: id,
        clock: () => clock.now(),
        leaseMs,
        budget: Math.min(budget, claimBatchSize),
        rotate,
        // Paced-out batches take nothing now: the next poll comes within the pacing horizon.
        limitAllocation: await dialPacing(accountId),
      });
      if (r.budgetExhausted) more = true;
      if (r.claimed.length === 0) continue;
      try {
        await ensureContexts(r.claimed.map((c) => c.batchId));
      } catch (err) {
        log.error({ err }, 'could not load batch settings for claimed calls; their leases will lapse and be recovered');
        continue;
      }
      budget -= r.claimed.length;
      claimed += r.claimed.length;
      await Promise.all(r.claimed.map((c) => dialClaimed(c)));
    }
    return { claimed, more };
  }

  /**
   * `recover`: also look for other workers' expired leases. Leases last seconds, so the loop does
   * that every few polls only; runOnce always does.
   */
  async function tick(recover: boolean): Promise<TickReport> {
    const now = clock.now();
    const started = await startDueBatches(deps, now);
    for (const b of started) log.info({ batchId: b.id, accountId: b.accountId, startMode: b.startMode }, 'batch started');
    await renewIfDue(now);
    let requeued: { id: string; batchId: string }[] = [];
    let settled = 0;
    let analysisRecovered = 0;
    if (recover) {
      requeued = await requeueExpiredUndialled(deps, now);
      for (const r of requeued) log.warn({ callId: r.id, batchId: r.batchId }, 'requeued undialled call of a lost worker');
      settled = await recoverLost(now);
      analysisRecovered = await recoverAnalysis(now);
      // Batches whose last call ended in a process that died before closing them.
      for (const b of await sweepFinishedBatches(deps, now)) {
        log.info({ batchId: b.id, status: b.status }, 'closed finished batch');
        contexts.delete(b.id);
      }
    }
    const hungUp = await enforceLimits(now);
    const { claimed, more } = await claimRound();
    return { started: started.length, claimed, more, requeued: requeued.length, settled, analysisRecovered, hungUp };
  }

  /** Slots of these accounts were just freed: claim for them now rather than at the next poll. */
  function kick(accounts: Iterable<string>) {
    if (!running || stopping) return;
    for (const a of accounts) kicked.add(a);
    claimSoon = true;
    wake?.();
  }

  async function loop() {
    const recoverEveryMs = Math.max(pollMs, Math.min(leaseMs / 4, 5000));
    let lastTick = 0;
    let lastRecovery = 0;
    while (running && !stopping) {
      try {
        if (Date.now() - lastTick >= pollMs) {
          lastTick = Date.now();
          const recover = lastTick - lastRecovery >= recoverEveryMs;
          if (recover) lastRecovery = lastTick;
          claimSoon = false;
          kicked.clear();
          const r = await exclusive(() => tick(recover));
          moreWaiting = r.more;
          if (r.more) claimSoon = true;
        } else if (claimSoon) {
          claimSoon = false;
          const only = kicked.size > 0 && !moreWaiting ? [...kicked] : undefined;
          kicked.clear();
          const r = await exclusive(() => claimRound(only));
          moreWaiting = r.more;
          if (r.more) claimSoon = true;
        }
      } catch (err) {
        log.error({ err }, 'dispatch tick failed');
        await sleep(Math.min(pollMs, 1000));
      }
      if (claimSoon || stopping) continue;
      const wait = Math.max(1, pollMs - (Date.now() - lastTick));
      await new Promise<void>((resolve) => {
        const t = setTimeout(done, wait);
        function done() {
          clearTimeout(t);
          wake = null;
          resolve();
        }
        wake = done;
      });
    }
  }

  /**
   * Waits for buffered writes, dials and local analyses; for provider analyses too unless told not
   * to (they take minutes: shutdown hands them over instead). Gives up at `until` (Date.now() ms).
   */
  async function settle(o: { until?: number; providerAnalyses?: boolean } = {}) {
    const timeLeft = () => (o.until === undefined ? Number.POSITIVE_INFINITY : o.until - Date.now());
    for (;;) {
      if (timeLeft() <= 0) return;
      queue.flushDeferred();
      await (o.until === undefined ? queue.whenIdle() : atMost(queue.whenIdle(), timeLeft()));
      if (analysisGroups > 0 || analysisQueue.length > 0 || dialsInFlight > 0) {
        await sleep(1);
        continue;
      }
      if ((o.providerAnalyses ?? true) && providerAnalysing.size > 0) {
        // The provider's analysis arrives when it arrives (webhook or its grace period).
        await sleep(10);
        continue;
      }
      if (queue.idle) return;
    }
  }

  let releaseLoopKeeper: (() => void) | null = null;

  async function handOverLeases(callIds: string[]) {
    try {
      await expireLeasesNow(deps, id, callIds, clock.now());
    } catch (err) {
      log.warn({ err, calls: callIds.length }, 'could not expire handed-over leases; they lapse on their own');
    }
  }

  const worker: DispatchWorker = {
    id,
    start() {
      if (running) return;
      running = true;
      stopping = false;
      log.info({ pollMs, leaseMs, maxInFlight }, 'dispatch worker started');
      releaseLoopKeeper = keepLeases();
      loopDone = loop();
    },

    async stop(o = {}) {
      stopping = true;
      wake?.();
      await loopDone;
      await serial;
      const grace = o.graceMs ?? shutdownGraceMs;
      const deadline = Date.now() + grace;
      // Leases are still renewed while the calls finish.
      const releaseKeeper = keepLeases();
      try {
        while ((live.size > 0 || dialsInFlight > 0) && Date.now() < deadline) {
          await sleep(Math.min(20, Math.max(1, deadline - Date.now())));
        }
        // A call its provider can hand to another worker (adopt) goes on talking: its lease is
        // expired at once and the next worker to recover it watches it to its end. Hanging up is
        // for the others.
        const handOver = [...live.values()].filter((c) => c.provider?.adopt && c.providerCallId && !c.hangup);
        if (handOver.length > 0) {
          log.warn({ calls: handOver.length }, 'leaving calls in flight to the next worker (adopted by its next recovery)');
          for (const call of handOver) forget(call);
          await handOverLeases(handOver.map((c) => c.callId));
        }
        if (live.size > 0) {
          const now = clock.now();
          log.warn({ calls: live.size }, 'hanging up calls still in flight at shutdown');
          for (const call of [...live.values()]) hangup(call, 'shutdown', now);
          const hangupDeadline = Date.now() + 2000;
          while (live.size > 0 && Date.now() < hangupDeadline) await sleep(5);
        }
        // Provider analyses are not waited for: they are handed over below.
        await settle({ until: Date.now() + Math.max(2000, grace), providerAnalyses: false });
      } finally {
        releaseKeeper();
        releaseLoopKeeper?.();
        releaseLoopKeeper = null;
      }
      // No renewals from here on. The provider analyses still awaited go to the next worker's
      // recovery at once; whatever else is still in flight keeps its lease, which lapses.
      if (providerAnalysing.size > 0) {
        log.warn({ calls: providerAnalysing.size }, 'leaving provider analyses to the next worker');
        await handOverLeases([...providerAnalysing]);
      }
      running = false;
      for (const unsubscribe of subscriptions.values()) unsubscribe();
      subscriptions.clear();
      if (ownsProviders) await providers.close();
      log.info({ abandoned: live.size }, 'dispatch worker stopped');
    },

    runOnce: () => exclusive(() => tick(true)),
    settle: () => settle(),

    async drain(o = {}) {
      const deadline = Date.now() + (o.timeoutMs ?? 20_000);
      const busy = () => live.size > 0 || ending.size > 0 || analysing.size > 0 || dialsInFlight > 0;
      for (;;) {
        // Only a tick that ran with nothing in flight can tell that nothing is left: calls ending
        // during a tick free slots that tick did not see.
        const quietBefore = !busy();
        const r = await worker.runOnce();
        await settle();
        const idle = r.claimed === 0 && !r.more && r.settled === 0 && r.requeued === 0 && r.analysisRecovered === 0 && r.started === 0;
        if (quietBefore && idle && !busy()) return;
        if (Date.now() > deadline) {
          throw new Error(`drain timed out with ${live.size} calls in flight and ${analysing.size} analyses outstanding`);
        }
        if (busy()) await sleep(1);
      }
    },

    stats: () => ({ inFlight: live.size, ending: ending.size, analysing: analysing.size, pendingWrites: queue.size }),
  };
  return worker;
}
