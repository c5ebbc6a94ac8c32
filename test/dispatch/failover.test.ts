// Provider routing and failover (docs/providers.md "Routing and failover"): a dial the first
// provider refuses for a provider-side reason goes to the next one, never twice for one attempt; a
// provider that keeps failing is skipped (circuit breaker) and taken back after its cool-down; a
// call placed through the second provider is recovered there.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { insertBatch } from '../helpers/fixtures.ts';
import { callEvents, expectConsistentBatch, manualTimers, phoneEndingIn, testWorker } from '../helpers/dispatch.ts';
import { routedFake, type CreateFault, type RoutedFakeOptions } from '../helpers/routed-providers.ts';
import { waitFor } from '../helpers/wait.ts';
import { createProviderRegistry } from '../../src/dispatch/voice/registry.ts';
import { setAccountRoute } from '../../src/services/accounts/account-route.ts';
import type { DispatchWorker } from '../../src/dispatch/worker.ts';

let t: TestApp;
const LEASE = 1000;
const BREAKER_FAILURES = 3;
const COOLDOWN_MS = 30_000;
const TERMINAL = ['completed', 'failed', 'no_answer', 'busy', 'cancelled'];

beforeAll(async () => {
  t = await createTestApp({ config: { PROVIDER_BREAKER_FAILURES: String(BREAKER_FAILURES), PROVIDER_BREAKER_COOLDOWN_MS: String(COOLDOWN_MS) } });
});
afterAll(() => t.close());
beforeEach(() => t.clock.set(new Date('2025-02-02T12:00:00.000Z')));

/** A fresh account routed through simA then simB, and both fakes on one set of manual timers. */
async function routed(a: RoutedFakeOptions, b: RoutedFakeOptions = {}) {
  const account = await t.seedAccount({ limits: { maxConcurrentCalls: 100 } });
  await setAccountRoute(t.deps, account.account.id, [
    { provider: 'simA', weight: 1, config: null },
    { provider: 'simB', weight: 1, config: null },
  ]);
  const timers = manualTimers(t.clock);
  const simA = routedFake('simA', timers, a);
  const simB = routedFake('simB', timers, b);
  const registry = createProviderRegistry({ simA: () => simA.provider, simB: () => simB.provider });
  return { account, timers, simA, simB, registry };
}
type Routed = Awaited<ReturnType<typeof routed>>;

async function batchOf(account: SeededAccount, contacts: number) {
  return insertBatch(t.deps, account, {
    contacts,
    batch: { concurrency: contacts },
    callOverrides: (i) => ({ status: 'queued', phoneNumber: phoneEndingIn(4, i) }),
  });
}

/** Ticks, letting the fakes' calls end between them, until every call of the batch ended. */
async function runToEnd(worker: DispatchWorker, timers: ReturnType<typeof manualTimers>, batchId: string): Promise<void> {
  for (let round = 0; round < 60; round++) {
    await worker.runOnce();
    await worker.settle();
    const left = await t.deps.db.prisma.call.count({ where: { batchId, status: { notIn: TERMINAL } } });
    if (left === 0) break;
    timers.advance(6_000);
  }
  await worker.drain();
}

const callsOf = (batchId: string) => t.deps.db.prisma.call.findMany({ where: { batchId }, orderBy: { seq: 'asc' } });

