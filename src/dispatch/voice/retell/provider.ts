// Retell behind the VoiceProvider interface.
//
// Dialling: create-phone-call through retell-sdk (baseURL configurable, so tests use a local fake).
// Never two Retell calls for one dial of ours: before every create (first try or retry) Retell is
// asked (list-calls) for a call carrying our call id AND attempt in its metadata - the alternate
// number is a second dial of the same call id - so a create whose answer was lost to a timeout or
// 5xx, or a dial repeated after a worker died, adopts the existing Retell call. 429/5xx/network
// errors retry with exponential backoff; other 4xx fail the dial with Retell's message. Pacing is
// the worker's (dialRate), so a call is never marked dialled while it waits for its slot.
//
// Events: Retell POSTs webhooks to whichever API process; they are stored (provider_events) and this
// provider reads those for the calls it watches (`feed`) - so the dialling worker gets them whatever
// process received them. A call without a final event after its max duration plus `graceMs` is
// fetched with get-call and settled from Retell's call object (a lost call_ended).
//
// Analysis: Retell analyses its calls itself (call_analyzed). `analyse` waits for the stored
// call_analyzed event of a call, read by its id whenever it arrived (before, with or after
// call_ended, once or redelivered), and after `analysisGraceMs` without it asks get-call: its
// call_analysis if present, else no analysis (the call's transcript_status becomes failed). A
// failing get-call is asked again with exponential backoff (or when Retry-After says), not every poll.
//
// One poll at a time: watch/analyse/hangup during a slow poll only make sure another follows it.

import Retell from 'retell-sdk';
import {
  DialRejectedError,
  type CallEndResult,
  type HangupReason,
  type PlaceCallRequest,
  type ProviderAnalysis,
  type ProviderAnalysisRequest,
  type ProviderCallEvent,
  type ProviderCallLookup,
  type ProviderCallRef,
  type ProviderEventListener,
  type VoiceProvider,
} from '../provider.ts';
import {
  analysisFromCall,
  createPhoneCallBody,
  endResultFromCall,
  hasAnalysis,
  isAnsweredCall,
  isDialOf,
  isFinalCall,
  recordingOf,
  type RetellAgentRef,
  type RetellAnalysisSource,
  type RetellCallObject,
} from './call-mapping.ts';
import { retellClients, type RetellClients } from './clients.ts';
import { dialRejection, isRetryable, providerMessage, retryAfterMs } from './dial-errors.ts';

export interface RetellStoredEvent {
  event: string;
  call: RetellCallObject;
}

export interface RetellAccount {
  apiKey: string;
  /** Calls per second per from-number for this account; the provider default otherwise. */
  dialRatePerNumber?: number;
}

export interface RetellProviderOptions {
  baseURL?: string;
  /** SDK clients by API key (shared with other users of the same keys); default: built from baseURL/timeoutMs. */
  clients?: RetellClients;
  /** The account's Retell API key (decrypted) and its own dial pacing, or null when it has no key. */
  account(accountId: string): Promise<RetellAccount | null>;
  /** Retell agent id/version for our agent + prompt version. */
  agent(agentId: string, promptVersionId: string): Promise<RetellAgentRef>;
  /** Unconsumed webhook events for these calls (our call ids), each handed out once. */
  feed(callIds: string[]): Promise<RetellStoredEvent[]>;
  /** The call objects of the call_analyzed events stored for these Retell calls, consumed or not. */
  analyzed(retellCallIds: string[]): Promise<RetellCallObject[]>;
  /** The account of a Retell call this process did not place (recovery of a dead worker's calls). */
  accountForCall?(retellCallId: string): Promise<string | null>;
  now(): Date;
  pollMs?: number;
  /** After max duration plus this, a call without a final event is fetched with get-call. */
  graceMs?: number;
  /** After a call's end plus this, an analysis without call_analyzed is fetched with get-call. */
  analysisGraceMs?: number;
  /** Calls per second per from-number when the account sets none; 0 = unpaced. */
  dialRatePerNumber?: number;
  maxAttempts?: number;
  /** First retry delay of creates and of failed analysis get-calls (doubling each time). */
  backoffMs?: number;
  timeoutMs?: number;
  onError?(err: unknown, context: string): void;
}

