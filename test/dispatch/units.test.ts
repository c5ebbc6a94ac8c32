import { describe, expect, it, vi } from 'vitest';
import fc from 'fast-check';
import { allocateSlots, type BatchDemand } from '../../src/domain/fair-share.ts';
import { mergeWrites, WriteQueue } from '../../src/dispatch/store/write-queue.ts';
import type { CallWrite } from '../../src/services/calls/call-transitions.ts';
import { manualTimers } from '../helpers/dispatch.ts';
import { TestClock } from '../helpers/clock.ts';

const b = (id: string, inFlight: number, concurrency: number, waiting: number): BatchDemand => ({ id, inFlight, concurrency, waiting });
const obj = (m: Map<string, number>) => Object.fromEntries(m);

describe('allocateSlots', () => {
  it('splits free slots evenly between equal batches', () => {
    expect(obj(allocateSlots([b('big', 0, 10, 1000), b('small', 0, 10, 3)], 4))).toEqual({ big: 2, small: 2 });
  });

  it('gives freed slots to the batch with the fewest calls in flight', () => {
    expect(obj(allocateSlots([b('big', 4, 10, 100), b('small', 0, 10, 5)], 2))).toEqual({ small: 2 });
    expect(obj(allocateSlots([b('big', 3, 10, 100), b('small', 1, 10, 5)], 4))).toEqual({ big: 1, small: 3 });
  });

  it("respects each batch's concurrency, its waiting calls, the budget and the account's free slots", () => {
    expect(obj(allocateSlots([b('x', 2, 3, 100), b('y', 0, 10, 2)], 10))).toEqual({ x: 1, y: 2 });
    expect(obj(allocateSlots([b('x', 0, 5, 100)], 10, 3))).toEqual({ x: 3 });
    expect(obj(allocateSlots([b('x', 0, 5, 100)], 0))).toEqual({});
    expect(obj(allocateSlots([b('x', 0, 5, 100)], -2))).toEqual({});
  });

  it('rotate decides who gets the odd slot', () => {
    expect(obj(allocateSlots([b('p', 0, 5, 9), b('q', 0, 5, 9)], 1, Infinity, 0))).toEqual({ p: 1 });
    expect(obj(allocateSlots([b('p', 0, 5, 9), b('q', 0, 5, 9)], 1, Infinity, 1))).toEqual({ q: 1 });
  });

  it('never exceeds any limit and leaves no usable slot unused (property)', () => {
    const demand = fc.record({ inFlight: fc.nat(20), concurrency: fc.nat(20), waiting: fc.nat(50) });
    fc.assert(
      fc.property(fc.array(demand, { maxLength: 6 }), fc.integer({ min: -5, max: 60 }), fc.nat(100), fc.nat(10), (ds, free, budget, rotate) => {
        const batches = ds.map((d, i) => ({ id: `b${i}`, ...d }));
        const alloc = allocateSlots(batches, free, budget, rotate);
        const total = [...alloc.values()].reduce((s, n) => s + n, 0);
        expect(total).toBeLessThanOrEqual(Math.max(0, Math.min(free, budget)));
        let room = 0;
        for (const x of batches) {
          const given = alloc.get(x.id) ?? 0;
          expect(given).toBeGreaterThanOrEqual(0);
          expect(x.inFlight + given <= Math.max(x.inFlight, x.concurrency)).toBe(true);
          expect(given).toBeLessThanOrEqual(x.waiting);
          room += Math.max(0, Math.min(x.concurrency - x.inFlight, x.waiting));
        }
        expect(total).toBe(Math.min(room, Math.max(0, Math.min(free, budget))));
      }),
    );
  });
});

describe('mergeWrites', () => {
  const base: CallWrite = {
    callId: 'call_1',
    batchId: 'sched_1',
    accountId: 'acc_1',
    owner: 'w',
    from: 'ringing',
    to: 'answered',
    events: [{ from: 'ringing', to: 'answered', at: new Date(1) }],
    set: { attemptsIncrement: 1, dialedNumber: '+1' },
  };
  it('chains status changes, keeps every event in order and the latest field values', () => {
    const m = mergeWrites(base, {
      ...base,
      from: 'answered',
      to: 'completed',
      events: [{ from: 'answered', to: 'completed', at: new Date(2) }],
      set: { attemptsIncrement: 1, dialedNumber: '+2', hangupBy: 'agent' },
      releaseLease: true,
    });
    expect(m.from).toBe('ringing');
    expect(m.to).toBe('completed');
    expect(m.events.map((e) => e.to)).toEqual(['answered', 'completed']);
    expect(m.set).toEqual({ attemptsIncrement: 2, dialedNumber: '+2', hangupBy: 'agent' });
    expect(m.releaseLease).toBe(true);
  });
});

