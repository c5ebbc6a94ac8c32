// Retell behind the VoiceProvider interface.
//
// Dialling: create-phone-call through retell-sdk (baseURL configurable, so tests use a local fake).
// Never two Retell calls for one of our calls: before every create (first try or retry) the call is
// looked up by our call id in its metadata (list-calls), so a create whose answer was lost to a
// timeout or 5xx, or a dial repeated after a worker died, adopts the existing Retell call.
// 429/5xx/network errors retry with exponential backoff; other 4xx fail the dial with Retell's message.
//
// Events: Retell POSTs webhooks to whichever API process; they are stored (provider_events) and this
// provider reads those for the calls it placed (`feed`) - so the dialling worker gets them whatever
// process received them. Reconciliation: a call without a final event after its max duration plus
// `graceMs` is fetched with get-call and settled from Retell's call object (a lost call_ended).

import Retell from 'retell-sdk';
import type { CallEndResult, HangupReason, PlaceCallRequest, ProviderCallEvent, ProviderCallLookup, ProviderEventListener, VoiceProvider } from '../provider.ts';
import { createPhoneCallBody, endResultFromCall, isFinalCall, type RetellAgentRef, type RetellCallObject } from './call-mapping.ts';

export interface RetellStoredEvent {
  event: string;
  call: RetellCallObject;
}

export interface RetellProviderOptions {
  baseURL?: string;
  /** The account's Retell API key (decrypted) and its own dial pacing, or null when it has no key. */
  account(accountId: string): Promise<{ apiKey: string; dialRatePerNumber?: number } | null>;
  /** Retell agent id/version for our agent + prompt version. */
  agent(agentId: string, promptVersionId: string): Promise<RetellAgentRef>;
  /** Unconsumed webhook events for these calls (our call ids), each handed out once. */
  feed(callIds: string[]): Promise<RetellStoredEvent[]>;
  /** The account of a Retell call this process did not place (recovery of a dead worker's calls). */
  accountForCall?(retellCallId: string): Promise<string | null>;
  now(): Date;
  pollMs?: number;
  graceMs?: number;
  /** Calls per second per from-number; 0 = unpaced. */
  dialRatePerNumber?: number;
  maxAttempts?: number;
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
}

export class RetellDialError extends Error {}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function retryable(err: unknown): boolean {
  if (err instanceof Retell.APIError) {
    const s = err.status;
    return s === undefined || s === 429 || s >= 500;
  }
  return true;
}