describe('failover', () => {
  it('the first provider failing every create: every call is placed exactly once, through the second', async () => {
    const { account, timers, simA, simB, registry } = await routed({ fault: () => 'no' });
    const { batch } = await batchOf(account, 20);
    await runToEnd(testWorker(t.deps, { providers: registry }), timers, batch.id);
    const rows = await callsOf(batch.id);
    expect(rows.map((c) => c.status)).toEqual(rows.map(() => 'completed'));
    for (const c of rows) {
      expect(simB.createsOf(c.id), `creates of ${c.id} at simB`).toBe(1);
      expect(c.provider).toBe('simB');
      expect(c.attempts).toBe(1);
    }
    expect(simA.creates.size).toBe(0);
    // The breaker opened after BREAKER_FAILURES: simA was not asked for every call.
    expect(simA.state.tries).toBe(BREAKER_FAILURES);
    const failovers = (await callEvents(t.deps, batch.id)).filter((e) => e.detail?.event === 'failover');
    expect(failovers).toHaveLength(20);
    // Writes are grouped, so the rows' order says nothing: count the reasons instead.
    const reasons = failovers.map((e) => {
      expect(e.detail).toMatchObject({ provider: 'simB', refused: [{ provider: 'simA' }] });
      return (e.detail as { refused: { reason: string }[] }).refused[0].reason;
    });
    expect(reasons.filter((r) => r === 'unavailable')).toHaveLength(BREAKER_FAILURES);
    expect(reasons.filter((r) => r === 'circuit_open')).toHaveLength(20 - BREAKER_FAILURES);
    await expectConsistentBatch(t.deps, batch.id);
  });

  it('the first provider failing 30% of creates (refused, timed out after creating, timed out before): no call is placed twice, every call ends', async () => {
    // Of every 10 creates at simA: one refused, one created but answered as a timeout, one timed out without creating.
    const pattern: CreateFault[] = ['no', 'ok', 'ok', 'maybe_created', 'ok', 'ok', 'maybe_none', 'ok', 'ok', 'ok'];
    const { account, timers, simA, simB, registry } = await routed({ fault: (n) => pattern[n % pattern.length] });
    const { batch } = await batchOf(account, 40);
    await runToEnd(testWorker(t.deps, { providers: registry }), timers, batch.id);
    const rows = await callsOf(batch.id);
    expect(rows.every((c) => TERMINAL.includes(c.status))).toBe(true);
    for (const c of rows) {
      expect(simA.createsOf(c.id) + simB.createsOf(c.id), `creates of ${c.id} across both providers`).toBe(1);
      expect(c.provider).toBe(simA.createsOf(c.id) === 1 ? 'simA' : 'simB');
    }
    // Both kinds happened: some went through simB, and some simA created despite its error were kept there.
    expect(simB.creates.size).toBeGreaterThanOrEqual(6);
    expect(simA.creates.size).toBeGreaterThanOrEqual(30);
    expect(rows.map((c) => c.status)).toEqual(rows.map(() => 'completed'));
    await expectConsistentBatch(t.deps, batch.id);
  });

  it('an ambiguous failure after the first provider created the call: kept there, never dialled at the second', async () => {
    const { account, timers, simA, simB, registry } = await routed({ fault: (n) => (n === 0 ? 'maybe_created' : 'ok') });
    const { batch } = await batchOf(account, 1);
    await runToEnd(testWorker(t.deps, { providers: registry }), timers, batch.id);
    const [c] = await callsOf(batch.id);
    expect([c.status, c.provider, simA.createsOf(c.id), simB.createsOf(c.id)]).toEqual(['completed', 'simA', 1, 0]);
    await expectConsistentBatch(t.deps, batch.id);
  });

  it('an ambiguous failure at a provider that cannot look the call up ends the dial there (no second ring)', async () => {
    const { account, timers, simA, simB, registry } = await routed({ fault: () => 'maybe_created', findCall: false });
    const { batch } = await batchOf(account, 1);
    await runToEnd(testWorker(t.deps, { providers: registry }), timers, batch.id);
    const [c] = await callsOf(batch.id);
    expect([c.status, c.disconnectReason, simA.createsOf(c.id), simB.createsOf(c.id)]).toEqual(['failed', 'dial_error', 1, 0]);
  });

  it('an ambiguous failure while the first provider is still creating the call: waited out, found there, never dialled at the second', async () => {
    const { account, timers, simA, simB, registry } = await routed({
      fault: (n) => (n === 0 ? 'maybe_late' : 'ok'),
      requestTimeoutMs: 15_000,
      lateMs: 3_000,
    });
    const { batch } = await batchOf(account, 1);
    const worker = testWorker(t.deps, { providers: registry, scheduler: timers });
    const tick = worker.runOnce();
    // Asked at once (nothing yet), then the worker waits the request timeout out on its scheduler.
    await waitFor(() => simA.state.finds === 1 && timers.pending() >= 2, { what: 'the first findCall and the wait after it' });
    expect(simB.state.tries).toBe(0);
    timers.advance(15_000);
    await tick;
    const [c] = await callsOf(batch.id);
    expect([simA.state.finds, simA.createsOf(c.id), simB.state.tries]).toEqual([2, 1, 0]);
    await waitFor(
      async () => {
        timers.advance(300);
        return (await callsOf(batch.id))[0].provider === 'simA';
      },
      { what: 'the provider id write' },
    );
  });

  it('an ambiguous failure the provider still has no call for after its request timeout: then, and only then, the second provider', async () => {
    const { account, timers, simA, simB, registry } = await routed({ fault: (n) => (n === 0 ? 'maybe_none' : 'ok'), requestTimeoutMs: 15_000 });
    const { batch } = await batchOf(account, 1);
    const worker = testWorker(t.deps, { providers: registry, scheduler: timers });
    const tick = worker.runOnce();
    await waitFor(() => simA.state.finds === 1 && timers.pending() >= 1, { what: 'the first findCall and the wait after it' });
    expect(simB.state.tries).toBe(0);
    timers.advance(15_000);
    await tick;
    const [c] = await callsOf(batch.id);
    expect([simA.state.finds, simA.createsOf(c.id), simB.createsOf(c.id)]).toEqual([2, 0, 1]);
  });

  it("one provider refusing our account there (401): the dial goes to the next, and that provider's breaker is left alone", async () => {
    const { account, timers, simA, simB, registry } = await routed({ fault: () => 'auth' });
    const { batch } = await batchOf(account, 5);
    await runToEnd(testWorker(t.deps, { providers: registry }), timers, batch.id);
    const rows = await callsOf(batch.id);
    expect(rows.map((c) => [c.status, c.provider])).toEqual(rows.map(() => ['completed', 'simB']));
    // More refusals than BREAKER_FAILURES, yet simA was asked every time: its breaker never opened.
    expect([simA.state.tries, simB.creates.size]).toEqual([5, 5]);
    const failovers = (await callEvents(t.deps, batch.id)).filter((e) => e.detail?.event === 'failover');
    expect(failovers[0].detail).toMatchObject({ refused: [{ provider: 'simA', reason: 'account_rejected' }] });
  });

  it('an account refusal at every provider ends the call as before; beside a provider that is down, the call waits', async () => {
    const both = await routed({ fault: () => 'auth' }, { fault: () => 'auth' });
    const { batch } = await batchOf(both.account, 1);
    await runToEnd(testWorker(t.deps, { providers: both.registry }), both.timers, batch.id);
    const [c] = await callsOf(batch.id);
    expect([c.status, c.disconnectReason]).toEqual(['failed', 'provider_auth_failed']);

    const mixed = await routed({ fault: () => 'no' }, { fault: () => 'auth' });
    const { batch: other } = await batchOf(mixed.account, 1);
    const worker = testWorker(t.deps, { providers: mixed.registry });
    await worker.runOnce();
    await worker.settle();
    const [waiting] = await callsOf(other.id);
    expect([waiting.status, waiting.attempts, waiting.waitReason]).toEqual(['queued', 0, 'retry']);
  });

  it("a failover past the calling window's close: judged again before the second provider, withheld, not dialled", async () => {
    // The first provider takes 90 s to give up; the window (UTC) closes a minute after the claim.
    const { account, simA, simB, registry } = await routed({
      fault: () => {
        t.clock.advance(90_000);
        return 'no';
      },
    });
    const window = { start: '09:00', end: '12:01', days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], timezone: 'UTC' };
    const { batch } = await insertBatch(t.deps, account, {
      contacts: 1,
      batch: { concurrency: 1, callingWindow: window },
      callOverrides: (i) => ({ status: 'queued', phoneNumber: phoneEndingIn(4, i) }),
    });
    const worker = testWorker(t.deps, { providers: registry });
    await worker.runOnce();
    await worker.settle();
    const [c] = await callsOf(batch.id);
    expect([simA.state.tries, simB.state.tries, c.status, c.attempts, c.waitReason]).toEqual([1, 0, 'queued', 0, 'calling_window']);
  });

  it('every provider down: the call is put back in line, not dialled, and placed once a provider is back', async () => {
    const down = { value: true };
    const fault = (): CreateFault => (down.value ? 'no' : 'ok');
    const { account, timers, simA, simB, registry } = await routed({ fault }, { fault });
    const { batch } = await batchOf(account, 1);
    const worker = testWorker(t.deps, { providers: registry });
    await worker.runOnce();
    await worker.settle();
    const [waiting] = await callsOf(batch.id);
    expect([waiting.status, waiting.attempts, waiting.waitReason]).toEqual(['queued', 0, 'retry']);
    const withheld = (await callEvents(t.deps, batch.id)).find((e) => e.detail?.event === 'dial_withheld');
    expect(withheld?.detail).toMatchObject({ reason: 'provider_unavailable', refused: [{ provider: 'simA' }, { provider: 'simB' }] });
    down.value = false;
    await runToEnd(worker, timers, batch.id);
    const [c] = await callsOf(batch.id);
    expect([c.status, c.attempts, simA.createsOf(c.id) + simB.createsOf(c.id)]).toEqual(['completed', 1, 1]);
    await expectConsistentBatch(t.deps, batch.id);
  });
});