describe('WriteQueue', () => {
  const w = (callId: string): CallWrite => ({
    callId,
    batchId: 'sched_1',
    accountId: 'acc_1',
    owner: 'w',
    from: 'ringing',
    to: 'ringing',
    events: [],
    set: {},
  });
  const queue = () =>
    new WriteQueue({
      apply: async (writes) => {
        await Promise.resolve();
        return { applied: new Set(writes.map((x) => x.callId)), finishedBatches: [] };
      },
    });

  // The queue's timers are the global ones: faked (setTimeout only, not the setImmediate a group
  // waits for), so a deferral's length is advanced, not waited out.
  const fakeDeferTimers = () => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  const turn = () => new Promise((r) => setImmediate(r));

  it('a deferred write goes out with the next group, or on its own after its delay', async () => {
    fakeDeferTimers();
    try {
      const groups: string[][] = [];
      const recording = () =>
        new WriteQueue({
          apply: async (writes) => {
            groups.push(writes.map((x) => x.callId));
            return { applied: new Set(writes.map((x) => x.callId)), finishedBatches: [] };
          },
        });
      // Before its delay, only another write can take this one out.
      const q = recording();
      const deferred = q.enqueue(w('a'), { deferMs: 600_000 });
      await turn();
      expect(groups).toEqual([]);
      await Promise.all([deferred, q.enqueue(w('b'))]);
      expect(groups).toEqual([['a', 'b']]);
      // (A fresh queue: q's long timer, now stale, is still set.) Alone, it waits out its delay.
      let sent = false;
      const alone = recording()
        .enqueue(w('c'), { deferMs: 10 })
        .then((ok) => ((sent = true), ok));
      vi.advanceTimersByTime(9);
      await turn();
      expect(sent).toBe(false);
      vi.advanceTimersByTime(1);
      expect(await alone).toBe(true);
      expect(groups).toEqual([['a', 'b'], ['c']]);
    } finally {
      vi.useRealTimers();
    }
  });

  it("whenIdle resolves after a deferred write's timer fires with its write already gone out", async () => {
    fakeDeferTimers();
    try {
      const q = queue();
      const write = q.enqueue(w('a'), { deferMs: 30 });
      q.flushDeferred();
      expect(await write).toBe(true);
      // The deferral's timer, now stale, fires: it must not leave the queue looking busy.
      vi.advanceTimersByTime(30);
      let idle = false;
      void q.whenIdle().then(() => (idle = true));
      await turn();
      expect(idle).toBe(true);
      expect(q.idle).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it('never commits two writes of one call at once, and keeps their order', async () => {
    const seen: string[][] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const q = new WriteQueue({
      parallel: 4,
      apply: async (writes) => {
        inFlight += 1;
        maxInFlight = Math.max(maxInFlight, inFlight);
        seen.push(writes.map((x) => `${x.callId}:${x.to}`));
        await new Promise((r) => setTimeout(r, 5));
        inFlight -= 1;
        return { applied: new Set(writes.map((x) => x.callId)), finishedBatches: [] };
      },
    });
    const first = q.enqueue({ ...w('a'), to: 'answered' });
    await new Promise((r) => setImmediate(r));
    const second = q.enqueue({ ...w('a'), from: 'answered', to: 'completed' });
    const other = q.enqueue(w('b'));
    expect(await Promise.all([first, second, other])).toEqual([true, true, true]);
    await q.whenIdle();
    expect(seen[0]).toEqual(['a:answered']);
    // b may run beside a's first write; a's second write only after it.
    expect(seen.flat().indexOf('a:completed')).toBeGreaterThan(seen.flat().indexOf('a:answered'));
    expect(seen.filter((g) => g.includes('a:completed'))).toHaveLength(1);
    expect(maxInFlight).toBeGreaterThanOrEqual(1);
  });
});

describe('manualTimers (the test harness)', () => {
  it('fires a timer that an earlier one schedules, however much real time passes while they run', () => {
    // Real time moves a millisecond at every look: the worst a loaded machine can do.
    let ms = Date.now();
    const now = vi.spyOn(Date, 'now').mockImplementation(() => ms++);
    try {
      const timers = manualTimers(new TestClock()); // follows real time until advanced
      const fired: string[] = [];
      timers.setTimeout(() => {
        fired.push('ringing');
        timers.setTimeout(() => fired.push('answered'), 2_000);
      }, 0);
      timers.advance(2_000);
      expect(fired).toEqual(['ringing', 'answered']);
    } finally {
      now.mockRestore();
    }
  });
});
