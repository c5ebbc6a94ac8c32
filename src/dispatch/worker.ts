// The dispatch worker: turns queued calls into provider calls and provider events into call records.
//
// One loop per process (any number of processes may share a database):
//   tick     = start due scheduled batches, renew own leases, recover other workers' expired
//              leases, hang up calls that ran too long or whose batch was cancelled, claim calls;
//   events   = provider events become call writes, buffered for a moment and committed in groups
//              (WriteQueue), each with its counter update and history row;
//   analysis = ended, answered calls get transcript_status pending -> processing -> ready (or
//              failed) with summary and outcomes; the recording is stored with `processing`.
// A call ending frees its slot at once: the loop claims again without waiting for the next poll.

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
} from '../services/claim-calls.ts';
import { loadDispatchContexts, type DispatchContext } from '../services/dispatch-context.ts';
import {
  batchStatuses,
  findLostCalls,
  renewLeases,
  requeueExpiredUndialled,
  takeOverStaleAnalysis,
  type LostCall,
} from '../services/lease-recovery.ts';
import type { Analyser } from './analysis/analyser.ts';
import { createLocalAnalyser } from './analysis/local-analyser.ts';
import { alternateDialWrite, endedWrite, lostCallWrite, transcriptWrite, type CallRef } from './call-writes.ts';
import type { CallEndResult, HangupReason, PlaceCallRequest, ProviderCallEvent, VoiceProvider } from './voice/provider.ts';
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
  /** Stops claiming, lets in-flight calls finish (up to the grace period), then hangs up the rest. */
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
}

const ALTERNATE_AFTER: ReadonlySet<string> = new Set(['no_answer', 'busy', 'failed']);
/** Failures of our own making: the alternate number would fail the same way. */
const NO_ALTERNATE_REASONS: ReadonlySet<string> = new Set(['no_caller_id', 'provider_unavailable']);
const CONTEXT_CACHE_MAX = 2000;
const WRITE_PARALLELISM = 4;
const PROVIDER_ID_DEFER_MS = 250;
const ANALYSIS_GROUP = 500;
const ANALYSIS_PARALLEL = 3;

