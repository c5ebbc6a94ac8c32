// The account's frequency cap on a controllable clock: a number is dialled at most maxCalls times
// in any rolling period across the account's batches. A call over the cap is not dialled; it waits
// (status unchanged, in the queued counter) with next_attempt_at and wait_reason frequency_cap, and
// is dialled once the clock passes that time. Nothing sleeps: the test clock moves.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { batchBody, CALL_BATCHES } from '../helpers/batch-requests.ts';
import { callEvents, expectConsistentBatch, phoneEndingIn, testWorker } from '../helpers/dispatch.ts';
import { insertBatch } from '../helpers/fixtures.ts';
import { claimCalls } from '../../src/dispatch/store/claim-calls.ts';
import { NUMBER_DIALS_PRUNE_CHUNK, pruneNumberDials } from '../../src/dispatch/store/prune-number-dials.ts';
import { frequencyCap } from '../../src/cli/command.ts';

const START = new Date('2026-03-02T15:00:00.000Z');
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());
beforeEach(() => t.clock.set(START));

const seed = (frequencyCap: { maxCalls: number; periodSeconds: number } | null) =>
  t.seedAccount({ limits: { maxConcurrentCalls: 50 }, frequencyCap });
const calls = (batchId: string) => t.deps.db.prisma.call.findMany({ where: { batchId }, orderBy: { seq: 'asc' } });
const dialsOf = (accountId: string) =>
  t.deps.db.prisma.numberDial.findMany({ where: { accountId }, orderBy: [{ dialledAt: 'asc' }, { callId: 'asc' }] });
const drain = () => testWorker(t.deps).drain();
/** A started batch of calls to these numbers (last digit 4: the simulator answers). */
const batchOf = (a: SeededAccount, numbers: string[], extra: Parameters<typeof insertBatch>[2]['batch'] = {}) =>
  insertBatch(t.deps, a, {
    contacts: numbers.length,
    status: 'running',
    batch: { concurrency: 10, ...extra },
    callOverrides: (i) => ({ phoneNumber: numbers[i] }),
  });
const claim = (a: SeededAccount) =>
  claimCalls(t.deps, { accountId: a.account.id, workerId: 'w-test', clock: () => t.clock.now(), leaseMs: 60_000, budget: 100 });

describe('across batches', () => {
  it('holds the second batch’s call to a number dialled within the period, then dials it once the first dial leaves the period', async () => {
    const a = await seed({ maxCalls: 1, periodSeconds: 3_600 });
    const number = phoneEndingIn(4, 1);
    const first = await batchOf(a, [number]);
    await drain();
    const [dialled] = await calls(first.batch.id);
    expect(dialled.status).toBe('completed');
    const firstDial = dialled.timestamp!;

    const second = await batchOf(a, [number, phoneEndingIn(4, 2)]);
    await drain();
    const [firstHeld, other] = await calls(second.batch.id);
    let held = firstHeld;
    const waitsUntil = new Date(firstDial.getTime() + HOUR);
    expect([held.status, held.attempts, held.nextAttemptAt, held.waitReason]).toEqual(['pending', 0, waitsUntil, 'frequency_cap']);
    expect(other.status).toBe('completed');
    // Still waiting: in the queued counter, and the batch keeps running.
    const { batch } = await expectConsistentBatch(t.deps, second.batch.id);
    expect([batch.status, batch.queued, batch.completed]).toEqual(['running', 1, 1]);
    // No history entry: the call was never dialled.
    expect((await callEvents(t.deps, second.batch.id)).filter((e) => e.call_id === held.id)).toEqual([]);

    const rest = await t.request('GET', `${CALL_BATCHES}/${second.batch.id}/calls`, { key: a.apiKey });
    expect(rest.body.data.items[0]).toMatchObject({ status: 'pending', attempts: 0, next_attempt_at: waitsUntil.toISOString() });
    const gql = await t.gql(`query($id: ID!) { node(id: $id) { ... on Call { status nextAttemptAt waitReason } } }`, { id: held.id }, a.apiKey);
    expect(gql.body.data.node).toEqual({ status: 'pending', nextAttemptAt: waitsUntil.toISOString(), waitReason: 'FREQUENCY_CAP' });

    // A second before the first dial leaves the period: still held, and nothing rewritten.
    t.clock.set(new Date(waitsUntil.getTime() - 1_000));
    await drain();
    [held] = await calls(second.batch.id);
    expect([held.status, held.attempts, held.nextAttemptAt]).toEqual(['pending', 0, waitsUntil]);

    t.clock.set(waitsUntil);
    await drain();
    [held] = await calls(second.batch.id);
    expect([held.status, held.attempts, held.nextAttemptAt, held.waitReason]).toEqual(['completed', 1, null, null]);
    expect(held.timestamp).toEqual(waitsUntil);
    const after = await expectConsistentBatch(t.deps, second.batch.id);
    expect([after.batch.status, after.batch.completed]).toEqual(['completed', 2]);
    const again = await t.gql(`query($id: ID!) { node(id: $id) { ... on Call { waitReason } } }`, { id: held.id }, a.apiKey);
    expect(again.body.data.node.waitReason).toBeNull();
    // Every dial of the capped account was counted, per number.
    expect((await dialsOf(a.account.id)).map((d) => [d.phoneNumber, d.dialledAt])).toEqual([
      [number, firstDial],
      [phoneEndingIn(4, 2), firstDial],
      [number, waitsUntil],
    ]);
  });

  it('counts a retry’s dial too: a call put back in line waits for the cap as well (queued)', async () => {
    const a = await seed({ maxCalls: 2, periodSeconds: 86_400 });
    const number = phoneEndingIn(4, 3);
    // Two dials of the number an hour ago, by another batch.
    const earlier = new Date(START.getTime() - HOUR);
    const done = await batchOf(a, [number, number]);
    await t.deps.db.prisma.numberDial.createMany({
      data: (await calls(done.batch.id)).map((c, i) => ({
        accountId: a.account.id,
        phoneNumber: number,
        dialledAt: new Date(earlier.getTime() + i),
        callId: c.id,
      })),
    });
    await t.deps.db.prisma.batch.update({ where: { id: done.batch.id }, data: { status: 'paused' } });
    const retry = await insertBatch(t.deps, a, {
      contacts: 1,
      status: 'running',
      batch: { concurrency: 10, retryMaxAttempts: 3, retryOn: ['busy'], retryDelaySeconds: 60 },
      callOverrides: () => ({ phoneNumber: number, status: 'queued', attempts: 1, nextAttemptAt: new Date(START.getTime() - 1_000) }),
    });
    const r = await claim(a);
    expect(r.claimed).toEqual([]);
    const [held] = await calls(retry.batch.id);
    // The older of the two dials leaves the period first.
    expect([held.status, held.nextAttemptAt, held.waitReason]).toEqual(['queued', new Date(earlier.getTime() + DAY), 'frequency_cap']);
    await expectConsistentBatch(t.deps, retry.batch.id);
  });
});

