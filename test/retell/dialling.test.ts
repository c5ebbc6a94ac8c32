// Dialling through the worker: a create Retell refuses (4xx) fails the call with Retell's message in
// its history; dial pacing is applied before a call is claimed, so no call waits "ringing".
import { afterEach, describe, expect, it } from 'vitest';
import { callEvents, expectConsistentBatch, testWorker } from '../helpers/dispatch.ts';
import { insertBatch } from '../helpers/fixtures.ts';
import { createDialPacer } from '../../src/dispatch/voice/dial-pacing.ts';
import { addDidNumber } from '../../src/services/accounts/catalog.ts';
import { batchSettled, expectNoInvalidBodies, retellApp, until, type RetellApp } from './retell-app.ts';

let r: RetellApp | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

describe('a create Retell refuses', () => {
  it("fails the call with Retell's message in its history; account-level refusals skip the alternate number", async () => {
    r = await retellApp();
    const { t, fake, a } = r;
    fake.rejectCreates((b) =>
      b.to_number === '+14155550127'
        ? { status: 402, message: 'Trial has ended, please add payment method.' }
        : b.to_number === '+14155550126'
          ? { status: 400, message: 'to_number is not a valid E.164 number' }
          : null,
    );
    const { batch, calls: inserted } = await insertBatch(t.deps, a, {
      contacts: 2,
      batch: { useAlternateNumber: true },
      callOverrides: (i) => ({
        status: 'queued',
        phoneNumber: ['+14155550127', '+14155550126'][i],
        alternatePhone: ['+14155550134', '+14155550144'][i],
      }),
    });
    const w = testWorker(t.deps);
    await w.runOnce();
    await w.settle();
    // The refused number's alternate is a normal call: play it out.
    await until(async () => fake.calls.size === 1, undefined, 'alternate dial');
    await fake.finishAll();
    await fake.analyzeAll();
    await w.drain({ timeoutMs: 20_000 });

    const { batch: done, calls } = await expectConsistentBatch(t.deps, batch.id);
    expect({ completed: done.completed, failed: done.failed }).toEqual({ completed: 1, failed: 1 });
    const [paid, bad] = inserted.map((c) => calls.find((x) => x.id === c.id)!);
    expect([paid.status, paid.hangupBy, paid.disconnectReason, paid.attempts, paid.providerCallId]).toEqual([
      'failed',
      'system',
      'payment_required',
      1,
      null,
    ]);
    expect([bad.status, bad.dialedNumber, bad.attempts, bad.usedAlternate]).toEqual(['completed', '+14155550144', 2, true]);
    const events = await callEvents(t.deps, batch.id);
    const ended = events.find((e) => e.call_id === paid.id && e.to_status === 'failed')!;
    expect(ended.detail).toMatchObject({
      event: 'ended',
      disconnect_reason: 'payment_required',
      provider: 'retell',
      provider_status: 402,
      provider_message: 'Trial has ended, please add payment method.',
    });
    const alternate = events.find((e) => e.call_id === bad.id && e.detail?.event === 'dial' && e.detail?.alternate === true)!;
    // Retell's message for the refused primary is in the history of the alternate dial.
    expect(alternate.detail).toMatchObject({
      number: '+14155550144',
      previous: {
        number: '+14155550126',
        status: 'failed',
        disconnect_reason: 'dial_rejected',
        provider_status: 400,
        provider_message: 'to_number is not a valid E.164 number',
      },
    });
    expect(fake.creates.map((c) => c.to_number)).toEqual(['+14155550144']);
    expectNoInvalidBodies(fake);
  });
});

