// Calls of workers that went away (their lease lapsed after the dial). Each is settled with the
// provider's result when it ended, adopted (watched from here on) when the provider still has it
// in flight and can report on it, or failed as dispatcher_lost when nobody can tell how it went;
// never dialled again. The provider is asked about a few at a time and only until the round's
// budget is spent; a call it could not tell about is asked again later with backoff. It is told to
// act (watch, hang up) only once the conditional write making the call this worker's applied.
import { beforeDeadline, deadlineIn, type Deadline } from '../../scheduler.ts';
import { applyCallWrites, type CallWrite } from '../../services/calls/call-transitions.ts';
import { endedWrite, lostCallWrite, type CallRef } from '../store/call-writes.ts';
import type { DispatchContext } from '../store/dispatch-context.ts';
import { adoptLostCall, findLostCalls, type LostCall } from '../store/lease-recovery.ts';
import type { ProviderCallRef, VoiceProvider } from '../voice/provider.ts';
import { markAnswered, subscribedProvider } from './call-session.ts';
import { newLiveCall, placeCallRequest } from './dial.ts';
import { afterCommit } from './commits.ts';
import { withVoicemailLeft } from './attempt-end.ts';
import { keepLeases } from './leases.ts';
import { forgetStaleWindows, knownProvider, loadBatchSettings } from './providers.ts';
import { heldCallIds, type WorkerState } from './state.ts';

/** How long recovery keeps asking a failing provider about a lost call before failing it as lost. */
const LOOKUP_PATIENCE_MS = 10 * 60_000;
/** Lost calls whose provider is asked at the same time, per recovery round. */
const RECOVERY_PARALLEL = 8;
/** A lost call the provider could not tell about is asked again after this, doubling up to the max. */
const RECOVERY_RETRY_BASE_MS = 5_000;
const RECOVERY_RETRY_MAX_MS = 2 * 60_000;

class RecoveryDeadline extends Error {
  override name = 'RecoveryDeadline';
}

/** `p`, or a RecoveryDeadline rejection once the round's budget is spent (p runs on, ignored). */
const withinBudget = <T>(p: Promise<T>, budget: Deadline): Promise<T> =>
  beforeDeadline(p, budget, () => new RecoveryDeadline('provider did not answer within the recovery round'));

/** Runs `fn` over `items`, at most `parallel` at a time. */
async function forEachLimited<T>(items: T[], parallel: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(parallel, items.length) }, lane));
}

/** One recovery round; returns how many lost calls it settled or adopted. */
export async function recoverLostCalls(s: WorkerState, now: Date): Promise<number> {
  const nowMs = now.getTime();
  const waiting: string[] = [];
  for (const [callId, r] of s.caches.recoveryRetry) {
    if (r.at > nowMs) waiting.push(callId);
    // Long overdue and not seen since: settled elsewhere.
    else if (nowMs - r.at > RECOVERY_RETRY_MAX_MS) s.caches.recoveryRetry.delete(callId);
  }
  const lost = await findLostCalls(s.deps, now, [...heldCallIds(s), ...waiting]);
  if (lost.length === 0) return 0;
  forgetStaleWindows(s, lost);
  await loadBatchSettings(
    s,
    lost.map((l) => l.batchId),
  ).catch((err) => s.log.warn({ err }, 'could not load batch settings of lost calls'));
  const budget = deadlineIn(s.scheduler, s.settings.recoveryBudgetMs);
  const writes: CallWrite[] = [];
  const hangups = new Map<string, () => Promise<void>>();
  let adopted = 0;
  let deferred = 0;
  const release = keepLeases(s);
  try {
    await forEachLimited(lost, RECOVERY_PARALLEL, async (l) => {
      if (budget.passed || s.lifecycle.windingDown) {
        deferred += 1;
        return;
      }
      const r = await recoverCall(s, l, now, budget);
      if (r === null) {
        askAgainLater(s, l.id, nowMs);
        return;
      }
      s.caches.recoveryRetry.delete(l.id);
      if (r === 'adopted') adopted += 1;
      else {
        writes.push(r.write);
        if (r.hangup) hangups.set(l.id, r.hangup);
      }
    });
  } finally {
    budget.cancel();
    release();
  }
  if (deferred > 0) s.log.info({ deferred }, 'recovery round budget spent; remaining lost calls wait for the next round');
  const result = await applyCallWrites(s.deps, writes, now);
  afterCommit(s, writes, result);
  for (const [callId, hangup] of hangups) if (result.applied.has(callId)) void hangup();
  for (const l of lost) {
    if (result.applied.has(l.id))
      s.log.warn({ callId: l.id, batchId: l.batchId, previousWorker: l.leaseOwner, status: l.status }, 'recovered call of a lost worker');
  }
  return result.applied.size + adopted;
}