describe('one claim', () => {
  it('counts two calls of one number in the same claim: the first dialled, the second held until now + period', async () => {
    const a = await seed({ maxCalls: 1, periodSeconds: 7_200 });
    const number = phoneEndingIn(4, 4);
    const b1 = await batchOf(a, [number, phoneEndingIn(4, 5)]);
    const b2 = await batchOf(a, [number]);
    const r = await claim(a);
    expect(r.claimed.map((c) => c.phoneNumber).sort()).toEqual([number, phoneEndingIn(4, 5)].sort());
    const [dialled] = await calls(b1.batch.id);
    const [held] = await calls(b2.batch.id);
    // Batches in id order, then by seq: the older batch's call goes first.
    expect(b1.batch.id < b2.batch.id).toBe(true);
    expect([dialled.status, dialled.attempts, dialled.waitReason]).toEqual(['ringing', 1, null]);
    expect([held.status, held.attempts, held.nextAttemptAt, held.waitReason]).toEqual([
      'pending',
      0,
      new Date(START.getTime() + 2 * HOUR),
      'frequency_cap',
    ]);
    const other = (await calls(b1.batch.id))[1];
    expect((await dialsOf(a.account.id)).map((d) => `${d.phoneNumber} ${d.callId}`).sort()).toEqual(
      [`${number} ${dialled.id}`, `${phoneEndingIn(4, 5)} ${other.id}`].sort(),
    );
    // Claimed again at once: the held call is not due, nothing more is dialled or rewritten.
    expect((await claim(a)).claimed).toEqual([]);
    expect((await calls(b2.batch.id))[0].nextAttemptAt).toEqual(new Date(START.getTime() + 2 * HOUR));
  });

  it('with a cap of 2, three calls of one number in one claim: two dialled, the third held', async () => {
    const a = await seed({ maxCalls: 2, periodSeconds: 3_600 });
    const number = phoneEndingIn(4, 6);
    const b = await batchOf(a, [number, number, number], { deduplicateByPhone: false });
    const r = await claim(a);
    expect(r.claimed.map((c) => c.seq)).toEqual([1, 2]);
    expect((await calls(b.batch.id)).map((c) => [c.status, c.waitReason])).toEqual([
      ['ringing', null],
      ['ringing', null],
      ['pending', 'frequency_cap'],
    ]);
    expect(await dialsOf(a.account.id)).toHaveLength(2);
  });
});

