// Concurrency limits with two workers sharing one database (two processes' worth of leasing, run in
// one test process so it also works on PGlite), measured where it matters: at the voice provider.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { insertBatch } from '../helpers/fixtures.ts';
import {
  concurrencyProbe,
  expectConsistentBatch,
  historyMaxInFlight,
  manualSimulator,
  phoneEndingIn,
  registryOf,
  testWorker,
} from '../helpers/dispatch.ts';
import { createSimulatorProvider } from '../../src/dispatch/voice/simulator.ts';
import type { DispatchWorker } from '../../src/dispatch/worker.ts';
import { waitFor } from '../helpers/wait.ts';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const CALL_MS = 40;

/** Two running workers, each with its own simulator (as two processes would have), one probe over both. */
function twoWorkers() {
  const probe = concurrencyProbe();
  const workers: DispatchWorker[] = [1, 2].map((n) =>
    testWorker(t.deps, {
      workerId: `w${n}`,
      providers: registryOf(probe.wrap(createSimulatorProvider({ callMs: CALL_MS }))),
    }),
  );
  return { probe, workers };
}

const until = (cond: () => boolean | Promise<boolean>) => waitFor(cond);

const allDone = (ids: string[]) => async () =>
  (await t.deps.db.prisma.batch.count({ where: { id: { in: ids }, status: 'completed' } })) === ids.length;

async function runToEnd(workers: DispatchWorker[], ids: string[]) {
  for (const w of workers) w.start();
  try {
    await until(allDone(ids));
  } finally {
    await Promise.all(workers.map((w) => w.stop({ graceMs: 2000 })));
  }
}

describe('concurrency limits with two workers', () => {
  it("never more calls in flight than the batch's concurrency", async () => {
    const a: SeededAccount = await t.seedAccount({ limits: { maxConcurrentCalls: 100 } });
    const { batch } = await insertBatch(t.deps, a, {
      contacts: 24,
      batch: { concurrency: 3, recordingEnabled: false },
      callOverrides: (i) => ({ status: 'queued', phoneNumber: phoneEndingIn(5, i) }),
    });
    const { probe, workers } = twoWorkers();
    await runToEnd(workers, [batch.id]);
    expect(probe.placed).toHaveLength(24);
    expect(probe.max.batch.get(batch.id)).toBe(3);
    expect(await historyMaxInFlight(t.deps, [batch.id])).toBe(3);
    await expectConsistentBatch(t.deps, batch.id);
  });

  it("never more than the account's max_concurrent_calls over all its batches; busy and no-answer calls free their slots", async () => {
    const a: SeededAccount = await t.seedAccount({ limits: { maxConcurrentCalls: 4 } });
    // Answered (6), busy (1) and no-answer (0) calls mixed: every kind of ending must give its slot back,
    // or the batches would stall short of the end.
    const digits = [6, 1, 0, 6, 0, 1, 6, 6];
    const batches = await Promise.all(
      [0, 1].map(() =>
        insertBatch(t.deps, a, {
          contacts: 16,
          batch: { concurrency: 3, recordingEnabled: false },
          callOverrides: (i) => ({ status: 'queued', phoneNumber: phoneEndingIn(digits[i % digits.length], i) }),
        }),
      ),
    );
    const ids = batches.map((b) => b.batch.id);
    const { probe, workers } = twoWorkers();
    await runToEnd(workers, ids);
    expect(probe.placed).toHaveLength(32);
    expect(probe.max.account.get(a.account.id)).toBe(4);
    expect(await historyMaxInFlight(t.deps, ids)).toBe(4);
    for (const id of ids) {
      expect(probe.max.batch.get(id)).toBeLessThanOrEqual(3);
      const { batch, calls } = await expectConsistentBatch(t.deps, id);
      const byStatus = (st: string) => calls.filter((c) => c.status === st).length;
      expect({ completed: byStatus('completed'), busy: byStatus('busy'), noAnswer: byStatus('no_answer') }).toEqual({
        completed: 8,
        busy: 4,
        noAnswer: 4,
      });
      expect([batch.completed, batch.failed]).toEqual([8, 8]);
    }
  });

  it('shares the account between its batches: a small batch is not starved by a large one', async () => {
    const a: SeededAccount = await t.seedAccount({ limits: { maxConcurrentCalls: 4 } });
    const large = await insertBatch(t.deps, a, {
      contacts: 40,
      batch: { concurrency: 4, recordingEnabled: false },
      callOverrides: (i) => ({ status: 'queued', phoneNumber: phoneEndingIn(7, i) }),
    });
    const small = await insertBatch(t.deps, a, {
      contacts: 4,
      batch: { concurrency: 4, recordingEnabled: false },
      callOverrides: (i) => ({ status: 'queued', phoneNumber: phoneEndingIn(8, i) }),
    });
    const { probe, workers } = twoWorkers();
    await runToEnd(workers, [large.batch.id, small.batch.id]);
    expect(probe.max.account.get(a.account.id)).toBeLessThanOrEqual(4);
    expect(await historyMaxInFlight(t.deps, [large.batch.id, small.batch.id])).toBeLessThanOrEqual(4);

    const smallDone = (await t.deps.db.prisma.batch.findUniqueOrThrow({ where: { id: small.batch.id } })).completedAt!;
    const largeDoneBefore = await t.deps.db.prisma.call.count({
      where: { batchId: large.batch.id, completedAt: { lte: smallDone } },
    });
    // With the account's 4 slots split 2/2 the small batch is through after about two rounds;
    // first-come-first-served would have finished all 40 large calls first.
    expect(largeDoneBefore).toBeLessThan(20);
    await expectConsistentBatch(t.deps, small.batch.id);
    await expectConsistentBatch(t.deps, large.batch.id);
  });
});

