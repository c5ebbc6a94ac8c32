// The evidence of each dial (domain/dial-audit.ts), a conditional write through the worker's write
// queue, so a worker that lost the call's lease writes nothing. An alternate's entry rides in its
// own dial write, which commits before the dial. A claimed dial's (its state change was the claim)
// rides with the call's next write - its provider call id, its ringing - committed in the same
// group a few ms after the dial: an awaited write of its own before every dial put one more
// statement in each claim round's path (bench:dispatch scenario 5, load 20+ on 2 cores: 198 calls/s
// against 519 without). A worker that dies in those few ms leaves that one dial without an entry.
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
  return dialPermission(numberZoneTable(), {
    number: call.number,
    contactZone: call.contactZone ?? null,
    windows: call.ctx.windows,
    profiles: call.ctx.profiles,
    now,
    cache: cacheOf(call.ctx, now),
  });
}

/** The entry of the dial `call` is about to make (its number, attempt and alternate flag as set now). */
export function dialAuditFor(call: LiveCall, answer: DialAnswer, at: Date): DialAudit {
  return dialAuditOf(numberZoneTable(), {
    answer,
    number: call.number,
    contactZone: call.contactZone ?? null,
    at,
    attempt: call.attempts,
    alternate: call.usedAlternate,
  });
}

/** Longest a claimed dial's entry waits for the call's next write before it commits on its own. */
export const CLAIMED_AUDIT_DEFER_MS = 250;

/**
 * Queues the entry of a claimed call's dial, to commit with the call's next write (or on its own
 * after CLAIMED_AUDIT_DEFER_MS). Not applied: the call is no longer this worker's, and is dropped.
 */
export function queueClaimedDialAudit(s: WorkerState, call: LiveCall, audit: DialAudit): void {
  const write: CallWrite = { ...callRef(call), owner: s.settings.id, from: call.status, to: call.status, events: [], set: {}, audits: [audit] };
  void enqueueWrite(s, write, call.ctx.callbackUrl, { deferMs: CLAIMED_AUDIT_DEFER_MS }).then((ok) => {
    if (!ok) dropLostCall(s, call, 'dial audit');
  });
}
