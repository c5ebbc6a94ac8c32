// Retell behind the VoiceProvider interface.
//
// Dialling: create-phone-call through retell-sdk (baseURL configurable, so tests use a local fake),
// never twice for one dial of ours (dial.ts; the alternate number is a second dial of the same
// call id). Pacing is the worker's (dialRate), so a call is never marked dialled while it waits.
//
// Events: Retell POSTs webhooks to whichever API process; they are stored (provider_events) and this
// provider reads those for the calls it watches (`feed`) - so the dialling worker gets them whatever
// process received them. A call without a final event after its max duration plus `graceMs` is
// fetched with get-call and settled from Retell's call object (a lost call_ended).
//
// Analysis: Retell's own (call_analyzed), waited for in ../analysis-waits.ts.
//
// One poll at a time: watch/analyse/hangup during a slow poll only make sure another follows it.

import Retell from 'retell-sdk';
import {
  DialRejectedError,
  type CallEndResult,
  type CallOwnership,
  type HangupReason,
  type PlaceCallRequest,
  type ProviderCallEvent,
  type ProviderCallLookup,
  type ProviderCallRef,
  type ProviderEventListener,
  type VoiceProvider,
} from '../provider.ts';
import { AnalysisWaits } from '../analysis-waits.ts';
import { retellAnalysisCalls } from './analysis-calls.ts';
import { endResultFromCall, isFinalCall, type RetellAgentRef, type RetellCallObject } from './call-mapping.ts';
import { retellClients, type RetellClients } from './clients.ts';
import { createDial, findDial } from './dial.ts';
import { SEND_GATE } from '../gated-fetch.ts';
import { realScheduler, type Scheduler } from '../../../scheduler.ts';

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
  /**
   * Unconsumed webhook events for these calls (our call ids), each handed out once; with `owners`
   * (the same length), only while owners[i] still holds callIds[i]'s lease (null: whoever holds it).
   */
  feed(callIds: string[], owners?: (string | null)[]): Promise<RetellStoredEvent[]>;
  /** The call objects of the call_analyzed events stored for these Retell calls, consumed or not. */
  analyzed(retellCallIds: string[]): Promise<RetellCallObject[]>;
  /** The account of a Retell call this process did not place (recovery of a dead worker's calls). */
  accountForCall?(retellCallId: string): Promise<string | null>;
  now(): Date;
  /** Timers of the poll and the create backoff; default: the real one. */
  scheduler?: Scheduler;
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
  /** The worker's lease name: events are taken only while it holds the call. */
  owner: string | null;
  placedAt: Date;
  answered: boolean;
  hangupRequested: boolean;
  /** The poll (its count) of the last get-call for it: reconciliation is throttled. */
  checkedAt: number | null;
}

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
  const scheduler = opts.scheduler ?? realScheduler;
  // A call is fetched at most once per this many polls (every 5 × pollMs, at least 50 ms): counted in
  // polls, which are timers of the scheduler, so it paces on manual time and on a frozen app clock alike.
  const reconcileEvery = Math.max(5, Math.ceil(50 / Math.max(1, pollMs)));
  let polls = 0;
  let timer: unknown = null;
  let polling = false;
  let closed = false;

  async function keyFor(accountId: string): Promise<string | null> {
    return (await opts.account(accountId))?.apiKey ?? null;
  }
  const analyses = new AnalysisWaits({
    calls: retellAnalysisCalls(client, opts.analyzed),
    keyFor,
    now: opts.now,
    graceMs: analysisGraceMs,
    backoffMs,
    onError,
  });

  const emit = (retellCallId: string, e: ProviderCallEvent) => {
    for (const l of [...listeners]) {
      try {
        l({ ...e, providerCallId: retellCallId });
      } catch (err) {
        onError(err, 'listener');
      }
    }
  };

  function end(call: Live, c: RetellCallObject) {
    if (!live.delete(call.retellCallId)) return;
    analyses.remember(c);
    const result: CallEndResult = endResultFromCall(c, { recordingEnabled: call.req.recordingEnabled, now: opts.now() });
    emit(call.retellCallId, { type: 'ended', callId: call.req.callId, at: result.endedAt, result });
  }

  async function poll() {
    timer = null;
    if (closed || polling) return;
    polling = true;
    polls += 1;
    try {
      if (live.size > 0) await pollLive();
      if (analyses.size > 0) await analyses.poll();
    } catch (err) {
      onError(err, 'poll');
    } finally {
      polling = false;
    }
    schedule();
  }

  async function pollLive() {
    const byCall = new Map([...live.values()].map((c) => [c.req.callId, c.owner]));
    const events = await opts.feed([...byCall.keys()], [...byCall.values()]);
    for (const ev of events) {
      if (ev.event === 'call_analyzed') analyses.remember(ev.call);
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
    for (const call of [...live.values()]) {
      const overdue = now - call.placedAt.getTime() >= call.req.maxDurationSeconds * 1000 + graceMs;
      if (!overdue && !call.hangupRequested) continue;
      if (call.checkedAt !== null && polls - call.checkedAt < reconcileEvery) continue;
      call.checkedAt = polls;
      try {
        const c = (await client(call.apiKey).call.retrieve(call.retellCallId)) as unknown as RetellCallObject;
        if (isFinalCall(c)) end(call, c);
      } catch (err) {
        onError(err, 'reconcile');
      }
    }
  }

  function schedule() {
    // A poll under way schedules the next one when it is done.
    if (closed || timer || polling || (live.size === 0 && analyses.size === 0)) return;
    timer = scheduler.setTimeout(() => void poll(), pollMs, { background: true });
  }

  function watch(retellCallId: string, req: PlaceCallRequest, apiKey: string, state: { answered: boolean; placedAt: Date; owner: string | null }) {
    live.set(retellCallId, {
      retellCallId,
      req,
      apiKey,
      owner: state.owner,
      placedAt: state.placedAt,
      answered: state.answered,
      hangupRequested: false,
      checkedAt: null,
    });
    schedule();
  }

  return {
    name: 'retell',
    requestTimeoutMs: opts.timeoutMs ?? 15_000,

    async placeCall(req, ownership?: CallOwnership) {
      if (closed) throw new Error('retell provider is closed');
      const apiKey = await keyFor(req.accountId);
      if (!apiKey) {
        const message = `account ${req.accountId} has no Retell API key`;
        throw new DialRejectedError(message, 'provider_not_configured', { provider: 'retell', provider_message: message });
      }
      const c = await createDial(client(apiKey), req, await opts.agent(req.agent.id, req.prompt.id), {
        maxAttempts,
        backoffMs,
        stopped: () => closed,
        scheduler,
        mayCreate: ownership ? () => ownership.confirmDial() : undefined,
        holdsNow: ownership ? () => ownership.holdsNow() : undefined,
      });
      watch(c.call_id, req, apiKey, { answered: false, placedAt: opts.now(), owner: ownership?.owner ?? null });
      return { providerCallId: c.call_id };
    },

    // stop-call is in retell-sdk but not in the published OpenAPI revision: best effort. The
    // agent's max_call_duration_ms (sent per call) ends a call on Retell's side anyway; a watched
    // call is reconciled through get-call from now on, so its end is recorded without a webhook.
    // A call this process does not watch (another worker's, found by recovery) is stopped with
    // its account's key.
    async hangup(providerCallId: string, _reason: HangupReason, ref?: { accountId: string; holdsNow?: () => boolean }) {
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
      // Gated like a create: a worker paused after its last confirmation sends nothing (gated-fetch.ts).
      const gated = ref?.holdsNow ? { fetchOptions: { [SEND_GATE]: ref.holdsNow } as never } : undefined;
      await client(key)
        .call.stop(providerCallId, gated)
        .catch((err) => onError(err, 'stop-call'));
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
        analyses.remember(c);
        return { state: 'ended', result: endResultFromCall(c, { recordingEnabled: ref?.recordingEnabled ?? false, now: opts.now() }) };
      }
      return { state: 'in_flight', answeredAt: c.call_status === 'ongoing' && c.start_timestamp ? new Date(c.start_timestamp) : null };
    },

    async findCall(ref: ProviderCallRef): Promise<string | null> {
      const key = await keyFor(ref.accountId);
      if (!key) return null;
      return (await findDial(client(key), ref.callId, ref.attempt))?.call_id ?? null;
    },

    async adopt(providerCallId, req, state) {
      if (closed) throw new Error('retell provider is closed');
      const apiKey = await keyFor(req.accountId);
      if (!apiKey) throw new Error(`account ${req.accountId} has no Retell API key`);
      watch(providerCallId, req, apiKey, { answered: state.answered, placedAt: state.dialledAt, owner: state.owner ?? null });
    },

    forget(providerCallId) {
      live.delete(providerCallId);
    },

    async analyse(req) {
      if (closed) throw new Error('retell provider is closed');
      const a = analyses.analyse(req);
      schedule();
      return a;
    },

    async dialRate(accountId) {
      const own = (await opts.account(accountId))?.dialRatePerNumber;
      return own ?? opts.dialRatePerNumber ?? 0;
    },

    async close() {
      closed = true;
      if (timer) scheduler.clearTimeout(timer);
      live.clear();
      listeners.clear();
      analyses.close();
    },
  };
}