describe('circuit breaker', () => {
  it('opens after the configured failures, skips the provider for the cool-down, then a trial closes it', async () => {
    const healthy = { value: false };
    const { account, timers, simA, simB, registry } = await routed({ fault: () => (healthy.value ? 'ok' : 'no') });
    const worker = testWorker(t.deps, { providers: registry });
    const dialsAtA = async () =>
      Object.fromEntries(
        (await t.deps.metrics.providerDials.get()).values.filter((v) => v.labels.provider === 'simA').map((v) => [v.labels.result, v.value]),
      );
    const before = await dialsAtA();
    const circuit = async () => (await t.deps.metrics.providerCircuitState.get()).values.find((v) => v.labels.provider === 'simA')?.value;
    const { batch } = await batchOf(account, 6);
    await runToEnd(worker, timers, batch.id);
    expect(simA.state.tries).toBe(BREAKER_FAILURES);
    expect(await circuit()).toBe(2);
    expect(simB.creates.size).toBe(6);

    // A cool-down later simA is healthy again: the next dial is its trial, which closes the breaker.
    healthy.value = true;
    t.clock.set(new Date(t.clock.now().getTime() + COOLDOWN_MS));
    const { batch: later } = await batchOf(account, 1);
    await runToEnd(worker, timers, later.id);
    const [c] = await callsOf(later.id);
    expect(c.provider).toBe('simA');
    expect(simA.state.tries).toBe(BREAKER_FAILURES + 1);
    expect(await circuit()).toBe(0);
    const after = await dialsAtA();
    const delta = (k: string) => (after[k] ?? 0) - (before[k] ?? 0);
    expect({ failed_over: delta('failed_over'), placed: delta('placed'), skipped: delta('skipped') > 0 }).toEqual({
      failed_over: BREAKER_FAILURES,
      placed: 1,
      skipped: true,
    });
  });
});

