// Vapi behind the VoiceProvider interface.
//
// Dialling: POST /call through @vapi-ai/server-sdk (baseUrl configurable, so tests use a local
// fake) with the account's assistant and the Vapi phone number of the call's from-number, never
// twice for one dial of ours (dial.ts). Pacing is the worker's (dialRate), as for Retell.
//
// Events: Vapi POSTs server messages to whichever API process; they are stored (provider_events)
// and this provider reads those of the calls it watches (`feed`). A call ends with its
// end-of-call-report; one whose report has not come `reportGraceMs` after its status-update
// 'ended', or with no end at all by its max duration plus `graceMs`, is settled from
// GET /call/{id} (lost messages).
//
// Hanging up: Vapi's live call control, POST {type: "end-call"} to the call's monitor.controlUrl.
//
// One poll at a time: watch/analyse/hangup during a slow poll only make sure another follows it.
import {
  DialRejectedError,
  type CallEndResult,
  type CallOwnership,
  type PlaceCallRequest,
  type ProviderCallEvent,
  type ProviderCallLookup,
  type ProviderCallRef,
  type ProviderEventListener,
  type VoiceProvider,
} from '../provider.ts';
import { gatedFetch, SEND_GATE } from '../gated-fetch.ts';
import { AnalysisWaits } from '../analysis-waits.ts';
import { vapiAnalysisCalls } from './analysis-calls.ts';
import { endResultFromCall, isFinalCall, type VapiCallObject } from './call-mapping.ts';
import { vapiClients, type VapiClients } from './clients.ts';
import { isNotFound } from './dial-errors.ts';
import { createDial, findDial } from './dial.ts';
import type { VapiStoredEvent } from './stored-events.ts';
import { realScheduler, type Scheduler } from '../../../scheduler.ts';

export interface VapiAccount {
  apiKey: string;
  /** Vapi phone number id per from-number of ours; '*' for any other. */
  phoneNumberIds: Record<string, string>;
  /** The assistant when our agent names none. */
  assistantId?: string;
  /** Calls per second per from-number for this account; the provider default otherwise. */
  dialRatePerNumber?: number;
}

export interface VapiProviderOptions {
  baseUrl?: string;
  clients?: VapiClients;
  /** The account's Vapi config (decrypted), or null when it has none. */
  account(accountId: string): Promise<VapiAccount | null>;
  /** The Vapi assistant id named by our agent (provider_agent_id), if any. */
  assistant(agentId: string): Promise<string | null>;
  /** Unconsumed stored messages of these calls (our ids), each handed out once; see the Retell provider's `feed`. */
  feed(callIds: string[], owners?: (string | null)[]): Promise<VapiStoredEvent[]>;
  /** The calls of the end-of-call-reports stored for these Vapi calls, consumed or not. */
  reports(vapiCallIds: string[]): Promise<VapiCallObject[]>;
  /** The account of a Vapi call this process did not place (recovery of a dead worker's calls). */
  accountForCall?(vapiCallId: string): Promise<string | null>;
  now(): Date;
  /** Timers of the poll and the create backoff; default: the real one. */
  scheduler?: Scheduler;
  pollMs?: number;
  /** After max duration plus this, a call without an end is fetched with GET /call/{id}. */
  graceMs?: number;
  /** After status 'ended' plus this without an end-of-call-report, the call is fetched. */
  reportGraceMs?: number;
  /** After a call's end plus this, an analysis without end-of-call-report is fetched. */
  analysisGraceMs?: number;
  /** Calls per second per from-number when the account sets none; 0 = unpaced. */
  dialRatePerNumber?: number;
  maxAttempts?: number;
  backoffMs?: number;
  timeoutMs?: number;
  onError?(err: unknown, context: string): void;
}

interface Live {
  vapiCallId: string;
  req: PlaceCallRequest;
  apiKey: string;
  owner: string | null;
  placedAt: Date;
  answered: boolean;
  hangupRequested: boolean;
  /** When status 'ended' arrived (app clock, ms): the end-of-call-report is due. */
  endedSeenAt: number | null;
  controlUrl: string | null;
  /** The poll (its count) of the last get-call for it: reconciliation is throttled. */
  checkedAt: number | null;
}

/** How far back recovery looks for a dial whose call id was never stored (its worker died right after dialling). */
const RECOVERY_WINDOW_MS = 60 * 60_000;

