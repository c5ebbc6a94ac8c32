// Default voice provider: no network, outcome decided by the contact's `sim` metadata (one outcome
// per attempt) or else the last digit of the dialled number, so demos and tests can pick the result
// they want (docs/dispatch.md, the simulator's outcomes).

import { VOICEMAIL_DISCONNECT_REASON } from '../../domain/attempt-outcome.ts';
import { systemClock, type Clock } from '../../deps.ts';
import { realScheduler, type Scheduler } from '../../scheduler.ts';
import { generateCallRecording, WAV_CONTENT_TYPE } from '../recording/wav.ts';
import { buildTranscript, fnv1a32, truncateTranscript } from './transcript.ts';
import {
  HANGUP_DISCONNECT_REASON,
  type CallEndResult,
  type HangupReason,
  type PlaceCallRequest,
  type ProviderCallEvent,
  type ProviderEventListener,
  type VoiceProvider,
} from './provider.ts';

/** The app clock for its timestamps, a scheduler for its calls' timers (test/helpers/dispatch.ts manualTimers is both). */
export type SimulatorClock = Clock & Scheduler;

export interface SimulatorOptions {
  /** Total length of a call, ringing included. */
  callMs: number;
  /** Time until answer (or until the busy signal). Default callMs / 5. */
  ringMs?: number;
  clock?: SimulatorClock;
  /** A throwing listener must not stall the other listeners or the simulator. */
  onListenerError?: (err: unknown) => void;
}

const realClock: SimulatorClock = { ...systemClock, ...realScheduler };

export type SimulatedOutcome =
  | { kind: 'no_answer' }
  | { kind: 'busy' }
  | { kind: 'dial_failed' }
  | { kind: 'voicemail' }
  /** optOut: the contact asks not to be called again (the local analyser's opt-out keys read yes). */
  | { kind: 'answered'; hangupBy: 'agent' | 'user'; optOut?: true };

export function simulatedOutcome(to: string): SimulatedOutcome {
  const digit = /(\d)\D*$/.exec(to)?.[1];
  switch (digit) {
    case '0':
      return { kind: 'no_answer' };
    case '1':
      return { kind: 'busy' };
    case '2':
    case undefined: // nothing dialable
      return { kind: 'dial_failed' };
    case '3':
      return { kind: 'answered', hangupBy: 'user' };
    default:
      return { kind: 'answered', hangupBy: 'agent' };
  }
}

const SIM_OUTCOMES = ['completed', 'no_answer', 'busy', 'failed', 'voicemail', 'opt_out'] as const;
type SimOutcomeName = (typeof SIM_OUTCOMES)[number];

const SIM_OUTCOME: Record<SimOutcomeName, SimulatedOutcome> = {
  completed: { kind: 'answered', hangupBy: 'agent' },
  no_answer: { kind: 'no_answer' },
  busy: { kind: 'busy' },
  failed: { kind: 'dial_failed' },
  voicemail: { kind: 'voicemail' },
  opt_out: { kind: 'answered', hangupBy: 'agent', optOut: true },
};

/** Longer `sim` values are ignored, so parsing one costs at most this much per dial. */
export const MAX_SIM_LENGTH = 256;

function withoutSimKey(metadata: Record<string, unknown>): Record<string, unknown> {
  if (!('sim' in metadata)) return metadata;
  const { sim: _control, ...rest } = metadata;
  return rest;
}

/** The `sim` metadata value as one outcome per attempt, or null when it is not a valid one. */
export function parseSimOutcomes(value: unknown): SimOutcomeName[] | null {
  if (typeof value !== 'string' || value.length > MAX_SIM_LENGTH) return null;
  const names: SimOutcomeName[] = [];
  for (const part of value.split(',')) {
    const name = part.trim().toLowerCase();
    if (!(SIM_OUTCOMES as readonly string[]).includes(name)) return null;
    names.push(name as SimOutcomeName);
  }
  return names;
}

/** The contact's `sim` entry for this attempt (the last one repeats), else the last-digit rule. */
export function simulatedOutcomeFor(req: Pick<PlaceCallRequest, 'to' | 'attempt' | 'contact'>): SimulatedOutcome {
  const planned = parseSimOutcomes(req.contact.metadata.sim);
  if (!planned) return simulatedOutcome(req.to);
  return SIM_OUTCOME[planned[Math.min(Math.max(req.attempt, 1), planned.length) - 1]];
}

interface LiveCall {
  providerCallId: string;
  req: PlaceCallRequest;
  outcome: SimulatedOutcome;
  startedAt: Date;
  answeredAt: Date | null;
  timer: unknown;
}