describe('circuit breaker scope', () => {
  it("an account's own rate limit (429) fails each dial over but does not open the provider's breaker for every account", async () => {
    const { account, timers, simA, simB, registry } = await routed({ fault: () => 'rate' });
    const { batch } = await batchOf(account, 6);
    await runToEnd(testWorker(t.deps, { providers: registry }), timers, batch.id);
    const rows = await callsOf(batch.id);
    expect(rows.map((c) => c.provider)).toEqual(rows.map(() => 'simB'));
    expect([simA.state.tries, simB.creates.size]).toEqual([6, 6]);
    const circuit = (await t.deps.metrics.providerCircuitState.get()).values.find((v) => v.labels.provider === 'simA')?.value ?? 0;
    expect(circuit).toBe(0);
  });
});

describe('recovery of a routed call', () => {
  /**
   * A worker dials the batch and dies; the calls finish at `sim` (which remembers how) past the
   * lease, and the first call's stored provider call id is lost as if the worker died before writing it.
   */
  async function dialThenDie(registry: Routed['registry'], sim: Routed['simB'], timers: Routed['timers'], batchId: string): Promise<void> {
    const worker = testWorker(t.deps, { leaseMs: LEASE, providers: registry });
    await worker.runOnce();
    await worker.settle();
    sim.state.muted = true;
    timers.advance(10_000);
    t.clock.advance(LEASE + 1);
    const [first] = await callsOf(batchId);
    await t.deps.db.prisma.call.update({ where: { id: first.id }, data: { providerCallId: null, provider: null } });
  }

  it('a call placed through the second provider is looked up there after its worker died', async () => {
    const { account, timers, simA, simB, registry } = await routed({ fault: () => 'no' });
    const { batch } = await batchOf(account, 2);
    // One of the calls lost its stored provider call id (the worker died before writing it): found by the route's findCall.
    await dialThenDie(registry, simB, timers, batch.id);
    const lookupsAtA = simA.state.lookups;
    const workerB = testWorker(t.deps, { leaseMs: LEASE, providers: registry });
    expect((await workerB.runOnce()).settled).toBe(2);
    await workerB.drain();
    const rows = await callsOf(batch.id);
    expect(rows.map((r) => [r.status, r.provider, r.disconnectReason])).toEqual([
      ['completed', 'simB', 'agent_hangup'],
      ['completed', 'simB', 'agent_hangup'],
    ]);
    expect(simA.state.lookups).toBe(lookupsAtA);
    expect(simB.state.lookups).toBeGreaterThanOrEqual(2);
    await expectConsistentBatch(t.deps, batch.id);
  });

  it('the first provider of the route failing its lookups too: the call is still found at the second', async () => {
    const { account, timers, simB, registry } = await routed({ fault: () => 'no', findCallFails: true });
    const { batch } = await batchOf(account, 1);
    await dialThenDie(registry, simB, timers, batch.id);
    const workerB = testWorker(t.deps, { leaseMs: LEASE, providers: registry });
    expect((await workerB.runOnce()).settled).toBe(1);
    await workerB.drain();
    const [after] = await callsOf(batch.id);
    expect([after.status, after.provider]).toEqual(['completed', 'simB']);
  });
});
