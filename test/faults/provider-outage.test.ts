// A provider outage meets a worker crash (the fault campaign's invariant, docs/dispatch.md "Fault
// campaign": one person, one ring per attempt, and every call ends): an account routed through two
// providers, the first failing every create during the outage in each way a provider can fail
// (refused; timed out after creating the call; timed out before), a worker killed in the middle
// of it and its calls recovered by another at whichever provider placed them; the outage heals and
// the first provider is taken back after its cool-down. In process on manual time, PGlite or
// PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { insertBatch } from '../helpers/fixtures.ts';
import { expectConsistentBatch, manualTimers, phoneEndingIn, testWorker } from '../helpers/dispatch.ts';
import { routedFake, type CreateFault } from '../helpers/routed-providers.ts';
import { createProviderRegistry } from '../../src/dispatch/voice/registry.ts';
import { setAccountRoute } from '../../src/services/accounts/account-route.ts';

let t: TestApp;
const LEASE = 1000;
const COOLDOWN_MS = 10_000;
const TERMINAL = ['completed', 'failed', 'no_answer', 'busy', 'cancelled'];

beforeAll(async () => {
  t = await createTestApp({ config: { PROVIDER_BREAKER_FAILURES: '3', PROVIDER_BREAKER_COOLDOWN_MS: String(COOLDOWN_MS) } });
  t.clock.set(new Date('2025-02-02T12:00:00.000Z'));
});
afterAll(() => t.close());

describe('provider outage with a worker crash', () => {
  it('no call rings twice across providers, every call ends, the first provider comes back after the outage', async () => {
    const account = await t.seedAccount({ limits: { maxConcurrentCalls: 100 } });
    await setAccountRoute(t.deps, account.account.id, [
      { provider: 'simA', weight: 1, config: null },
      { provider: 'simB', weight: 1, config: null },
    ]);
    const outage = { on: true };
    const kinds: CreateFault[] = ['no', 'maybe_created', 'maybe_none'];
    const timers = manualTimers(t.clock);
    const simA = routedFake('simA', timers, { fault: (n) => (outage.on ? kinds[n % kinds.length] : 'ok') });
    const simB = routedFake('simB', timers);
    const w1Dead = { value: false };
    const registryOf = (dead: () => boolean) => createProviderRegistry({ simA: () => simA.viewFor(dead), simB: () => simB.viewFor(dead) });
    const w1 = testWorker(t.deps, { leaseMs: LEASE, providers: registryOf(() => w1Dead.value) });
    const w2 = testWorker(t.deps, { leaseMs: LEASE, providers: registryOf(() => false) });
    const batches = await Promise.all(
      [0, 1].map(() =>
        insertBatch(t.deps, account, {
          contacts: 30,
          batch: { concurrency: 4 },
          callOverrides: (i) => ({ status: 'queued', phoneNumber: phoneEndingIn(4, i) }),
        }),
      ),
    );
    const ids = batches.map((b) => b.batch.id);

    // Worker 1 dials into the outage, then dies with its calls at the providers.
    await w1.runOnce();
    await w1.settle();
    const placedByW1 = await t.deps.db.prisma.call.count({ where: { batchId: { in: ids }, leaseOwner: { startsWith: w1.id } } });
    expect(placedByW1).toBeGreaterThan(0);
    w1Dead.value = true;
    // Its calls end at the providers unheard, and its leases lapse.
    timers.advance(10_000);

    // Worker 2 recovers them and dials the rest; the outage heals after a few rounds.
    let placedAAfterHeal = 0;
    for (let round = 0; round < 80; round++) {
      if (round === 3) outage.on = false;
      const before = simA.creates.size;
      await w2.runOnce();
      await w2.settle();
      if (!outage.on) placedAAfterHeal += simA.creates.size - before;
      const left = await t.deps.db.prisma.call.count({ where: { batchId: { in: ids }, status: { notIn: TERMINAL } } });
      if (left === 0) break;
      timers.advance(3_000);
    }
    await w2.drain();

    const calls = await t.deps.db.prisma.call.findMany({ where: { batchId: { in: ids } } });
    expect(calls.filter((c) => !TERMINAL.includes(c.status)).map((c) => c.id)).toEqual([]);
    for (const c of calls) {
      expect(simA.createsOf(c.id) + simB.createsOf(c.id), `creates of ${c.id} across both providers`).toBe(1);
      if (c.status === 'completed') expect(c.provider, `provider of ${c.id}`).toBe(simA.createsOf(c.id) === 1 ? 'simA' : 'simB');
    }
    // Worker 1's calls were settled by worker 2 with their results from the provider that placed each.
    const recovered = await t.deps.db.prisma.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM call_events e JOIN calls c ON c.id = e.call_id
       WHERE c.batch_id = ANY(${ids}::text[]) AND e.detail->>'recovered' = 'true'`;
    expect(recovered[0].n).toBe(placedByW1);
    expect(calls.map((c) => c.status)).toEqual(calls.map(() => 'completed'));
    // The outage sent calls to simB; simA kept those it created despite its errors and took calls again once healed.
    expect(simB.creates.size).toBeGreaterThan(0);
    expect(placedAAfterHeal).toBeGreaterThan(0);
    // Its breaker opened during the outage: dials skipped it until the cool-down let a trial through.
    const skipped = (await t.deps.metrics.providerDials.get()).values.find((v) => v.labels.provider === 'simA' && v.labels.result === 'skipped');
    expect(skipped?.value ?? 0).toBeGreaterThan(0);
    for (const id of ids) await expectConsistentBatch(t.deps, id);
  });
});
