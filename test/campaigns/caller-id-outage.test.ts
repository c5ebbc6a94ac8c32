// Caller-ID daily caps and dials that are not placed (docs/campaigns.md "Caller-ID pools and local
// presence"): a number's dial is counted when the claim chooses it, and given back when no
// provider took the dial, so an outage does not use up the day's caps; a worker that lost a call's
// lease counts nothing for it.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { insertBatch } from '../helpers/fixtures.ts';
import { manualTimers, phoneEndingIn, testWorker } from '../helpers/dispatch.ts';
import { routedFake, type CreateFault } from '../helpers/routed-providers.ts';
import { createProviderRegistry } from '../../src/dispatch/voice/registry.ts';
import { setAccountRoute } from '../../src/services/accounts/account-route.ts';
import { chooseCallerIdsFor } from '../../src/dispatch/store/caller-id-choice.ts';
import { capDay } from '../../src/domain/caller-id.ts';

const START = new Date('2026-03-02T15:00:00.000Z');
const CAP = 3;
const TERMINAL = ['completed', 'failed', 'no_answer', 'busy', 'cancelled'];

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ config: { PROVIDER_BREAKER_FAILURES: '2', PROVIDER_BREAKER_COOLDOWN_MS: '10000' } });
});
afterAll(() => t.close());
beforeEach(() => t.clock.set(START));

/** The account's one number, capped at CAP dials a day, and a batch of CAP calls queued on it. */
async function cappedBatch(account: SeededAccount) {
  await t.deps.db.prisma.didNumber.update({ where: { id: account.did.id }, data: { dailyCap: CAP } });
  return insertBatch(t.deps, account, {
    contacts: CAP,
    batch: { concurrency: CAP },
    callOverrides: (i) => ({ status: 'queued', phoneNumber: phoneEndingIn(4, i) }),
  });
}

async function dialsToday(didId: string): Promise<number> {
  const row = await t.deps.db.prisma.didDailyDial.findFirst({ where: { didId, day: new Date(`${capDay(t.clock.now())}T00:00:00Z`) } });
  return row?.dials ?? 0;
}