// Last: the manual timers freeze the shared test clock, which the real-time tests above need moving.
describe('slots freed by every kind of ending', () => {
  it('a busy or no-answer ending frees its slot for the next claim at once (test clock)', async () => {
    const a: SeededAccount = await t.seedAccount({ limits: { maxConcurrentCalls: 2 } });
    const sim = manualSimulator(t.clock, { callMs: 10_000, ringMs: 1_000 });
    const worker = testWorker(t.deps, { providers: sim.registry });
    // Busy ends at the ring time (1 s), no answer at the call length (10 s), answered calls at 10 s.
    const { batch } = await insertBatch(t.deps, a, {
      contacts: 4,
      batch: { concurrency: 4, recordingEnabled: false },
      callOverrides: (i) => ({ status: 'queued', phoneNumber: phoneEndingIn([1, 0, 4, 4][i], i) }),
    });
    const statuses = async () =>
      (await t.deps.db.prisma.call.findMany({ where: { batchId: batch.id }, orderBy: { seq: 'asc' } })).map((c) => c.status);
    const step = async (ms: number) => {
      sim.timers.advance(ms);
      await worker.settle();
      const r = await worker.runOnce();
      await worker.settle();
      return r.claimed;
    };
    expect(await step(0)).toBe(2);
    expect(await statuses()).toEqual(['ringing', 'ringing', 'queued', 'queued']);
    // Nothing has ended: the account's two slots are taken.
    expect((await worker.runOnce()).claimed).toBe(0);
    // The busy call ends and its slot goes to the third call.
    expect(await step(1_000)).toBe(1);
    expect(await statuses()).toEqual(['busy', 'ringing', 'ringing', 'queued']);
    // The no-answer call ends and its slot goes to the fourth.
    expect(await step(9_000)).toBe(1);
    expect(await statuses()).toEqual(['busy', 'no_answer', 'in_progress', 'ringing']);
    await step(10_000);
    await step(10_000);
    const { batch: done } = await expectConsistentBatch(t.deps, batch.id);
    expect(done.status).toBe('completed');
    expect(await historyMaxInFlight(t.deps, [batch.id])).toBe(2);
  });
});