export function createSimulatorProvider(opts: SimulatorOptions): VoiceProvider {
  const clock = opts.clock ?? realClock;
  const callMs = Math.max(0, opts.callMs);
  const ringMs = Math.min(callMs, Math.max(0, opts.ringMs ?? callMs / 5));
  const onListenerError = opts.onListenerError ?? ((err) => console.error('voice simulator listener failed', err));
  const listeners = new Set<ProviderEventListener>();
  const live = new Map<string, LiveCall>();
  let seq = 0;
  let closed = false;

  const emit = (providerCallId: string, e: ProviderCallEvent) => {
    for (const l of [...listeners]) {
      try {
        l({ ...e, providerCallId });
      } catch (err) {
        onListenerError(err);
      }
    }
  };

  // Each step schedules the next, so events stay ordered whatever the clock does with equal delays.
  const after = (call: LiveCall, ms: number, step: () => void) => {
    call.timer = clock.setTimeout(() => {
      if (live.get(call.providerCallId) === call) step();
    }, ms);
  };

  const fullTranscript = (call: LiveCall, endedBy: 'agent' | 'user') =>
    buildTranscript({
      agentName: call.req.agent.name,
      promptText: call.req.prompt.text,
      contactName: call.req.contact.name,
      // `sim` steers this simulator; no agent would read it back to the contact.
      metadata: withoutSimKey(call.req.contact.metadata),
      endedBy,
      optOut: call.outcome.kind === 'answered' && !!call.outcome.optOut,
    });

  const finish = (call: LiveCall, fields: Pick<CallEndResult, 'status' | 'hangupBy' | 'disconnectReason' | 'transcript' | 'voicemailLeft'>) => {
    live.delete(call.providerCallId);
    const endedAt = clock.now();
    const recording =
      call.answeredAt && call.req.recordingEnabled
        ? {
            contentType: WAV_CONTENT_TYPE,
            data: generateCallRecording({
              durationMs: endedAt.getTime() - call.answeredAt.getTime(),
              seed: fnv1a32(call.req.callId),
            }),
          }
        : null;
    const result: CallEndResult = {
      ...fields,
      startedAt: call.startedAt,
      answeredAt: call.answeredAt,
      endedAt,
      recording,
    };
    emit(call.providerCallId, { type: 'ended', callId: call.req.callId, at: endedAt, result });
  };

  const ring = (call: LiveCall) => {
    emit(call.providerCallId, { type: 'ringing', callId: call.req.callId, at: clock.now() });
  };

  const run = (call: LiveCall) => {
    const { outcome } = call;
    switch (outcome.kind) {
      case 'dial_failed':
        return finish(call, { status: 'failed', hangupBy: 'system', disconnectReason: 'dial_failed', transcript: null });
      case 'busy':
        ring(call);
        return after(call, ringMs, () => finish(call, { status: 'busy', hangupBy: null, disconnectReason: 'busy', transcript: null }));
      case 'no_answer':
        ring(call);
        return after(call, callMs, () => finish(call, { status: 'no_answer', hangupBy: null, disconnectReason: 'no_answer', transcript: null }));
      case 'voicemail': {
        // Voicemail picks up, but nobody was reached: no answer event, transcript or recording.
        // Leaving the batch's message keeps the line a ring's length longer; else it hangs up, as
        // it does when the batch chose nothing.
        const leaves = call.req.voicemail?.action === 'leave_message';
        ring(call);
        return after(call, leaves ? callMs + ringMs : callMs, () =>
          finish(call, {
            status: 'no_answer',
            hangupBy: 'system',
            disconnectReason: VOICEMAIL_DISCONNECT_REASON,
            transcript: null,
            voicemailLeft: leaves,
          }),
        );
      }
      case 'answered':
        ring(call);
        return after(call, ringMs, () => {
          call.answeredAt = clock.now();
          emit(call.providerCallId, { type: 'answered', callId: call.req.callId, at: call.answeredAt });
          after(call, callMs - ringMs, () =>
            finish(call, {
              status: 'completed',
              hangupBy: outcome.hangupBy,
              disconnectReason: outcome.hangupBy === 'user' ? 'normal' : 'agent_hangup',
              transcript: fullTranscript(call, outcome.hangupBy),
            }),
          );
        });
    }
  };

  return {
    name: 'simulator',

    async placeCall(req) {
      if (closed) throw new Error('voice simulator is closed');
      const providerCallId = `sim_${req.callId}_${req.attempt}_${++seq}`;
      const call: LiveCall = {
        providerCallId,
        req,
        outcome: simulatedOutcomeFor(req),
        startedAt: clock.now(),
        answeredAt: null,
        timer: undefined,
      };
      live.set(providerCallId, call);
      // Nothing is emitted before the caller has the providerCallId in hand.
      after(call, 0, () => run(call));
      return { providerCallId };
    },

    async hangup(providerCallId: string, reason: HangupReason) {
      const call = live.get(providerCallId);
      if (!call) return;
      clock.clearTimeout(call.timer);
      const talkedMs = call.answeredAt ? clock.now().getTime() - call.answeredAt.getTime() : 0;
      const plannedTalkMs = callMs - ringMs;
      const outcome = call.outcome;
      const transcript =
        call.answeredAt && outcome.kind === 'answered'
          ? truncateTranscript(fullTranscript(call, outcome.hangupBy), plannedTalkMs > 0 ? talkedMs / plannedTalkMs : 1)
          : null;
      finish(call, {
        status: call.answeredAt ? 'completed' : 'failed',
        hangupBy: 'system',
        disconnectReason: HANGUP_DISCONNECT_REASON[reason],
        transcript,
      });
    },

    onEvent(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    // In-flight calls are dropped without an 'ended' event: the worker's leases recover them.
    async close() {
      closed = true;
      for (const call of live.values()) clock.clearTimeout(call.timer);
      live.clear();
      listeners.clear();
    },
  };
}