describe('caller-ID caps and dials not placed', () => {
  it('an outage of every provider does not use up the caps: once it ends, the calls dial the same day', async () => {
    const account = await t.seedAccount({ limits: { maxConcurrentCalls: 100 } });
    await setAccountRoute(t.deps, account.account.id, [
      { provider: 'simA', weight: 1, config: null },
      { provider: 'simB', weight: 1, config: null },
    ]);
    const timers = manualTimers(t.clock);
    const down = (): CreateFault => 'no';
    const simA = routedFake('simA', timers, { fault: down });
    const simB = routedFake('simB', timers, { fault: down });
    const worker = testWorker(t.deps, { providers: createProviderRegistry({ simA: () => simA.provider, simB: () => simB.provider }) });
    const { batch } = await cappedBatch(account);
    // Many claim rounds while every provider refuses (and while their breakers are open): far more
    // choices than the cap, none of them placed.
    for (let round = 0; round < 12; round++) {
      await worker.runOnce();
      await worker.settle();
      timers.advance(6_000);
    }
    expect(simA.state.tries + simB.state.tries).toBeGreaterThan(CAP);
    expect(simA.creates.size + simB.creates.size).toBe(0);
    expect(await dialsToday(account.did.id)).toBe(0);
    const waiting = await t.deps.db.prisma.call.findMany({ where: { batchId: batch.id } });
    expect(waiting.map((c) => c.waitReason)).not.toContain('caller_id_cap');

    // The outage ends: every call is placed today, each dial counted once.
    simA.state.fault = () => 'ok';
    simB.state.fault = () => 'ok';
    for (let round = 0; round < 40; round++) {
      await worker.runOnce();
      await worker.settle();
      const left = await t.deps.db.prisma.call.count({ where: { batchId: batch.id, status: { notIn: TERMINAL } } });
      if (left === 0) break;
      timers.advance(6_000);
    }
    await worker.drain();
    const rows = await t.deps.db.prisma.call.findMany({ where: { batchId: batch.id } });
    expect(rows.map((c) => c.status)).toEqual(rows.map(() => 'completed'));
    expect(capDay(t.clock.now())).toBe(capDay(START));
    expect(await dialsToday(account.did.id)).toBe(CAP);
  });

  it('a worker that no longer holds a call lease counts no dial for it, and gets no number for it', async () => {
    const account = await t.seedAccount({ limits: { maxConcurrentCalls: 100 } });
    const { batch } = await cappedBatch(account);
    const [mine, lost] = await t.deps.db.prisma.call.findMany({ where: { batchId: batch.id }, orderBy: { seq: 'asc' } });
    const until = new Date(START.getTime() + 60_000);
    await t.deps.db.prisma.call.update({ where: { id: mine.id }, data: { leaseOwner: 'w-me', leaseExpiresAt: until } });
    await t.deps.db.prisma.call.update({ where: { id: lost.id }, data: { leaseOwner: 'w-other', leaseExpiresAt: until } });
    const request = (callId: string) => ({ callId, to: '+14155552000', fixedDidId: null });
    const round = await chooseCallerIdsFor(t.deps, {
      accountId: account.account.id,
      workerId: 'w-me',
      now: START,
      calls: [request(mine.id), request(lost.id)],
    });
    expect(round.choices[0]?.number.id).toBe(account.did.id);
    expect(round.choices[1]).toBeNull();
    expect(round.lapsed).toEqual(new Set([lost.id]));
    expect(await dialsToday(account.did.id)).toBe(1);
    // Its own lease, expired by the worker's clock: not counted either.
    const late = new Date(until.getTime() + 1);
    const after = await chooseCallerIdsFor(t.deps, { accountId: account.account.id, workerId: 'w-me', now: late, calls: [request(mine.id)] });
    expect(after.choices[0]).toBeNull();
    // Not capped (the number is free): lapsed, so the worker retries it rather than waiting for tomorrow.
    expect(after.lapsed).toEqual(new Set([mine.id]));
    expect(await dialsToday(account.did.id)).toBe(1);
  });

  it('a failed choice (the database) is no cap: the calls wait a minute as a retry, then dial', async () => {
    const account = await t.seedAccount({ limits: { maxConcurrentCalls: 100 } });
    const { batch } = await cappedBatch(account);
    const db = t.deps.db.prisma;
    // Every count of this account's number fails, as a database error would.
    await db.$executeRawUnsafe(`CREATE FUNCTION fail_count() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'count failed'; END $$`);
    await db.$executeRawUnsafe(
      `CREATE TRIGGER fail_count BEFORE INSERT ON did_daily_dials FOR EACH ROW WHEN (NEW.did_id = '${account.did.id}') EXECUTE FUNCTION fail_count()`,
    );
    const worker = testWorker(t.deps);
    try {
      await worker.runOnce();
      await worker.settle();
      const waiting = await db.call.findMany({ where: { batchId: batch.id } });
      expect(waiting.map((c) => [c.status, c.waitReason])).toEqual(waiting.map(() => ['queued', 'retry']));
      expect(waiting.map((c) => c.nextAttemptAt?.getTime())).toEqual(waiting.map(() => START.getTime() + 60_000));
      const events = await db.callEvent.findMany({ where: { callId: { in: waiting.map((c) => c.id) } } });
      const withheld = events.map((e) => e.detail as Record<string, unknown> | null).filter((d) => d?.event === 'dial_withheld');
      expect(withheld.map((d) => d!.reason)).toEqual(waiting.map(() => 'caller_id_check_failed'));
    } finally {
      await db.$executeRawUnsafe('DROP TRIGGER fail_count ON did_daily_dials');
      await db.$executeRawUnsafe('DROP FUNCTION fail_count()');
    }
    t.clock.set(new Date(START.getTime() + 61_000));
    await worker.runOnce();
    await worker.settle();
    const dialled = await db.call.findMany({ where: { batchId: batch.id } });
    expect(dialled.map((c) => c.fromNumber)).toEqual(dialled.map(() => account.did.number));
    await worker.drain();
  });
});
