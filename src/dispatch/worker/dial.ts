// A call's dial: through the account's provider route (route-dial.ts), each provider's pacing slot,
// the lease proof right before it, its placeCall, and what a dial that never reached a provider
// ends as. Whatever follows the dial's end (an alternate number, a retry, the end) is
// call-session.ts's to decide: it is reached through the seam, not imported.
import type { CallWrite } from '../../services/calls/call-transitions.ts';
import type { DispatchContext } from '../store/dispatch-context.ts';
import { DialForfeitedError, DialRejectedError, type PlaceCallRequest, type VoiceProvider } from '../voice/provider.ts';
import { failedDial, waitForAlternate, withheldWait } from './attempt-end.ts';
import { requestHangup } from './hangups.ts';
import { callRef, dropLostCall, enqueueWrite, stopWatching } from './ledger.ts';
import { dialOwnership } from './ownership.ts';
import { dialAuditFor, judgeDial, queueClaimedDialAudit } from './dial-audit.ts';
import { dialRoute, type Refusal } from './route-dial.ts';
import { sleep, type LiveCall, type SessionSeam, type WorkerState } from './state.ts';

/** The provider call id is written with the call's next change, or on its own after this long. */
const PROVIDER_ID_DEFER_MS = 250;

/** The provider, subscribed to: its events reach this worker's calls. */
export function subscribedProvider(s: WorkerState, p: VoiceProvider, seam: SessionSeam): VoiceProvider {
  if (!s.caches.subscriptions.has(p))
    s.caches.subscriptions.set(
      p,
      p.onEvent((e) => seam.event(e)),
    );
  return p;
}

/** The number the dial is placed from: the one chosen for it (caller-ID pool), else the batch's own DID. */
export function callerIdOf(call: LiveCall): string | null {
  return call.from ?? call.ctx.from;
}

export function placeCallRequest(call: LiveCall): PlaceCallRequest {
  return {
    callId: call.callId,
    batchId: call.batchId,
    accountId: call.accountId,
    attempt: call.attempts,
    from: callerIdOf(call) ?? '',
    to: call.number,
    agent: call.ctx.agent,
    prompt: call.ctx.prompt,
    contact: call.contact,
    recordingEnabled: call.ctx.recordingEnabled,
    interruption: call.ctx.interruption,
    maxDurationSeconds: call.ctx.maxDurationSeconds,
    ...(call.ctx.voicemail ? { voicemail: call.ctx.voicemail } : {}),
  };
}

export function newLiveCall(
  ctx: DispatchContext,
  c: Omit<LiveCall, 'ctx' | 'provider' | 'providerCallId' | 'answered' | 'answeredAt' | 'hangup'> & Partial<LiveCall>,
): LiveCall {
  return { provider: null, providerCallId: null, answered: false, answeredAt: null, hangup: null, ...c, ctx };
}

/** The dial's pacing slot (normally free at once: the claim only took calls that may start now). */
async function waitForDialSlot(s: WorkerState, call: LiveCall, provider: VoiceProvider): Promise<void> {
  const from = callerIdOf(call);
  if (!provider.dialRate || !from) return;
  const rate = await provider.dialRate(call.accountId);
  const wait = s.pacer.take(from, rate);
  if (wait <= 0) return;
  await sleep(s, wait);
  // The max-duration clock starts when the call is really placed.
  call.dialledAt = s.clock.now();
}

