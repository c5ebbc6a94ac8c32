// Helpers for dispatch tests: workers wired to a test app, a simulator whose timers move only with
// the test clock, a probe that measures concurrency at the provider, and history/counter checks.
import { expect } from 'vitest';
import type { AppDeps } from '../../src/deps.ts';
import { canTransitionCall, type CallStatus } from '../../src/domain/call-state.ts';
import { createWorker, type DispatchWorker, type WorkerOptions } from '../../src/dispatch/worker.ts';
import { createSimulatorProvider, type SimulatorClock } from '../../src/dispatch/voice/simulator.ts';
import { createProviderRegistry, type ProviderRegistry } from '../../src/dispatch/voice/registry.ts';
import type { ProviderEventListener, VoiceProvider } from '../../src/dispatch/voice/provider.ts';
import type { TestClock } from './clock.ts';
import { waitFor } from './wait.ts';

/**
 * Timers that fire only inside advance(), which also moves the test clock (one time source): the
 * simulator's clock and a worker's scheduler (WorkerOptions.scheduler). advance() fires what is
 * due in one synchronous pass; a test that needs the promises of one firing settled before the
 * next (a lease renewal, then the next one) advances a timer period at a time.
 */
export function manualTimers(clock: TestClock) {
  let nextId = 0;
  const timers = new Map<number, { due: number; fn: () => void }>();
  const api: SimulatorClock & { advance(ms: number): void; pending(): number } = {
    now: () => clock.now(),
    setTimeout(fn, ms) {
      const id = ++nextId;
      timers.set(id, { due: clock.now().getTime() + ms, fn });
      return id;
    },
    clearTimeout(h) {
      timers.delete(h as number);
    },
    advance(ms) {
      // The clock stands still from here: a test clock that followed real time would otherwise move
      // on while timers fire, and a timer one step schedules (ringing → answered) would land after
      // `until` by the milliseconds that took, and not fire.
      const start = clock.now();
      clock.set(start);
      const until = start.getTime() + ms;
      for (;;) {
        const next = [...timers.entries()].filter(([, t]) => t.due <= until).sort((a, b) => a[1].due - b[1].due || a[0] - b[0])[0];
        if (!next) break;
        timers.delete(next[0]);
        clock.set(new Date(Math.max(clock.now().getTime(), next[1].due)));
        next[1].fn();
      }
      clock.set(new Date(until));
    },
    pending: () => timers.size,
  };
  return api;
}

/**
 * A simulator driven by manualTimers: calls last exactly `callMs` of test-clock time from their
 * dial, so a call placed after advance() has not had that time. Wait for `dialled(n)` (n calls
 * placed so far) before advancing: runOnce() awaits the dials it claimed today, but nothing awaits
 * a started worker's loop or an alternate number dialled after an ending, and a test should not
 * depend on which.
 */
export function manualSimulator(clock: TestClock, opts: { callMs: number; ringMs?: number }) {
  const timers = manualTimers(clock);
  const inner = createSimulatorProvider({ callMs: opts.callMs, ringMs: opts.ringMs, clock: timers });
  let placed = 0;
  const provider: VoiceProvider = {
    ...inner,
    async placeCall(req) {
      const r = await inner.placeCall(req);
      placed += 1;
      return r;
    },
  };
  const dialled = (n: number) => expect.poll(() => placed, { timeout: 20_000 }).toBeGreaterThanOrEqual(n);
  return { provider, timers, dialled, registry: createProviderRegistry({ simulator: () => provider }) };
}

/**
 * Counts live calls at the provider (placeCall .. ended), per batch and per account, with maxima.
 * One probe can wrap the providers of several workers, so the counts span them all.
 */