function askAgainLater(s: WorkerState, callId: string, nowMs: number): void {
  const failures = (s.caches.recoveryRetry.get(callId)?.failures ?? 0) + 1;
  const delay = Math.min(RECOVERY_RETRY_MAX_MS, RECOVERY_RETRY_BASE_MS * 2 ** (failures - 1));
  s.caches.recoveryRetry.set(callId, { at: nowMs + delay, failures });
}

/** The write that settles a lost call, and the hang-up to send once it applied (the call was still talking). */
interface Settlement {
  write: CallWrite;
  hangup?: () => Promise<void>;
}

/**
 * How a lost call is settled, 'adopted', or null: try later. Provider answers count only if they
 * come before the round's `budget` is spent.
 */
async function recoverCall(s: WorkerState, l: LostCall, now: Date, budget: Deadline): Promise<Settlement | 'adopted' | null> {
  const r: CallRef = { callId: l.id, batchId: l.batchId, accountId: l.accountId };
  const ctx = s.caches.contexts.get(l.batchId);
  const patient = now.getTime() - l.leaseExpiresAt.getTime() < LOOKUP_PATIENCE_MS;
  const callRef: ProviderCallRef = { callId: l.id, accountId: l.accountId, attempt: l.attempts, recordingEnabled: ctx?.recordingEnabled ?? false };
  // No stored id and a route: the dial may have gone through any of its providers.
  const routed = !l.providerCallId && l.route.length > 1 ? await routedDial(s, l, callRef, budget) : undefined;
  if (routed === null) return patient ? null : { write: lostCallWrite(r, l, now, s.settings.id) };
  const providerName = routed?.name ?? l.provider;
  const provider = knownProvider(s, providerName);
  if (provider?.lookup) {
    // A call still talking is adopted, which needs its batch's settings: without them (not
    // loadable right now), later - failing it would leave it running unobserved.
    if (provider.adopt && !ctx && patient) return null;
    try {
      // The worker may have died between the provider accepting the call and storing its id.
      const providerCallId =
        l.providerCallId ?? routed?.providerCallId ?? (provider.findCall ? await withinBudget(provider.findCall(callRef), budget) : null);
      // Not there yet may mean on its way: a provider can take up to its request timeout to create
      // a call the lost worker sent before its lease lapsed (a slow provider, the fault campaign's
      // seed 20261131 round 147). Settled as never dialled only once that has passed.
      if (!providerCallId && now.getTime() < l.leaseExpiresAt.getTime() + createTimeoutMs(s, l, provider)) return null;
      const found = providerCallId ? await withinBudget(provider.lookup(providerCallId, callRef), budget) : ({ state: 'unknown' } as const);
      if (found.state === 'ended') {
        // The lease stays (expired) when analysis is due: takeOverStaleAnalysis picks it up.
        // Without the batch's settings at hand, whether a message was left stays unknown.
        const result = withVoicemailLeft(found.result, ctx?.voicemail ?? null);
        const { write } = endedWrite(r, l.leaseOwner, l.status, result, l.dialedNumber, {
          leaseExpiredBefore: now,
          detail: { recovered: true, previous_worker: l.leaseOwner, worker: s.settings.id },
          providerAnalysis: !!provider.analyse,
          ...(l.providerCallId ? {} : { providerCallId: providerCallId!, provider: providerName }),
        });
        return { write };
      }
      if (found.state === 'in_flight') {
        if (provider.adopt && ctx) {
          const taken = await adopt(s, l, ctx, { name: providerName, provider }, providerCallId!, found.answeredAt ?? null);
          return taken ? 'adopted' : null;
        }
        // Its events go to the process that died; nobody could record the rest of it. Hung up
        // once it is settled here: until then the worker that dialled it may still be alive.
        const hangup = () =>
          provider
            .hangup(providerCallId!, 'shutdown', { accountId: l.accountId })
            .catch((err) => s.log.warn({ err, callId: l.id }, 'could not hang up a lost call'));
        return { write: lostCallWrite(r, l, now, s.settings.id), hangup };
      }
    } catch (err) {
      // The provider knows how the call went: ask again later rather than guess, for a while.
      if (patient) {
        s.log.warn({ err, callId: l.id }, 'provider lookup failed; asking again later');
        return null;
      }
      s.log.warn({ err, callId: l.id }, 'provider lookup kept failing; settling the call as lost');
    }
  }
  return { write: lostCallWrite(r, l, now, s.settings.id) };
}