describe('dial pacing', () => {
  it('claims only the calls whose from-number has a slot now: the others stay queued, not ringing', async () => {
    // 0.5 calls per second per from-number: a slot every 2 s of the pacer's clock.
    r = await retellApp({ dialRate: 0.5 });
    const { t, fake, a } = r;
    let now = 1_000_000;
    const w = testWorker(t.deps, { dialPacer: createDialPacer(() => now), pollMs: 20 });
    const { batch } = await insertBatch(t.deps, a, { contacts: 4, callOverrides: (i) => ({ status: 'queued', phoneNumber: `+1415555012${i + 4}` }) });
    const statuses = async () =>
      (await t.deps.db.prisma.call.findMany({ where: { batchId: batch.id }, orderBy: { seq: 'asc' } })).map((c) => c.status);

    expect((await w.runOnce()).claimed).toBe(1);
    await w.settle();
    expect((await w.runOnce()).claimed).toBe(0);
    await w.settle();
    expect(await statuses()).toEqual(['ringing', 'queued', 'queued', 'queued']);
    expect(fake.creates).toHaveLength(1);
    now += 1_500;
    expect((await w.runOnce()).claimed).toBe(0);
    now += 500;
    expect((await w.runOnce()).claimed).toBe(1);
    await w.settle();
    expect(await statuses()).toEqual(['ringing', 'ringing', 'queued', 'queued']);
    // Every call marked dialled has reached Retell: none waits for its slot while "ringing".
    expect(fake.creates).toHaveLength(2);
    now += 10_000;
    await fake.finishAll();
    await fake.analyzeAll();
    // Each round moves the pacer on a slot and plays out what was dialled, until the batch is done.
    await until(
      async () => {
        if ((await t.deps.db.prisma.batch.findUniqueOrThrow({ where: { id: batch.id } })).status === 'completed') return true;
        now += 2_000;
        await w.runOnce();
        await w.settle();
        await fake.finishAll();
        await fake.analyzeAll();
        return false;
      },
      undefined,
      'paced batch completed',
    );
    await w.drain({ timeoutMs: 20_000 });
    expect((await expectConsistentBatch(t.deps, batch.id)).batch.status).toBe('completed');
    expect(fake.creates).toHaveLength(4);
  });

  it("a from-number whose batches have finished no longer holds back dials from the account's other numbers", async () => {
    r = await retellApp({ dialRate: 0.5 });
    const { t, fake, a } = r;
    const now = 1_000_000;
    const w = testWorker(t.deps, { dialPacer: createDialPacer(() => now), pollMs: 20 });
    const first = await insertBatch(t.deps, a, { contacts: 1, callOverrides: () => ({ status: 'queued', phoneNumber: '+14155550124' }) });
    expect((await w.runOnce()).claimed).toBe(1);
    await w.settle();
    await fake.finishAll({ analyzeNow: () => true });
    await until(() => batchSettled(t, first.batch.id), undefined, 'first batch');
    await w.settle();
    // The pacer's clock stands still: the first number's next slot is 2 s away. Another number is free.
    const other = await addDidNumber(t.deps.db, a.account, '+14155550199');
    const second = await insertBatch(t.deps, a, {
      contacts: 1,
      batch: { didNumberId: other.id },
      callOverrides: () => ({ status: 'queued', phoneNumber: '+14155550125' }),
    });
    expect((await w.runOnce()).claimed).toBe(1);
    await w.settle();
    expect(fake.creates.map((c) => c.from_number)).toEqual(['+14155550100', '+14155550199']);
    await fake.finishAll({ analyzeNow: () => true });
    await until(() => batchSettled(t, second.batch.id), undefined, 'second batch');
    await w.drain({ timeoutMs: 20_000 });
  });

  it('paces each from-number on its own: a busy number does not hold back batches on another, batches on one number share its slots', async () => {
    // 0.5 calls per second per from-number: a slot every 2 s of the pacer's clock.
    r = await retellApp({ dialRate: 0.5 });
    const { t, fake, a } = r;
    let now = 1_000_000;
    const w = testWorker(t.deps, { dialPacer: createDialPacer(() => now), pollMs: 20 });
    const other = await addDidNumber(t.deps.db, a.account, '+14155550199');
    const contacts = (base: number) => (i: number) => ({ status: 'queued' as const, phoneNumber: `+1415555${base + i}` });
    await insertBatch(t.deps, a, { contacts: 3, callOverrides: contacts(1304) }); // A, first number
    await insertBatch(t.deps, a, { contacts: 3, callOverrides: contacts(1404) }); // C, first number
    await insertBatch(t.deps, a, { contacts: 3, batch: { didNumberId: other.id }, callOverrides: contacts(1504) }); // B, other number
    const round = async () => {
      const { claimed } = await w.runOnce();
      await w.settle();
      return claimed;
    };
    const fromEach = () => ['+14155550100', '+14155550199'].map((n) => fake.creates.filter((c) => c.from_number === n).length);

    // Nothing is known about the batches yet: one call each, to learn their numbers (the first
    // number's second dial waits for its slot before it is placed).
    expect(await round()).toBe(3);
    expect(fromEach()).toEqual([2, 1]);
    // 2 s on: the first number's next slot is 2 s away, the other number has one now. An
    // account-wide limit would claim nothing; per number, B dials.
    now += 2_000;
    expect(await round()).toBe(1);
    expect(fromEach()).toEqual([2, 2]);
    // 2 s on: each number has one slot. A and C share the first number's: two calls, not three.
    now += 2_000;
    expect(await round()).toBe(2);
    expect(fromEach()).toEqual([3, 3]);
    await w.stop({ graceMs: 0 });
  });

  it('the pacer spaces dials evenly per from-number and counts slots within a horizon', async () => {
    let now = 0;
    const p = createDialPacer(() => now);
    expect(p.available('+1', 0, 100)).toBe(Number.POSITIVE_INFINITY);
    expect(p.available('+1', 10, 200)).toBe(3); // at 0, 100, 200 ms
    expect([p.take('+1', 10), p.take('+1', 10), p.take('+1', 10)]).toEqual([0, 100, 200]);
    expect(p.available('+1', 10, 200)).toBe(0);
    expect(p.available('+2', 10, 0)).toBe(1);
    now = 250;
    expect(p.available('+1', 10, 100)).toBe(1); // the next slot is at 300, within 250 + 100
    expect(p.available('+1', 10, 149)).toBe(1);
    expect(p.available('+1', 10, 49)).toBe(0);
    expect(p.take('+1', 10)).toBe(50);
  });
});