export function concurrencyProbe() {
  const current = { batch: new Map<string, number>(), account: new Map<string, number>() };
  const max = { batch: new Map<string, number>(), account: new Map<string, number>() };
  const placed: string[] = [];
  const bump = (m: Map<string, number>, mx: Map<string, number>, k: string, d: number) => {
    const v = (m.get(k) ?? 0) + d;
    m.set(k, v);
    if (v > (mx.get(k) ?? 0)) mx.set(k, v);
  };
  function wrap(inner: VoiceProvider): VoiceProvider {
    const liveByCall = new Map<string, { batchId: string; accountId: string }>();
    inner.onEvent((e) => {
      if (e.type !== 'ended') return;
      const c = liveByCall.get(e.providerCallId);
      if (!c) return;
      liveByCall.delete(e.providerCallId);
      bump(current.batch, max.batch, c.batchId, -1);
      bump(current.account, max.account, c.accountId, -1);
    });
    return {
      name: inner.name,
      async placeCall(req) {
        // Counted before the provider may answer, so an instant call is still seen as live.
        bump(current.batch, max.batch, req.batchId, 1);
        bump(current.account, max.account, req.accountId, 1);
        const r = await inner.placeCall(req);
        placed.push(`${req.callId}:${req.to}`);
        liveByCall.set(r.providerCallId, { batchId: req.batchId, accountId: req.accountId });
        return r;
      },
      hangup: (id, reason) => inner.hangup(id, reason),
      onEvent: (l: ProviderEventListener) => inner.onEvent(l),
      close: () => inner.close(),
    };
  }
  return { wrap, max, current, placed };
}

export function testWorker(deps: AppDeps, opts: WorkerOptions = {}): DispatchWorker {
  return createWorker(deps, { pollMs: 20, ...opts });
}

/**
 * Resolves once each started worker has run a whole tick that began after this call: what a test
 * that moved the clock waits for before moving it again (the loop has seen the new time), instead
 * of pacing with a pause. A tick that ends after the call may have begun before it; the next began after.
 */
export async function nextTurn(...workers: DispatchWorker[]): Promise<void> {
  // Counted, not timed: the app clock (which stamps lastTurnAt) is the test's and stands still between its moves.
  const asked = workers.map((w) => w.turns());
  for (const [i, w] of workers.entries()) {
    await waitFor(() => w.turns() >= asked[i] + 2, { what: `a whole tick of worker ${w.id}` });
  }
}

export function registryOf(provider: VoiceProvider): ProviderRegistry {
  return createProviderRegistry({ simulator: () => provider });
}

export interface EventRow {
  call_id: string;
  from_status: string | null;
  to_status: string;
  detail: Record<string, unknown> | null;
  at: Date;
}

export async function callEvents(deps: AppDeps, batchId: string): Promise<EventRow[]> {
  return deps.db.prisma.$queryRaw<EventRow[]>`
    SELECT e.call_id, e.from_status, e.to_status, e.detail, e.at
      FROM call_events e JOIN calls c ON c.id = e.call_id
     WHERE c.batch_id = ${batchId}
     ORDER BY e.id`;
}

const TERMINAL = new Set(['completed', 'failed', 'no_answer', 'busy', 'cancelled']);

/**
 * The invariants every finished batch must show: each call ended exactly once, was dialled at most
 * once per number, and the counters match the calls and sum to accepted_contacts.
 */