export function createRetellProvider(opts: RetellProviderOptions): VoiceProvider {
  const pollMs = opts.pollMs ?? 500;
  const graceMs = opts.graceMs ?? 120_000;
  const maxAttempts = opts.maxAttempts ?? 5;
  const backoffMs = opts.backoffMs ?? 500;
  const onError = opts.onError ?? (() => undefined);
  const clients = new Map<string, Retell>();
  const listeners = new Set<ProviderEventListener>();
  const live = new Map<string, Live>();
  const nextDialAt = new Map<string, number>();
  let timer: ReturnType<typeof setTimeout> | null = null;
  let closed = false;

  const client = (apiKey: string) => {
    let c = clients.get(apiKey);
    if (!c) {
      // Retries are ours (with the lookup before each), never the SDK's blind ones.
      c = new Retell({ apiKey, baseURL: opts.baseURL, maxRetries: 0, timeout: opts.timeoutMs ?? 15_000 });
      clients.set(apiKey, c);
    }
    return c;
  };

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
    const result: CallEndResult = endResultFromCall(c, call.placedAt, opts.now());
    emit(call.retellCallId, { type: 'ended', callId: call.req.callId, at: result.endedAt, result });
  }

  async function pace(from: string, accountRate: number | undefined) {
    const rate = accountRate ?? opts.dialRatePerNumber ?? 0;
    if (rate <= 0) return;
    const gap = 1000 / rate;
    const now = Date.now();
    const at = Math.max(now, nextDialAt.get(from) ?? 0);
    nextDialAt.set(from, at + gap);
    if (at > now) await sleep(at - now);
  }

  async function existing(c: Retell, callId: string): Promise<RetellCallObject | null> {
    // POST /v2/list-calls as published in the OpenAPI file (the SDK's call.list() targets /v3).
    const list = (await c.post('/v2/list-calls', {
      body: { filter_criteria: { metadata: { 'metadata.call_id': [callId] } }, limit: 10 },
    })) as unknown as RetellCallObject[];
    return list.find((x) => (x.metadata as { call_id?: unknown } | null)?.call_id === callId) ?? null;
  }

  async function create(req: PlaceCallRequest, apiKey: string, rate: number | undefined): Promise<RetellCallObject> {
    const c = client(apiKey);
    const agent = await opts.agent(req.agent.id, req.prompt.id);
    const body = createPhoneCallBody(req, agent);
    for (let attempt = 1; ; attempt++) {
      try {
        const found = await existing(c, req.callId);
        if (found) return found;
        await pace(req.from, rate);
        return (await c.call.createPhoneCall(body as never)) as unknown as RetellCallObject;
      } catch (err) {
        if (!retryable(err)) throw new RetellDialError(err instanceof Error ? err.message : String(err));
        if (attempt >= maxAttempts || closed) throw err;
        await sleep(backoffMs * 2 ** (attempt - 1) * (0.5 + Math.random() / 2));
      }
    }
  }

  async function poll() {
    timer = null;
    if (closed) return;
    try {
      if (live.size > 0) {
        const events = await opts.feed([...live.values()].map((c) => c.req.callId));
        for (const ev of events) {
          const call = live.get(ev.call.call_id);
          if (!call) continue;
          if (ev.event === 'call_started' && !call.answered) {
            call.answered = true;
            const at = ev.call.start_timestamp ? new Date(ev.call.start_timestamp) : opts.now();
            emit(call.retellCallId, { type: 'answered', callId: call.req.callId, at });
          } else if ((ev.event === 'call_ended' || ev.event === 'call_analyzed') && isFinalCall(ev.call)) {
            end(call, ev.call);
          }
        }
        await reconcile();
      }
    } catch (err) {
      onError(err, 'poll');
    }
    schedule();
  }

  async function reconcile() {
    const now = opts.now().getTime();
    for (const call of [...live.values()]) {
      if (now - call.placedAt.getTime() < call.req.maxDurationSeconds * 1000 + graceMs && !call.hangupRequested) continue;
      try {
        const c = (await client(call.apiKey).call.retrieve(call.retellCallId)) as unknown as RetellCallObject;
        if (isFinalCall(c)) end(call, c);
      } catch (err) {
        onError(err, 'reconcile');
      }
    }
  }

  function schedule() {
    if (closed || timer) return;
    timer = setTimeout(() => void poll(), pollMs);
    timer.unref?.();
  }

  return {
    name: 'retell',

    async placeCall(req) {
      if (closed) throw new Error('retell provider is closed');
      const account = await opts.account(req.accountId);
      if (!account?.apiKey) throw new RetellDialError(`account ${req.accountId} has no Retell API key`);
      const apiKey = account.apiKey;
      const c = await create(req, apiKey, account.dialRatePerNumber);
      live.set(c.call_id, { retellCallId: c.call_id, req, apiKey, placedAt: opts.now(), answered: false, hangupRequested: false });
      schedule();
      return { providerCallId: c.call_id };
    },

    // stop-call is in retell-sdk but not in the published OpenAPI revision: best effort. The
    // agent's max_call_duration_ms (sent per call) ends a call on Retell's side anyway; the call
    // is reconciled through get-call from now on, so its end is recorded without a webhook.
    async hangup(providerCallId: string, _reason: HangupReason) {
      const call = live.get(providerCallId);
      if (!call) return;
      call.hangupRequested = true;
      await client(call.apiKey).call.stop(providerCallId).catch((err) => onError(err, 'stop-call'));
      schedule();
    },

    onEvent(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    async lookup(providerCallId: string): Promise<ProviderCallLookup> {
      let key = live.get(providerCallId)?.apiKey ?? null;
      if (!key) {
        const accountId = await opts.accountForCall?.(providerCallId);
        key = accountId ? ((await opts.account(accountId))?.apiKey ?? null) : null;
      }
      if (!key) return { state: 'unknown' };
      const c = (await client(key).call.retrieve(providerCallId)) as unknown as RetellCallObject;
      return isFinalCall(c) ? { state: 'ended', result: endResultFromCall(c, opts.now(), opts.now()) } : { state: 'in_flight' };
    },

    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      live.clear();
      listeners.clear();
    },
  };
}
