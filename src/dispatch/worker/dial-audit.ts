// The evidence of each dial (domain/dial-audit.ts), committed before the dial is placed: a
// conditional write through the worker's write queue (one statement for every dial of a claim
// round, or riding in the alternate's own dial write), so a dial never goes out without its entry
// and a worker that lost the call's lease writes nothing - and does not dial.
import type { CallWrite } from '../../services/calls/call-transitions.ts';
import { dialPermission, newDialCache, type DialAnswer, type DialCache } from '../../domain/dial-permission.ts';
import { dialAuditOf, type DialAudit } from '../../domain/dial-audit.ts';
import { numberZoneTable } from '../../services/batches/number-zone-table.ts';
import type { DispatchContext } from '../store/dispatch-context.ts';
import { callRef, dropLostCall, enqueueWrite } from './ledger.ts';
import type { LiveCall, WorkerState } from './state.ts';

/** Window intervals per batch settings, so judging a dial costs lookups, not zone arithmetic. */
const caches = new WeakMap<DispatchContext, DialCache>();

function cacheOf(ctx: DispatchContext, now: Date): DialCache {
  let c = caches.get(ctx);
  if (!c) caches.set(ctx, (c = newDialCache(now)));
  return c;
}

/** dialPermission for the number `call` is about to dial, now. */
export function judgeDial(call: LiveCall, now: Date): DialAnswer {
  return dialPermission(numberZoneTable(), { number: call.number, contactZone: call.contactZone ?? null, windows: call.ctx.windows, profiles: call.ctx.profiles, now, cache: cacheOf(call.ctx, now) });
}

/** The entry of the dial `call` is about to make (its number, attempt and alternate flag as set now). */
export function dialAuditFor(call: LiveCall, answer: DialAnswer, at: Date): DialAudit {
  return dialAuditOf(numberZoneTable(), { answer, number: call.number, contactZone: call.contactZone ?? null, at, attempt: call.attempts, alternate: call.usedAlternate });
}

/**
 * Commits the entry of a claimed call's dial (its state change was the claim). false: the call is
 * no longer this worker's; it was dropped and must not be dialled.
 */
export async function recordClaimedDialAudit(s: WorkerState, call: LiveCall, audit: DialAudit): Promise<boolean> {
  const write: CallWrite = { ...callRef(call), owner: s.settings.id, from: call.status, to: call.status, events: [], set: {}, audits: [audit] };
  const ok = await enqueueWrite(s, write, call.ctx.callbackUrl);
  if (!ok) dropLostCall(s, call, 'dial audit');
  return ok;
}