export function defaultWorkerId(configured?: string): string {
  const base = configured || `${os.hostname()}-${process.pid}`;
  return `${base}#${crypto.randomBytes(3).toString('hex')}`;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

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

  let running = false;
  let stopping = false;
  let analysisGroups = 0;
  /** Settles when the latest claim round is done (analysis lets it go first). */
  let claiming: Promise<void> = Promise.resolve();
  let dialsInFlight = 0;
  let lastRenewal = 0;
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
    const p = providers.get(ctx.provider);
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
    for (const [k, v] of loaded) contexts.set(k, v);
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
      call.provider.hangup(call.providerCallId, 'shutdown').catch((err) => log.warn({ err, callId: call.callId }, 'hangup failed'));
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
  function failedDial(call: LiveCall, reason: string): CallEndResult {
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
    };
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
      const { providerCallId } = await provider.placeCall(request(call));
      if (live.get(call.callId) !== call) {
        // Abandoned while dialling (lease lost): the provider call must not run on unobserved.
        await provider.hangup(providerCallId, 'shutdown').catch(() => undefined);
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
      if (call.hangup) await provider.hangup(providerCallId, call.hangup.reason).catch(() => undefined);
      const buffered = early.get(providerCallId);
      if (buffered) {
        early.delete(providerCallId);
        for (const e of buffered) onProviderEvent(e);
      }
    } catch (err) {
      log.warn({ err, callId: call.callId }, 'provider rejected the call');
      onEnded(call, failedDial(call, 'dial_error'));
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
    const { write, needsAnalysis } = endedWrite(ref(call), id, from, result, call.number, {
      detail: call.hangup ? { hangup_reason: call.hangup.reason } : undefined,
      recordingWithAnalysis: true,
    });
    void enqueue(write, call.ctx.callbackUrl).then((ok) => {
      ending.delete(call.callId);
      if (!ok) {
        log.warn({ callId: call.callId, batchId: call.batchId }, 'call end not recorded: call no longer leased by this worker');
        return;
      }
      if (needsAnalysis) {
        analysing.add(call.callId);
        analysisQueue.push({
          ...ref(call),
          status: result.status,
          hangupBy: result.hangupBy,
          transcript: result.transcript!,
          contactName: call.contact.name,
          metadata: call.contact.metadata,
          outcomeKeys: call.ctx.agent.outcomeKeys,
          callbackUrl: call.ctx.callbackUrl,
          recording: result.recording,
        });
        pumpAnalysis();
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

  async function renewIfDue(now: Date) {
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

  async function recoverLost(now: Date): Promise<number> {
    const lost = await findLostCalls(deps, now, heldIds());
    if (lost.length === 0) return 0;
    const writes: CallWrite[] = [];
    for (const l of lost) writes.push(await settleWrite(l, now));
    const result = await applyCallWrites(deps, writes, now);
    onCommitted(writes, result);
    for (const l of lost) {
      if (result.applied.has(l.id)) log.warn({ callId: l.id, batchId: l.batchId, previousWorker: l.leaseOwner, status: l.status }, 'recovered call of a lost worker');
    }
    return result.applied.size;
  }

  async function settleWrite(l: LostCall, now: Date): Promise<CallWrite> {
    const r: CallRef = { callId: l.id, batchId: l.batchId, accountId: l.accountId };
    let provider: VoiceProvider | null = null;
    try {
      provider = providers.has(l.provider) ? providers.get(l.provider) : null;
    } catch {
      provider = null;
    }
    if (provider?.lookup && l.providerCallId) {
      try {
        const found = await provider.lookup(l.providerCallId);
        if (found.state === 'ended') {
          // The lease stays (expired) when analysis is due: takeOverStaleAnalysis picks it up.
          const { write } = endedWrite(r, l.leaseOwner, l.status, found.result, null, {
            leaseExpiredBefore: now,
            detail: { recovered: true, previous_worker: l.leaseOwner, worker: id },
          });
          return write;
        }
        if (found.state === 'in_flight') {
          // Its events go to the process that died; nobody could record the rest of it.
          await provider.hangup(l.providerCallId, 'shutdown').catch(() => undefined);
        }
      } catch (err) {
        log.warn({ err, callId: l.id }, 'provider lookup failed; settling the call as lost');
      }
    }
    return lostCallWrite(r, l, now, id);
  }

  async function recoverAnalysis(now: Date): Promise<number> {
    const stale = await takeOverStaleAnalysis(deps, id, now, leaseMs);
    if (stale.length === 0) return 0;
    await ensureContexts(stale.map((s) => s.batchId));
    for (const s of stale) {
      analysing.add(s.id);
      analysisQueue.push({
        callId: s.id,
        batchId: s.batchId,
        accountId: s.accountId,
        status: s.status,
        hangupBy: s.hangupBy,
        transcript: s.transcript ?? '',
        contactName: s.name,
        metadata: s.metadata,
        outcomeKeys: contexts.get(s.batchId)?.agent.outcomeKeys ?? [],
        callbackUrl: contexts.get(s.batchId)?.callbackUrl,
      });
    }
    pumpAnalysis();
    return stale.length;
  }

  function hangup(call: LiveCall, reason: HangupReason, now: Date): boolean {
    if (call.hangup) {
      // A provider that ignores hangups must not hold the slot forever.
      if (now.getTime() - call.hangup.at.getTime() > leaseMs) {
        log.warn({ callId: call.callId, reason: call.hangup.reason }, 'provider did not end the call after hangup; ending it');
        onEnded(call, { ...failedDial(call, 'provider_unresponsive'), status: call.answered ? 'completed' : 'failed' });
      }
      return false;
    }
    call.hangup = { reason, at: now };
    if (call.provider && call.providerCallId) {
      call.provider.hangup(call.providerCallId, reason).catch((err) => log.warn({ err, callId: call.callId }, 'hangup failed'));
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

  async function settle() {
    for (;;) {
      queue.flushDeferred();
      await queue.whenIdle();
      if (analysisGroups > 0 || analysisQueue.length > 0 || dialsInFlight > 0) {
        await sleep(1);
        continue;
      }
      if (queue.idle) return;
    }
  }

  const worker: DispatchWorker = {
    id,
    start() {
      if (running) return;
      running = true;
      stopping = false;
      log.info({ pollMs, leaseMs, maxInFlight }, 'dispatch worker started');
      loopDone = loop();
    },

    async stop(o = {}) {
      stopping = true;
      wake?.();
      await loopDone;
      await serial;
      const grace = o.graceMs ?? shutdownGraceMs;
      const deadline = Date.now() + grace;
      while ((live.size > 0 || dialsInFlight > 0) && Date.now() < deadline) {
        // Leases are still renewed while the calls finish.
        await renewIfDue(clock.now()).catch(() => undefined);
        await sleep(Math.min(20, Math.max(1, deadline - Date.now())));
      }
      if (live.size > 0) {
        const now = clock.now();
        log.warn({ calls: live.size }, 'hanging up calls still in flight at shutdown');
        for (const call of [...live.values()]) hangup(call, 'shutdown', now);
        const hangupDeadline = Date.now() + 2000;
        while (live.size > 0 && Date.now() < hangupDeadline) await sleep(5);
      }
      await Promise.race([settle(), sleep(Math.max(2000, grace))]);
      // Whatever is still in flight keeps its lease, which lapses: another worker settles it.
      running = false;
      for (const unsubscribe of subscriptions.values()) unsubscribe();
      subscriptions.clear();
      if (ownsProviders) await providers.close();
      log.info({ abandoned: live.size }, 'dispatch worker stopped');
    },

    runOnce: () => exclusive(() => tick(true)),
    settle,

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
