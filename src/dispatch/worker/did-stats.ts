// What an ended attempt adds to its caller-ID number's health (services/number-health/did-stats.ts).
import { isShortCall, utcDay } from '../../domain/number-health.ts';
import type { DidAttemptStat } from '../../services/number-health/did-stats.ts';
import { callDurations, type CallEndResult } from '../voice/provider.ts';
import type { LiveCall, WorkerState } from './state.ts';

/**
 * The number the current dial was placed from (the pool's choice, else the batch's own DID); null:
 * unknown here (an adopted call), the call's stored from_number then.
 */
export const dialledFrom = (call: LiveCall): string | null => call.from ?? call.ctx.from;

/**
 * The attempt's stat; none for a dial the provider never took (no provider call: nobody was rung,
 * so it says nothing about the number). `from`: the dial's caller ID when `call` has moved on.
 */
export function attemptStats(s: WorkerState, call: LiveCall, result: CallEndResult, from = dialledFrom(call)): DidAttemptStat[] | undefined {
  if (!call.providerCallId) return undefined;
  const answered = result.answeredAt !== null;
  const short = isShortCall(answered, callDurations(result).answerDurationSeconds, s.settings.shortCallSeconds);
  return [{ fromNumber: from, day: utcDay(result.endedAt), answered, short }];
}