export async function expectConsistentBatch(deps: AppDeps, batchId: string) {
  const batch = await deps.db.prisma.batch.findUniqueOrThrow({ where: { id: batchId } });
  const calls = await deps.db.prisma.call.findMany({ where: { batchId } });
  const events = await callEvents(deps, batchId);
  const byCall = new Map<string, EventRow[]>();
  for (const e of events) byCall.set(e.call_id, [...(byCall.get(e.call_id) ?? []), e]);
  for (const c of calls) {
    const evs = byCall.get(c.id) ?? [];
    const endings = evs.filter((e) => TERMINAL.has(e.to_status) && !TERMINAL.has(e.from_status ?? ''));
    if (TERMINAL.has(c.status))
      expect(
        endings.map((e) => e.to_status),
        `call ${c.id} endings`,
      ).toEqual([c.status]);
    // Once per number, or with a retry policy once per attempt (a retry dials the number again).
    // A claimed dial the dial-time check withheld (dial_withheld, or a waiting alternate's
    // alternate_waits without a previous attempt) was not made: it does not count.
    const dials: string[] = [];
    for (const e of evs) {
      if (e.detail?.event === 'dial') dials.push(batch.retryMaxAttempts === null ? String(e.detail.number) : `attempt ${String(e.detail.attempt)}`);
      if (e.detail?.event === 'dial_withheld' || (e.detail?.event === 'alternate_waits' && e.detail.previous === undefined)) dials.pop();
    }
    expect(new Set(dials).size, `call ${c.id} dialled twice: ${dials.join(', ')}`).toBe(dials.length);
    // Every dial is counted (a fixture may count attempts it made no history for).
    expect(c.attempts, `call ${c.id} attempts`).toBeGreaterThanOrEqual(dials.length);
    // Every status change recorded is one the domain's state machine allows.
    const illegal = evs.filter(
      (e) => e.from_status !== null && e.from_status !== e.to_status && !canTransitionCall(e.from_status as CallStatus, e.to_status as CallStatus),
    );
    expect(
      illegal.map((e) => `${e.from_status} -> ${e.to_status} (${String(e.detail?.event)})`),
      `call ${c.id} transitions`,
    ).toEqual([]);
  }
  const bucket = (s: string) =>
    s === 'pending' || s === 'queued'
      ? 'queued'
      : s === 'ringing' || s === 'answered' || s === 'in_progress'
        ? 'in_progress'
        : s === 'completed'
          ? 'completed'
          : s === 'cancelled'
            ? 'cancelled'
            : 'failed';
  const counts = { queued: 0, in_progress: 0, completed: 0, failed: 0, cancelled: 0 };
  for (const c of calls) counts[bucket(c.status)] += 1;
  expect({
    queued: batch.queued,
    in_progress: batch.inProgress,
    completed: batch.completed,
    failed: batch.failed,
    cancelled: batch.cancelled,
  }).toEqual(counts);
  expect(batch.queued + batch.inProgress + batch.completed + batch.failed + batch.cancelled).toBe(batch.acceptedContacts);
  return { batch, calls, events };
}

/** Phone numbers whose last digit picks the simulator's outcome (0 no answer, 1 busy, 2 failed, 3 user, else agent). */
export const phoneEndingIn = (digit: number, i = 0) => `+1415555${String(100 + (i % 900)).padStart(3, '0')}${digit}`;

/**
 * Most calls of these batches in flight at once, rebuilt from their history: +1 at each first
 * dial, -1 at each end (ends first at equal timestamps: a claim reads the counters after the end
 * it reuses was committed, and dates its dial after that read).
 */
export async function historyMaxInFlight(deps: AppDeps, batchIds: string[]): Promise<number> {
  const rows = await deps.db.prisma.$queryRaw<{ max: number }[]>`
    WITH ev AS (
      SELECT e.at, CASE WHEN e.detail->>'event' = 'dial' THEN 1 ELSE -1 END AS d
        FROM call_events e JOIN calls c ON c.id = e.call_id
       WHERE c.batch_id = ANY(${batchIds}::text[])
         AND ((e.detail->>'event' = 'dial' AND e.detail->>'alternate' = 'false')
              OR (e.to_status IN ('completed', 'failed', 'no_answer', 'busy', 'queued') AND e.from_status IN ('ringing', 'answered', 'in_progress')))
    )
    SELECT COALESCE(max(running), 0)::int AS max
      FROM (SELECT sum(d) OVER (ORDER BY at, d ROWS UNBOUNDED PRECEDING) AS running FROM ev) x`;
  return rows[0].max;
}
