// A call's dial: its pacing slot, the lease proof right before it, the provider's placeCall, and
// what a dial that never reached the provider ends as. Whatever follows the dial's end (an
// alternate number, a retry, the end) is call-session.ts's to decide: it is reached through the
// seam, not imported.
import type { CallWrite } from '../../services/calls/call-transitions.ts';
import type { DispatchContext } from '../store/dispatch-context.ts';
import { DialForfeitedError, DialRejectedError, type PlaceCallRequest, type VoiceProvider } from '../voice/provider.ts';
import { failedDial } from './attempt-end.ts';
import { requestHangup } from './hangups.ts';
import { callRef, dropLostCall, enqueueWrite, stopWatching } from './ledger.ts';
import { dialOwnership } from './ownership.ts';
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
  let provider: VoiceProvider;
  try {
    provider = subscribedProvider(s, s.providers.get(call.ctx.provider), seam);
  } catch (err) {
    s.log.error({ err, callId: call.callId, provider: call.ctx.provider }, 'voice provider unavailable');
    return seam.ended(call, failedDial(s, call, 'provider_unavailable'));
  }
  call.provider = provider;
  s.book.dialsInFlight += 1;
  try {
    await waitForDialSlot(s, call, provider);
    // Right before the dial, the lease must still be ours for longer than the dial can take: the
    // claim's is, unless this process stalled since (else a conditional write confirms it).
    const ownership = dialOwnership(s, call);
    if (!(await ownership.confirmDial())) return forfeitDial(s, call);
    const { providerCallId } = await provider.placeCall(placeCallRequest(call), ownership);
    s.deps.metrics.callsPlaced.inc();
    if (s.book.live.get(call.callId) !== call) {
      // Lost while dialling: whoever took the call over finds it at the provider (recovery looks
      // it up) and watches it; this process touches it no more.
      provider.forget?.(providerCallId);
      return;
    }
    call.providerCallId = providerCallId;
    s.book.liveByProviderCall.set(providerCallId, call);
    // Only recovery (provider lookup) reads it, and recovery starts a lease length later anyway.
    // The number it went out from rides with it (calls.from_number), no write of its own.
    const fromNumber = callerIdOf(call) ?? undefined;
    const idWrite: CallWrite = {
      ...callRef(call),
      owner: s.settings.id,
      from: call.status,
      to: call.status,
      events: [],
      set: { providerCallId, ...(fromNumber ? { fromNumber } : {}) },
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

/** Not dialled: the call is no longer surely ours. Nothing is written; its new owner or its lease's lapse settles it. */
export function forfeitDial(s: WorkerState, call: LiveCall): void {
  if (s.book.live.get(call.callId) !== call) return;
  s.log.warn({ callId: call.callId, batchId: call.batchId }, 'lease not confirmed before the dial; not dialled');
  stopWatching(s, call);
}