/**
 * Which provider of the account's route has the lost dial: the first whose findCall finds it;
 * undefined when none does (or none can look), null when none found it and one could not be asked
 * (try again later). Every provider is asked: the outage that made the dial fail over often makes
 * the first one's lookups fail too, while the call runs at the next.
 */
async function routedDial(
  s: WorkerState,
  l: LostCall,
  ref: ProviderCallRef,
  budget: Deadline,
): Promise<{ name: string; providerCallId: string } | undefined | null> {
  let unasked = false;
  for (const name of l.route) {
    const p = knownProvider(s, name);
    if (!p?.findCall || !p.lookup) continue;
    try {
      const providerCallId = await withinBudget(p.findCall(ref), budget);
      if (providerCallId) return { name, providerCallId };
    } catch (err) {
      s.log.warn({ err, callId: l.id, provider: name }, 'provider of the route could not be asked about a lost call');
      unasked = true;
    }
  }
  return unasked ? null : undefined;
}

/** The longest a create the lost worker sent may take to land: its provider's, or the slowest of the route's. */
function createTimeoutMs(s: WorkerState, l: LostCall, provider: VoiceProvider): number {
  const routed = l.providerCallId ? [] : l.route.map((n) => knownProvider(s, n)?.requestTimeoutMs ?? 0);
  return Math.max(provider.requestTimeoutMs ?? 0, ...routed);
}

/** Takes over a lost call the provider still has in flight: new lease, then watched like our own. */
async function adopt(
  s: WorkerState,
  l: LostCall,
  ctx: DispatchContext,
  { name, provider }: { name: string; provider: VoiceProvider },
  providerCallId: string,
  answeredAt: Date | null,
): Promise<boolean> {
  // The lease runs from now, not from the start of a round that may have taken a while.
  const now = s.clock.now();
  const id = s.settings.id;
  const taken = await adoptLostCall(s.deps, l, {
    workerId: id,
    now,
    leaseMs: s.settings.leaseMs,
    providerCallId,
    provider: name,
    detail: { event: 'adopted', provider_call_id: providerCallId, previous_worker: l.leaseOwner, worker: id },
  });
  if (!taken) return false;
  subscribedProvider(s, provider);
  const call = newLiveCall(ctx, {
    callId: l.id,
    batchId: l.batchId,
    accountId: l.accountId,
    provider,
    providerCallId,
    status: l.status,
    number: l.dialedNumber ?? l.phoneNumber,
    alternatePhone: l.alternatePhone,
    usedAlternate: l.usedAlternate,
    attempts: l.attempts,
    timezone: l.timezone,
    // The max-duration clock runs from the real dial, not from the answer or the adoption.
    dialledAt: l.dialledAt ?? answeredAt ?? now,
    answered: l.status !== 'ringing',
    answeredAt,
    leaseUntil: now.getTime() + s.settings.leaseMs,
    contact: { externalId: l.externalId, name: l.name, metadata: l.metadata },
  });
  s.book.live.set(call.callId, call);
  s.book.liveByProviderCall.set(providerCallId, call);
  // Answered while nobody was watching.
  if (!call.answered && answeredAt) markAnswered(s, call, answeredAt);
  s.log.warn(
    { callId: l.id, batchId: l.batchId, previousWorker: l.leaseOwner, providerCallId, status: call.status },
    'adopted in-flight call of a lost worker',
  );
  try {
    await provider.adopt!(providerCallId, placeCallRequest(call), { answered: call.answered, dialledAt: call.dialledAt, owner: id });
  } catch (err) {
    // Still ours: the max-duration rule hangs it up and ends it if the provider never reports.
    s.log.error({ err, callId: l.id }, 'provider could not take over the call');
  }
  return true;
}