interface Live {
  retellCallId: string;
  req: PlaceCallRequest;
  apiKey: string;
  placedAt: Date;
  answered: boolean;
  hangupRequested: boolean;
  /** Date.now() of the last get-call for it (reconciliation is throttled). */
  checkedAt: number;
}

interface AnalysisWait {
  req: ProviderAnalysisRequest;
  /** get-call is asked from this instant (app clock, ms). */
  dueAt: number;
  /** Failed get-calls are retried until this instant; then the analysis is given up. */
  giveUpAt: number;
  /** After a failed get-call: not asked again before this instant (app clock, ms). */
  nextTryAt: number;
  failures: number;
  resolve: Array<(a: ProviderAnalysis | null) => void>;
  reject: Array<(err: Error) => void>;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
/** Analyses of answered calls seen before they were asked for (only what analyse() reads). */
const KNOWN_MAX = 5_000;
/** Longest wait between get-calls of an analysis whose get-call keeps failing. */
const ANALYSIS_RETRY_MAX_MS = 60_000;

export function createRetellProvider(opts: RetellProviderOptions): VoiceProvider {
  const pollMs = opts.pollMs ?? 500;
  const graceMs = opts.graceMs ?? 120_000;
  const analysisGraceMs = opts.analysisGraceMs ?? graceMs;
  const maxAttempts = opts.maxAttempts ?? 5;
  const backoffMs = opts.backoffMs ?? 500;
  const onError = opts.onError ?? (() => undefined);
  const client = opts.clients ?? retellClients({ baseURL: opts.baseURL, timeoutMs: opts.timeoutMs });
  const listeners = new Set<ProviderEventListener>();
  const live = new Map<string, Live>();
  const waits = new Map<string, AnalysisWait>();
  const known = new Map<string, RetellAnalysisSource>();
  let timer: ReturnType<typeof setTimeout> | null = null;
  let polling = false;
  let closed = false;

  async function keyFor(accountId: string): Promise<string | null> {
    return (await opts.account(accountId))?.apiKey ?? null;
  }

  const emit = (retellCallId: string, e: ProviderCallEvent) => {
    for (const l of [...listeners]) {
      try {
        l({ ...e, providerCallId: retellCallId });
      } catch (err) {
        onError(err, 'listener');
      }
    }
  };

  /** Keeps a final call's analysis for a later analyse(): only answered calls are ever asked. */
  function remember(c: RetellCallObject) {
    if (!hasAnalysis(c) || !isFinalCall(c) || !isAnsweredCall(c)) return;
    known.delete(c.call_id);
    known.set(c.call_id, { call_analysis: c.call_analysis, recording_url: c.recording_url });
    if (known.size > KNOWN_MAX) known.delete(known.keys().next().value!);
  }

  function end(call: Live, c: RetellCallObject) {
    if (!live.delete(call.retellCallId)) return;
    remember(c);
    const result: CallEndResult = endResultFromCall(c, { recordingEnabled: call.req.recordingEnabled, now: opts.now() });
    emit(call.retellCallId, { type: 'ended', callId: call.req.callId, at: result.endedAt, result });
  }

  async function existing(c: Retell, callId: string, attempt: number): Promise<RetellCallObject | null> {
    // POST /v2/list-calls as published in the OpenAPI file (the SDK's call.list() targets /v3).
    // Filtered by call id only (metadata values match "as strings"); the attempt is checked here.
    const list = (await c.post('/v2/list-calls', {
      body: { filter_criteria: { metadata: { 'metadata.call_id': [callId] } }, limit: 50 },
    })) as unknown as RetellCallObject[];
    return list.find((x) => isDialOf(x, callId, attempt)) ?? null;
  }

  async function create(req: PlaceCallRequest, apiKey: string): Promise<RetellCallObject> {
    const c = client(apiKey);
    const agent = await opts.agent(req.agent.id, req.prompt.id);
    const body = createPhoneCallBody(req, agent);
    for (let attempt = 1; ; attempt++) {
      try {
        const found = await existing(c, req.callId, req.attempt);
        if (found) return found;
        return (await c.call.createPhoneCall(body as never)) as unknown as RetellCallObject;
      } catch (err) {
        if (!isRetryable(err)) throw err instanceof Retell.APIError ? dialRejection(err) : err;
        if (attempt >= maxAttempts || closed) {
          // The last create may still have gone through: adopt it rather than abandon it.
          const found = await existing(c, req.callId, req.attempt).catch(() => null);
          if (found) return found;
          throw new Error(`Retell create-phone-call failed after ${attempt} attempts: ${providerMessage(err)}`, { cause: err });
        }
        await sleep(backoffMs * 2 ** (attempt - 1) * (0.5 + Math.random() / 2));
      }
    }
  }

  async function poll() {
    timer = null;
    if (closed || polling) return;
    polling = true;
    try {
      if (live.size > 0) await pollLive();
      if (waits.size > 0) await pollAnalyses();
    } catch (err) {
      onError(err, 'poll');
    } finally {
      polling = false;
    }
    schedule();
  }

  async function pollLive() {
    const events = await opts.feed([...new Set([...live.values()].map((c) => c.req.callId))]);
    for (const ev of events) {
      if (ev.event === 'call_analyzed') remember(ev.call);
      const call = live.get(ev.call.call_id);
      if (!call) continue;
      if (ev.event === 'call_started' && !call.answered) {
        call.answered = true;
        const at = ev.call.start_timestamp ? new Date(ev.call.start_timestamp) : opts.now();
        emit(call.retellCallId, { type: 'answered', callId: call.req.callId, at });
      } else if ((ev.event === 'call_ended' || ev.event === 'call_analyzed') && isFinalCall(ev.call)) {
        // call_analyzed carries the final call too: it settles a call whose call_ended was lost.
        end(call, ev.call);
      }
    }
    await reconcile();
  }

  async function reconcile() {
    const now = opts.now().getTime();
    const throttle = Math.max(pollMs * 5, 50);
    for (const call of [...live.values()]) {
      const overdue = now - call.placedAt.getTime() >= call.req.maxDurationSeconds * 1000 + graceMs;
      if (!overdue && !call.hangupRequested) continue;
      if (Date.now() - call.checkedAt < throttle) continue;
      call.checkedAt = Date.now();
      try {
        const c = (await client(call.apiKey).call.retrieve(call.retellCallId)) as unknown as RetellCallObject;
        if (isFinalCall(c)) end(call, c);
      } catch (err) {
        onError(err, 'reconcile');
      }
    }
  }

  function settleWait(id: string, a: ProviderAnalysis | null) {
    const w = waits.get(id);
    if (!w) return;
    waits.delete(id);
    for (const r of w.resolve) r(a);
  }

  function analysisOf(c: RetellAnalysisSource, req: ProviderAnalysisRequest): ProviderAnalysis | null {
    const a = analysisFromCall(c, req.outcomeKeys);
    if (a && req.wantRecording) a.recording = recordingOf(c);
    return a;
  }

  async function pollAnalyses() {
    const stored = await opts.analyzed([...waits.keys()]);
    for (const c of stored) {
      const w = waits.get(c.call_id);
      if (w && hasAnalysis(c)) settleWait(c.call_id, analysisOf(c, w.req));
    }
    for (const [id, w] of [...waits]) {
      const now = opts.now().getTime();
      if (now < w.dueAt || now < w.nextTryAt) continue;
      try {
        const key = await keyFor(w.req.accountId);
        if (!key) throw new Error(`account ${w.req.accountId} has no Retell API key`);
        const c = (await client(key).call.retrieve(id)) as unknown as RetellCallObject;
        // No call_analyzed within the grace period and none on the call: Retell has no analysis.
        settleWait(id, analysisOf(c, w.req));
      } catch (err) {
        onError(err, 'analysis get-call');
        if (now >= w.giveUpAt) {
          settleWait(id, null);
          continue;
        }
        w.failures += 1;
        const backoff = Math.min(ANALYSIS_RETRY_MAX_MS, backoffMs * 2 ** (w.failures - 1));
        w.nextTryAt = now + Math.max(backoff, retryAfterMs(err) ?? 0);
      }
    }
  }

  function schedule() {
    // A poll under way schedules the next one when it is done.
    if (closed || timer || polling || (live.size === 0 && waits.size === 0)) return;
    timer = setTimeout(() => void poll(), pollMs);
    timer.unref?.();
  }

  function watch(retellCallId: string, req: PlaceCallRequest, apiKey: string, state: { answered: boolean; placedAt: Date }) {
    live.set(retellCallId, { retellCallId, req, apiKey, placedAt: state.placedAt, answered: state.answered, hangupRequested: false, checkedAt: 0 });
    schedule();
  }

  return {
    name: 'retell',

    async placeCall(req) {
      if (closed) throw new Error('retell provider is closed');
      const apiKey = await keyFor(req.accountId);
      if (!apiKey) {
        const message = `account ${req.accountId} has no Retell API key`;
        throw new DialRejectedError(message, 'provider_not_configured', { provider: 'retell', provider_message: message });
      }
      const c = await create(req, apiKey);
      watch(c.call_id, req, apiKey, { answered: false, placedAt: opts.now() });
      return { providerCallId: c.call_id };
    },

    // stop-call is in retell-sdk but not in the published OpenAPI revision: best effort. The
    // agent's max_call_duration_ms (sent per call) ends a call on Retell's side anyway; a watched
    // call is reconciled through get-call from now on, so its end is recorded without a webhook.
    // A call this process does not watch (another worker's, found by recovery) is stopped with
    // its account's key.
    async hangup(providerCallId: string, _reason: HangupReason, ref?: { accountId: string }) {
      const call = live.get(providerCallId);
      if (call) call.hangupRequested = true;
      let key = call?.apiKey ?? null;
      if (!key) {
        const accountId = ref?.accountId ?? (await opts.accountForCall?.(providerCallId)) ?? null;
        key = accountId ? await keyFor(accountId) : null;
      }
      if (!key) {
        onError(new Error(`no Retell API key to stop call ${providerCallId}`), 'stop-call');
        return;
      }
      await client(key).call.stop(providerCallId).catch((err) => onError(err, 'stop-call'));
      if (call) schedule();
    },

    onEvent(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    async lookup(providerCallId: string, ref?: ProviderCallRef): Promise<ProviderCallLookup> {
      let key = live.get(providerCallId)?.apiKey ?? null;
      if (!key) {
        const accountId = ref?.accountId ?? (await opts.accountForCall?.(providerCallId)) ?? null;
        key = accountId ? await keyFor(accountId) : null;
      }
      if (!key) return { state: 'unknown' };
      let c: RetellCallObject;
      try {
        c = (await client(key).call.retrieve(providerCallId)) as unknown as RetellCallObject;
      } catch (err) {
        if (err instanceof Retell.NotFoundError) return { state: 'unknown' };
        throw err;
      }
      if (isFinalCall(c)) {
        remember(c);
        return { state: 'ended', result: endResultFromCall(c, { recordingEnabled: ref?.recordingEnabled ?? false, now: opts.now() }) };
      }
      return { state: 'in_flight', answeredAt: c.call_status === 'ongoing' && c.start_timestamp ? new Date(c.start_timestamp) : null };
    },

    async findCall(ref: ProviderCallRef): Promise<string | null> {
      const key = await keyFor(ref.accountId);
      if (!key) return null;
      return (await existing(client(key), ref.callId, ref.attempt))?.call_id ?? null;
    },

    async adopt(providerCallId, req, state) {
      if (closed) throw new Error('retell provider is closed');
      const apiKey = await keyFor(req.accountId);
      if (!apiKey) throw new Error(`account ${req.accountId} has no Retell API key`);
      watch(providerCallId, req, apiKey, { answered: state.answered, placedAt: state.dialledAt });
    },

    async analyse(req) {
      if (closed) throw new Error('retell provider is closed');
      const c = known.get(req.providerCallId);
      if (c) {
        known.delete(req.providerCallId);
        return analysisOf(c, req);
      }
      return new Promise<ProviderAnalysis | null>((resolve, reject) => {
        const w = waits.get(req.providerCallId);
        if (w) {
          w.resolve.push(resolve);
          w.reject.push(reject);
          return;
        }
        const now = opts.now().getTime();
        waits.set(req.providerCallId, {
          req,
          dueAt: now + analysisGraceMs,
          giveUpAt: now + 2 * analysisGraceMs + 60_000,
          nextTryAt: 0,
          failures: 0,
          resolve: [resolve],
          reject: [reject],
        });
        schedule();
      });
    },

    async dialRate(accountId) {
      const own = (await opts.account(accountId))?.dialRatePerNumber;
      return own ?? opts.dialRatePerNumber ?? 0;
    },

    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      live.clear();
      listeners.clear();
      // Unfinished analyses are not failed: the calls keep their lease, which lapses, and another
      // worker takes the analysis over.
      for (const w of waits.values()) for (const r of w.reject) r(new Error('retell provider closed'));
      waits.clear();
    },
  };
}