describe('no cap', () => {
  it('dials every call of a number, writes no dial rows and no wait reason', async () => {
    const a = await seed(null);
    const number = phoneEndingIn(4, 7);
    const b1 = await batchOf(a, [number]);
    const b2 = await batchOf(a, [number, number], { deduplicateByPhone: false });
    const r = await claim(a);
    expect(r.claimed).toHaveLength(3);
    const rows = [...(await calls(b1.batch.id)), ...(await calls(b2.batch.id))];
    expect(rows.map((c) => [c.status, c.nextAttemptAt, c.waitReason])).toEqual(Array(3).fill(['ringing', null, null]));
    expect(await dialsOf(a.account.id)).toEqual([]);
  });
});

describe('with a calling window', () => {
  it('holds a windowed call over the cap; when its window closes first, it is dialled at a later opening', async () => {
    const a = await seed({ maxCalls: 1, periodSeconds: 3_600 });
    // Friday 2026-03-06 14:00Z is 09:00 in New York; the window is open for half an hour.
    t.clock.set(new Date('2026-03-06T14:00:00.000Z'));
    const number = '+12125550144';
    const post = async (extra: Record<string, unknown>) => {
      const res = await t.request('POST', CALL_BATCHES, {
        key: a.apiKey,
        body: batchBody(a, { contacts: [{ contact_id: 'c1', phone_number: number, metadata: { sim: 'completed' } }], ...extra }),
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.data.batch_id as string;
    };
    const plain = await post({});
    await drain();
    expect((await calls(plain))[0].status).toBe('completed');

    const windowed = await post({
      calling_window: { start: '09:00', end: '09:30', days: ['mon', 'tue', 'wed', 'thu', 'fri'], timezone: 'recipient' },
    });
    await drain();
    let [held] = await calls(windowed);
    expect([held.status, held.attempts, held.nextAttemptAt, held.waitReason]).toEqual([
      'pending',
      0,
      new Date('2026-03-06T15:00:00.000Z'),
      'frequency_cap',
    ]);

    // The window closes before the cap lets the call through: not dialled; it waits for an opening.
    t.clock.set(new Date('2026-03-06T14:31:00.000Z'));
    await drain();
    t.clock.set(new Date('2026-03-06T15:00:00.000Z'));
    await drain();
    [held] = await calls(windowed);
    expect([held.status, held.attempts]).toEqual(['pending', 0]);
    expect(held.nextAttemptAt!.getTime()).toBeGreaterThan(new Date('2026-03-06T15:00:00.000Z').getTime());

    const opening = held.nextAttemptAt!;
    t.clock.set(opening);
    await drain();
    [held] = await calls(windowed);
    expect([held.status, held.attempts, held.waitReason, held.timestamp]).toEqual(['completed', 1, null, opening]);
    await expectConsistentBatch(t.deps, windowed);
  });
});

describe('the alternate number', () => {
  it('counts toward its own number’s cap, and is not dialled once that cap is reached (alternate_not_dialled: frequency_cap)', async () => {
    const a = await seed({ maxCalls: 1, periodSeconds: 3_600 });
    const alternate = phoneEndingIn(4, 8);
    // Primary numbers ending in 0: the simulator does not answer, so the alternate is dialled.
    const alternateBatch = (primary: string) =>
      insertBatch(t.deps, a, {
        contacts: 1,
        status: 'running',
        batch: { concurrency: 10, useAlternateNumber: true },
        callOverrides: () => ({ phoneNumber: primary, alternatePhone: alternate }),
      });
    const first = await alternateBatch(phoneEndingIn(0, 1));
    await drain();
    const [reached] = await calls(first.batch.id);
    expect([reached.status, reached.attempts, reached.dialedNumber]).toEqual(['completed', 2, alternate]);
    expect((await dialsOf(a.account.id)).map((d) => d.phoneNumber).sort()).toEqual([phoneEndingIn(0, 1), alternate].sort());

    const second = await alternateBatch(phoneEndingIn(0, 2));
    await drain();
    const [ended] = await calls(second.batch.id);
    expect([ended.status, ended.attempts, ended.dialedNumber]).toEqual(['no_answer', 1, phoneEndingIn(0, 2)]);
    const end = (await callEvents(t.deps, second.batch.id)).find((e) => e.detail?.event === 'ended');
    expect(end?.detail).toMatchObject({ alternate_not_dialled: 'frequency_cap' });
    expect((await dialsOf(a.account.id)).filter((d) => d.phoneNumber === alternate)).toHaveLength(1);
  });
});

describe('the setting', () => {
  const update = (id: string, cap: unknown) =>
    t.gql(
      `mutation($id: ID!, $cap: FrequencyCapInput) { adminUpdateAccount(id: $id, input: { frequencyCap: $cap }) { frequencyCap { maxCalls periodSeconds } } }`,
      { id, cap },
      ADMIN_TOKEN,
    );

  it('is set, shown, kept when absent and cleared with null through the admin mutations; bounds are refused', async () => {
    const created = await t.gql(
      `mutation { adminCreateAccount(input: { name: "Capped", email: "c@example.test", frequencyCap: { maxCalls: 7, periodSeconds: 604800 } }) { account { id frequencyCap { maxCalls periodSeconds } } } }`,
      {},
      ADMIN_TOKEN,
    );
    const account = created.body.data.adminCreateAccount.account;
    expect(account.frequencyCap).toEqual({ maxCalls: 7, periodSeconds: 604_800 });
    const untouched = await t.gql(
      `mutation($id: ID!) { adminUpdateAccount(id: $id, input: { name: "Still capped" }) { frequencyCap { maxCalls } } }`,
      { id: account.id },
      ADMIN_TOKEN,
    );
    expect(untouched.body.data.adminUpdateAccount.frequencyCap).toEqual({ maxCalls: 7 });
    expect((await update(account.id, { maxCalls: 100, periodSeconds: 3_600 })).body.data.adminUpdateAccount.frequencyCap).toEqual({
      maxCalls: 100,
      periodSeconds: 3_600,
    });

    for (const [cap, detail] of [
      [{ maxCalls: 0, periodSeconds: 3_600 }, 'frequencyCap.maxCalls: Input should be greater than or equal to 1'],
      [{ maxCalls: 101, periodSeconds: 3_600 }, 'frequencyCap.maxCalls: Input should be less than or equal to 100'],
      [{ maxCalls: 1, periodSeconds: 3_599 }, 'frequencyCap.periodSeconds: Input should be greater than or equal to 3600'],
      [{ maxCalls: 1, periodSeconds: 30 * 86_400 + 1 }, 'frequencyCap.periodSeconds: Input should be less than or equal to 2592000'],
    ] as const) {
      const r = await update(account.id, cap);
      expect(r.body.errors[0].extensions).toMatchObject({ code: 'MISSING_PARAMETER', details: [detail] });
    }
    const stored = await t.deps.db.prisma.account.findUniqueOrThrow({ where: { id: account.id } });
    expect([stored.frequencyCapMaxCalls, stored.frequencyCapPeriodSeconds]).toEqual([100, 3_600]);

    expect((await update(account.id, null)).body.data.adminUpdateAccount.frequencyCap).toBeNull();
    // The tenant sees it on its own account too.
    const a = await seed({ maxCalls: 3, periodSeconds: 86_400 });
    expect((await t.gql('{ me { frequencyCap { maxCalls periodSeconds } } }', {}, a.apiKey)).body.data.me.frequencyCap).toEqual({
      maxCalls: 3,
      periodSeconds: 86_400,
    });
  });

  it('the CLI reads CALLS/PERIOD with units, and off', () => {
    expect(frequencyCap('7/7d', 'frequency-cap')).toEqual({ maxCalls: 7, periodSeconds: 604_800 });
    expect(frequencyCap(' 3 / 12h ', 'frequency-cap')).toEqual({ maxCalls: 3, periodSeconds: 43_200 });
    expect(frequencyCap('1/3600', 'frequency-cap')).toEqual({ maxCalls: 1, periodSeconds: 3_600 });
    expect(frequencyCap('2/1w', 'frequency-cap')).toEqual({ maxCalls: 2, periodSeconds: 604_800 });
    expect(frequencyCap('off', 'frequency-cap')).toBeNull();
    expect(frequencyCap(undefined, 'frequency-cap')).toBeUndefined();
    for (const bad of ['7', '7/', '/7d', '7/7y', 'seven/7d', '7/7d/1', true]) {
      expect(() => frequencyCap(bad, 'frequency-cap'), String(bad)).toThrow('--frequency-cap must be CALLS/PERIOD such as 7/7d');
    }
  });
});

describe('retention', () => {
  it('the worker prunes dials older than the longest period, a chunk at a time', async () => {
    const a = await seed({ maxCalls: 1, periodSeconds: 3_600 });
    const cutoff = new Date(START.getTime() - 30 * DAY);
    await t.deps.db.prisma.numberDial.createMany({
      data: [
        { accountId: a.account.id, phoneNumber: '+14155550001', dialledAt: new Date(cutoff.getTime() - 1), callId: 'call_old' },
        { accountId: a.account.id, phoneNumber: '+14155550001', dialledAt: cutoff, callId: 'call_edge' },
        { accountId: a.account.id, phoneNumber: '+14155550001', dialledAt: new Date(cutoff.getTime() + 1), callId: 'call_kept' },
      ],
    });
    expect(await pruneNumberDials(t.deps, START)).toBe(2);
    expect((await dialsOf(a.account.id)).map((d) => d.callId)).toEqual(['call_kept']);
    expect(await pruneNumberDials(t.deps, START)).toBe(0);
    expect(NUMBER_DIALS_PRUNE_CHUNK).toBeGreaterThan(0);
  });
});
