// The worker's lifecycle modes (worker/lifecycle.ts) and its timing on time the test advances: its
// scheduler is the manual one of test/helpers/dispatch.ts, which fires timers only inside
// advance() and moves the app clock with them, so lease renewal and the poll are seen at exact
// instants of the test clock - nothing here sleeps.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { canMoveTo, createLifecycle, IllegalWorkerTransition, WORKER_TRANSITIONS, type WorkerMode } from '../../src/dispatch/worker/lifecycle.ts';
import type { DispatchWorker } from '../../src/dispatch/worker.ts';
import { deadlineIn, repeat } from '../../src/scheduler.ts';
import { createTestApp, TestClock, type TestApp } from '../helpers/app.ts';
import { manualSimulator, manualTimers, phoneEndingIn, testWorker } from '../helpers/dispatch.ts';
import { insertBatch } from '../helpers/fixtures.ts';
import { waitFor } from '../helpers/wait.ts';

const MODES: WorkerMode[] = ['idle', 'running', 'stopping', 'stopped'];

describe('worker lifecycle', () => {
  it('allows exactly the moves of the table', () => {
    const allowed = MODES.flatMap((from) => MODES.filter((to) => canMoveTo(from, to)).map((to) => `${from}->${to}`));
    expect(allowed).toEqual(['idle->running', 'idle->stopping', 'running->stopping', 'stopping->stopped']);
    expect(Object.keys(WORKER_TRANSITIONS).sort()).toEqual([...MODES].sort());
  });

  it('throws on every move the table does not allow, and stays where it was', () => {
    for (const from of MODES) {
      for (const to of MODES) {
        if (canMoveTo(from, to)) continue;
        const l = createLifecycle();
        for (const step of pathTo(from)) l.to(step);
        expect(() => l.to(to), `${from}->${to}`).toThrow(IllegalWorkerTransition);
        expect(l.mode).toBe(from);
      }
    }
  });

  it('reads running and winding down from the mode', () => {
    const l = createLifecycle();
    const seen = [[l.mode, l.running, l.windingDown]];
    for (const step of ['running', 'stopping', 'stopped'] as const) {
      l.to(step);
      seen.push([l.mode, l.running, l.windingDown]);
    }
    expect(seen).toEqual([
      ['idle', false, false],
      ['running', true, false],
      ['stopping', false, true],
      ['stopped', false, true],
    ]);
  });
});

/** The moves from idle to `mode`. */
function pathTo(mode: WorkerMode): WorkerMode[] {
  return { idle: [], running: ['running'], stopping: ['stopping'], stopped: ['stopping', 'stopped'] }[mode] as WorkerMode[];
}

describe('scheduler helpers on manual time', () => {
  it('repeat runs on every period until stopped; a deadline passes at its instant', () => {
    const clock = new TestClock();
    clock.set(new Date('2025-05-01T12:00:00.000Z'));
    const timers = manualTimers(clock);
    let runs = 0;
    const stop = repeat(timers, 500, () => void runs++);
    const deadline = deadlineIn(timers, 1_200);
    timers.advance(999);
    expect([runs, deadline.passed]).toEqual([1, false]);
    timers.advance(201);
    expect([runs, deadline.passed]).toEqual([2, true]);
    stop();
    timers.advance(10_000);
    expect([runs, timers.pending()]).toEqual([2, 0]);
  });
});

describe('worker timing on the test scheduler', () => {
  const LEASE_MS = 3_000;
  const POLL_MS = 10_000;
  let t: TestApp;
  let w: DispatchWorker | undefined;
  let stop: () => Promise<void> = async () => undefined;

  beforeEach(async () => {
    t = await createTestApp();
    t.clock.set(new Date('2025-05-01T12:00:00.000Z'));
  });
  afterEach(async () => {
    await stop();
    await t.close();
  });

  it('renews leases every third of a lease and polls every pollMs of the advanced clock', async () => {
    const sim = manualSimulator(t.clock, { callMs: 600_000 });
    const timers = sim.timers;
    // Stopping moves through timers too (the grace period, the hang-ups): time is advanced until it is done.
    stop = async () => {
      if (!w) return;
      let done = false;
      void w.stop({ graceMs: 0 }).then(() => (done = true));
      await waitFor(() => (timers.advance(100), done), { what: 'the worker stopped' });
      expect(w.mode()).toBe('stopped');
    };
    const a = await t.seedAccount();
    const first = await insertBatch(t.deps, a, { contacts: 1, callOverrides: () => ({ status: 'queued', phoneNumber: phoneEndingIn(4) }) });
    const t0 = t.clock.now().getTime();
    w = testWorker(t.deps, { leaseMs: LEASE_MS, pollMs: POLL_MS, providers: sim.registry, scheduler: timers });
    expect(w.mode()).toBe('idle');
    w.start();
    expect(w.mode()).toBe('running');
    await sim.dialled(1);
    const callRow = (id: string) => t.deps.db.prisma.call.findUniqueOrThrow({ where: { id } });
    const leaseOf = async (id: string) => (await callRow(id)).leaseExpiresAt?.getTime();
    expect(await leaseOf(first.calls[0].id)).toBe(t0 + LEASE_MS);

    // A call queued now waits for the next poll: the loop claims only when its timer fires.
    const second = await insertBatch(t.deps, a, { contacts: 1, callOverrides: () => ({ status: 'queued', phoneNumber: phoneEndingIn(4, 1) }) });

    // The renewal timer runs every LEASE_MS / 6; a renewal is due once a third of a lease has passed.
    // advance() fires timers in one synchronous pass: time moves a period at a time, the promises
    // of one firing settled before the next (as between real timers).
    const step = async (ms: number) => {
      for (let left = ms; left > 0; left -= LEASE_MS / 6) {
        timers.advance(Math.min(left, LEASE_MS / 6));
        await new Promise<void>((r) => setImmediate(r));
      }
    };
    await step(LEASE_MS / 3 - 1);
    expect(await leaseOf(first.calls[0].id)).toBe(t0 + LEASE_MS);
    await step(1);
    await expect.poll(() => leaseOf(first.calls[0].id)).toBe(t0 + LEASE_MS / 3 + LEASE_MS);
    await step(LEASE_MS / 3);
    await expect.poll(() => leaseOf(first.calls[0].id)).toBe(t0 + (2 * LEASE_MS) / 3 + LEASE_MS);

    expect((await callRow(second.calls[0].id)).status).toBe('queued');
    timers.advance(POLL_MS - 1 - (2 * LEASE_MS) / 3);
    expect((await callRow(second.calls[0].id)).status).toBe('queued');
    timers.advance(1);
    await sim.dialled(2);
    const claimed = await callRow(second.calls[0].id);
    expect([claimed.status, claimed.timestamp?.getTime()]).toEqual(['ringing', t0 + POLL_MS]);
  });
});