export function createVapiProvider(opts: VapiProviderOptions): VoiceProvider {
  const pollMs = opts.pollMs ?? 500;
  const graceMs = opts.graceMs ?? 120_000;
  const reportGraceMs = opts.reportGraceMs ?? Math.min(graceMs, 30_000);
  const maxAttempts = opts.maxAttempts ?? 5;
  const backoffMs = opts.backoffMs ?? 500;
  const timeoutMs = opts.timeoutMs ?? 15_000;
  const onError = opts.onError ?? (() => undefined);
  const client = opts.clients ?? vapiClients({ baseUrl: opts.baseUrl, timeoutMs });
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

  const keyFor = async (accountId: string) => (await opts.account(accountId))?.apiKey ?? null;
  /** The key for a call: the watching one's, else its account's (named or looked up). */
  async function keyForCall(vapiCallId: string, accountId?: string): Promise<string | null> {
    const own = live.get(vapiCallId)?.apiKey;
    if (own) return own;
    const a = accountId ?? (await opts.accountForCall?.(vapiCallId)) ?? null;
    return a ? keyFor(a) : null;
  }
  const analyses = new AnalysisWaits({
    calls: vapiAnalysisCalls(client, opts.reports),
    keyFor,
    now: opts.now,
    graceMs: opts.analysisGraceMs ?? graceMs,
    backoffMs,
    onError,
  });

  const emit = (vapiCallId: string, e: ProviderCallEvent) => {
    for (const l of [...listeners]) {
      try {
        l({ ...e, providerCallId: vapiCallId });
      } catch (err) {
        onError(err, 'listener');
      }
    }
  };

  function end(call: Live, c: VapiCallObject) {
    if (!live.delete(call.vapiCallId)) return;
    analyses.remember(c);
    const result: CallEndResult = endResultFromCall(c, { recordingEnabled: call.req.recordingEnabled, now: opts.now() });
    emit(call.vapiCallId, { type: 'ended', callId: call.req.callId, at: result.endedAt, result });
  }

  function take(ev: VapiStoredEvent) {
    if (ev.type === 'end-of-call-report') analyses.remember(ev.call);
    const call = live.get(ev.call.id);
    if (!call) return;
    if (ev.call.monitor?.controlUrl) call.controlUrl = ev.call.monitor.controlUrl;
    if (ev.type === 'end-of-call-report') return end(call, ev.call);
    if (ev.status === 'in-progress' && !call.answered) {
      call.answered = true;
      const startedAt = ev.call.startedAt ? Date.parse(ev.call.startedAt) : NaN;
      const at = ev.at ?? (Number.isNaN(startedAt) ? null : startedAt);
      emit(call.vapiCallId, { type: 'answered', callId: call.req.callId, at: at !== null ? new Date(at) : opts.now() });
    } else if (ev.status === 'ended' && call.endedSeenAt === null) {
      call.endedSeenAt = opts.now().getTime();
    }
  }

  async function poll() {
    timer = null;
    if (closed || polling) return;
    polling = true;
    polls += 1;
    try {
      if (live.size > 0) {
        const byCall = new Map([...live.values()].map((c) => [c.req.callId, c.owner]));
        for (const ev of await opts.feed([...byCall.keys()], [...byCall.values()])) take(ev);
        await reconcile();
      }
      if (analyses.size > 0) await analyses.poll();
    } catch (err) {
      onError(err, 'poll');
    } finally {
      polling = false;
    }
    schedule();
  }

  function due(call: Live, now: number): boolean {
    if (call.hangupRequested) return true;
    if (call.endedSeenAt !== null && now - call.endedSeenAt >= reportGraceMs) return true;
    return now - call.placedAt.getTime() >= call.req.maxDurationSeconds * 1000 + graceMs;
  }

  async function reconcile() {
    const now = opts.now().getTime();
    for (const call of [...live.values()]) {
      if (!due(call, now) || (call.checkedAt !== null && polls - call.checkedAt < reconcileEvery)) continue;
      call.checkedAt = polls;
      try {
        const c = (await client(call.apiKey).calls.get({ id: call.vapiCallId })) as unknown as VapiCallObject;
        if (isFinalCall(c)) end(call, c);
      } catch (err) {
        onError(err, 'reconcile');
      }
    }
  }

  function schedule() {
    if (closed || timer || polling || (live.size === 0 && analyses.size === 0)) return;
    timer = scheduler.setTimeout(() => void poll(), pollMs, { background: true });
  }

  function watch(
    vapiCallId: string,
    req: PlaceCallRequest,
    apiKey: string,
    state: { answered: boolean; placedAt: Date; owner: string | null; controlUrl: string | null },
  ) {
    live.set(vapiCallId, { vapiCallId, req, apiKey, ...state, hangupRequested: false, endedSeenAt: null, checkedAt: null });
    schedule();
  }

  async function controlUrlOf(vapiCallId: string, apiKey: string): Promise<string | null> {
    const known = live.get(vapiCallId)?.controlUrl;
    if (known) return known;
    const c = (await client(apiKey).calls.get({ id: vapiCallId })) as unknown as VapiCallObject;
    return isFinalCall(c) ? null : (c.monitor?.controlUrl ?? null);
  }

  return {
    name: 'vapi',
    requestTimeoutMs: timeoutMs,

    async placeCall(req, ownership?: CallOwnership) {
      if (closed) throw new Error('vapi provider is closed');
      const account = await opts.account(req.accountId);
      const fail = (what: string) => {
        const message = `account ${req.accountId} has no Vapi ${what}`;
        return new DialRejectedError(message, 'provider_not_configured', { provider: 'vapi', provider_message: message });
      };
      if (!account?.apiKey) throw fail('API key');
      const phoneNumberId = account.phoneNumberIds[req.from] ?? account.phoneNumberIds['*'];
      if (!phoneNumberId) throw fail(`phone number for ${req.from}`);
      const assistantId = (await opts.assistant(req.agent.id)) ?? account.assistantId;
      if (!assistantId) throw fail('assistant (agent provider id or account assistantId)');
      const c = await createDial(
        client,
        account.apiKey,
        req,
        { assistantId, phoneNumberId },
        {
          maxAttempts,
          backoffMs,
          stopped: () => closed,
          scheduler,
          now: opts.now,
          mayCreate: ownership ? () => ownership.confirmDial() : undefined,
          holdsNow: ownership ? () => ownership.holdsNow() : undefined,
        },
      );
      watch(c.id, req, account.apiKey, {
        answered: false,
        placedAt: opts.now(),
        owner: ownership?.owner ?? null,
        controlUrl: c.monitor?.controlUrl ?? null,
      });
      return { providerCallId: c.id };
    },

    // The assistant's maxDurationSeconds (sent per call) ends a call on Vapi's side anyway; a
    // watched call is reconciled through GET /call/{id} from now on, so its end is recorded
    // without a message. A call this process does not watch is ended with its account's key.
    async hangup(providerCallId, _reason, ref) {
      const call = live.get(providerCallId);
      if (call) call.hangupRequested = true;
      const key = await keyForCall(providerCallId, ref?.accountId);
      if (!key) return onError(new Error(`no Vapi API key to end call ${providerCallId}`), 'end-call');
      try {
        const url = await controlUrlOf(providerCallId, key);
        if (!url) throw new Error(`Vapi call ${providerCallId} has no monitor.controlUrl (live control disabled?)`);
        const init = {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ type: 'end-call' }),
          signal: AbortSignal.timeout(timeoutMs),
        };
        // Gated like a create: a worker paused after its last confirmation sends nothing.
        const res = ref?.holdsNow ? await gatedFetch(url, { ...init, [SEND_GATE]: ref.holdsNow } as RequestInit) : await fetch(url, init);
        if (!res.ok) throw new Error(`Vapi end-call answered ${res.status}`);
      } catch (err) {
        onError(err, 'end-call');
      }
      if (call) schedule();
    },

    onEvent(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    async lookup(providerCallId: string, ref?: ProviderCallRef): Promise<ProviderCallLookup> {
      const key = await keyForCall(providerCallId, ref?.accountId);
      if (!key) return { state: 'unknown' };
      let c: VapiCallObject;
      try {
        c = (await client(key).calls.get({ id: providerCallId })) as unknown as VapiCallObject;
      } catch (err) {
        if (isNotFound(err)) return { state: 'unknown' };
        throw err;
      }
      if (c.status === 'not-found') return { state: 'unknown' };
      if (isFinalCall(c)) {
        analyses.remember(c);
        return { state: 'ended', result: endResultFromCall(c, { recordingEnabled: ref?.recordingEnabled ?? false, now: opts.now() }) };
      }
      const startedAt = c.status === 'in-progress' && c.startedAt ? Date.parse(c.startedAt) : NaN;
      return { state: 'in_flight', answeredAt: Number.isNaN(startedAt) ? null : new Date(startedAt) };
    },

    async findCall(ref: ProviderCallRef): Promise<string | null> {
      const account = await opts.account(ref.accountId);
      if (!account?.apiKey) return null;
      // Narrowed as createDial's own lookup is when the dial's number and start are known (failover):
      // one number's calls since the dial, not the whole account's last hour.
      const phoneNumberId = ref.from ? (account.phoneNumberIds[ref.from] ?? account.phoneNumberIds['*'] ?? null) : null;
      const since = ref.since ?? new Date(opts.now().getTime() - RECOVERY_WINDOW_MS);
      return (await findDial(client(account.apiKey), { callId: ref.callId, attempt: ref.attempt, phoneNumberId }, since))?.id ?? null;
    },

    async adopt(providerCallId, req, state) {
      if (closed) throw new Error('vapi provider is closed');
      const apiKey = await keyFor(req.accountId);
      if (!apiKey) throw new Error(`account ${req.accountId} has no Vapi API key`);
      watch(providerCallId, req, apiKey, { answered: state.answered, placedAt: state.dialledAt, owner: state.owner ?? null, controlUrl: null });
    },

    forget(providerCallId) {
      live.delete(providerCallId);
    },

    async analyse(req) {
      if (closed) throw new Error('vapi provider is closed');
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