export async function placeCall(s: WorkerState, call: LiveCall, seam: SessionSeam): Promise<void> {
  if (!callerIdOf(call)) return seam.ended(call, failedDial(s, call, 'no_caller_id'));
  s.book.dialsInFlight += 1;
  try {
    const dial = await dialRoute(s, call, {
      place: (p) => placeThrough(s, call, p, seam),
      request: () => placeCallRequest(call),
      rejudge: () => rejudgeDial(s, call),
    });
    if (dial.kind === 'no_provider') {
      s.log.error({ callId: call.callId, provider: call.ctx.provider }, 'voice provider unavailable');
      return seam.ended(call, failedDial(s, call, 'provider_unavailable'));
    }
    if (dial.kind === 'unavailable') return await providersUnavailable(s, call, dial.retryAt, dial.refused);
    if (dial.kind === 'withheld') return await seam.withheld(call, dial.permit);
    const { provider, providerCallId } = dial;
    s.deps.metrics.callsPlaced.inc();
    if (s.book.live.get(call.callId) !== call) {
      // Lost while dialling: whoever took the call over finds it at the provider (recovery looks
      // it up) and watches it; this process touches it no more.
      provider.forget?.(providerCallId);
      return;
    }
    call.provider = provider;
    call.providerCallId = providerCallId;
    s.book.liveByProviderCall.set(providerCallId, call);
    // Only recovery (provider lookup) reads them, and recovery starts a lease length later anyway.
    // The number it went out from rides with them (calls.from_number), no write of its own.
    const fromNumber = callerIdOf(call) ?? undefined;
    const idWrite: CallWrite = {
      ...callRef(call),
      owner: s.settings.id,
      from: call.status,
      to: call.status,
      events: failoverEvents(s, call, dial.name, dial.refused),
      set: { providerCallId, provider: dial.name, ...(fromNumber ? { fromNumber } : {}) },
    };
    void enqueueWrite(s, idWrite, call.ctx.callbackUrl, { deferMs: PROVIDER_ID_DEFER_MS }).then((ok) => {
      if (!ok) dropLostCall(s, call, 'provider id');
    });
    if (call.hangup) await requestHangup(s, call, call.hangup.reason);
    const buffered = s.book.eventsBeforeDial.get(providerCallId);
    if (buffered) {
      s.book.eventsBeforeDial.delete(providerCallId);
      for (const e of buffered) seam.event(e);
    }
  } catch (err) {
    if (err instanceof DialForfeitedError) {
      forfeitDial(s, call);
    } else if (err instanceof DialRejectedError) {
      s.log.warn({ callId: call.callId, reason: err.disconnectReason, message: err.message }, 'provider rejected the call');
      seam.ended(call, failedDial(s, call, err.disconnectReason, err.detail));
    } else {
      s.log.warn({ err, callId: call.callId }, 'dial failed');
      seam.ended(call, failedDial(s, call, 'dial_error', { error: err instanceof Error ? err.message : String(err) }));
    }
  } finally {
    s.book.dialsInFlight -= 1;
  }
}

/**
 * Before a later provider of the route: the dial is judged again now (a failover can take minutes,
 * past a window's close), and its start moves to now, for the max-duration rule and the audit entry
 * queued for it when it is allowed.
 */
function rejudgeDial(s: WorkerState, call: LiveCall) {
  const now = s.clock.now();
  const permit = judgeDial(call, now);
  call.permit = permit;
  if (!permit.allowed) return permit;
  call.dialledAt = now;
  queueClaimedDialAudit(s, call, dialAuditFor(call, permit, now));
  return permit;
}

/** One provider's try at the dial: its pacing slot, the lease proof right before it, its placeCall. */
async function placeThrough(s: WorkerState, call: LiveCall, provider: VoiceProvider, seam: SessionSeam): Promise<string> {
  call.provider = subscribedProvider(s, provider, seam);
  await waitForDialSlot(s, call, provider);
  // Right before the dial, the lease must still be ours for longer than the dial can take: the
  // claim's is, unless this process stalled since (else a conditional write confirms it).
  const ownership = dialOwnership(s, call);
  if (!(await ownership.confirmDial())) throw new DialForfeitedError(call.callId);
  return (await provider.placeCall(placeCallRequest(call), ownership)).providerCallId;
}

/** The history row of a dial that went past providers of its route. */
function failoverEvents(s: WorkerState, call: LiveCall, provider: string, refused: Refusal[]): CallWrite['events'] {
  if (refused.length === 0) return [];
  return [{ from: call.status, to: call.status, at: s.clock.now(), detail: { event: 'failover', provider, refused } }];
}

/** No provider of the route took the dial and none created it: the call goes back in line, not dialled. */
function providersUnavailable(s: WorkerState, call: LiveCall, retryAt: number, refused: Refusal[]): Promise<void> {
  s.log.warn({ callId: call.callId, refused }, 'no provider of the route took the dial; the call waits');
  const next = { at: new Date(retryAt), windowClosesAt: null };
  if (call.usedAlternate) return waitForAlternate(s, call, next, null);
  return withheldWait(s, call, next, 'retry', { reason: 'provider_unavailable', refused });
}

/** Not dialled: the call is no longer surely ours. Nothing is written; its new owner or its lease's lapse settles it. */
export function forfeitDial(s: WorkerState, call: LiveCall): void {
  if (s.book.live.get(call.callId) !== call) return;
  s.log.warn({ callId: call.callId, batchId: call.batchId }, 'lease not confirmed before the dial; not dialled');
  stopWatching(s, call);
}
