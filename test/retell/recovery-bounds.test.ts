// Recovery of another worker's lost Retell calls must never cost a worker its own calls: a Retell
// whose get-call / list-calls hang or fail is asked a few calls at a time, within a time budget,
// with backoff per call, while the worker's own leases keep being renewed. A lost call that is
// still talking is never failed (nor left running unobserved) because its batch's settings could
// not be read, and an adopted call keeps its real dial time for the max-duration rule.
import { afterEach, describe, expect, it } from 'vitest';
import type { AppDeps } from '../../src/deps.ts';
import { callEvents, expectConsistentBatch, phoneEndingIn, testWorker } from '../helpers/dispatch.ts';
import { insertBatch } from '../helpers/fixtures.ts';
import type { RetellApp } from './retell-app.ts';
import { batchSettled, expectNoInvalidBodies, retellApp, until } from './retell-app.ts';
import { waitFor } from '../helpers/wait.ts';
import type { TestApp } from '../helpers/app.ts';

let r: RetellApp | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

/** A dialled call of a worker ('ghost') that died: still leased to it, the lease long expired. */
function lostCall(now: Date, o: { phone: string; providerCallId: string | null; expiredAgoMs: number; dialledAgoMs?: number; status?: string }) {
  return {
    status: o.status ?? 'in_progress',
    phoneNumber: o.phone,
    dialedNumber: o.phone,
    attempts: 1,
    leaseOwner: 'ghost#1',
    leaseExpiresAt: new Date(now.getTime() - o.expiredAgoMs),
    timestamp: new Date(now.getTime() - (o.dialledAgoMs ?? o.expiredAgoMs + 10_000)),
    providerCallId: o.providerCallId,
  };
}

/**
 * Makes the given calls' leases lapse now, all in one statement (`expiredAgoMs` per call): calls
 * inserted with live leases are left alone by running workers until the test has set up what
 * Retell answers about them, then become lost at once.
 */
async function expireLeases(t: TestApp, expiredAgoMs: Map<string, number>) {
  const at = t.clock.now().getTime();
  const ids = [...expiredAgoMs.keys()];
  const expiries = ids.map((id) => new Date(at - expiredAgoMs.get(id)!).toISOString());
  await t.deps.db.prisma.$executeRaw`
    UPDATE calls c SET lease_expires_at = x.expires
      FROM unnest(${ids}::text[], ${expiries}::timestamptz[]) AS x(id, expires)
     WHERE c.id = x.id`;
}

/** The same deps, except that reading batches' settings fails while `failing()` holds. */
function withFlakyBatchReads(deps: AppDeps, failing: () => boolean): AppDeps {
  const prisma = new Proxy(deps.db.prisma, {
    get(target, key) {
      const v = Reflect.get(target, key, target);
      if (key === 'batch') {
        return new Proxy(v, {
          get(b, k) {
            const f = Reflect.get(b, k, b);
            if (k === 'findMany' && failing()) return () => Promise.reject(new Error('batch settings unavailable'));
            return typeof f === 'function' ? f.bind(b) : f;
          },
        });
      }
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  return { ...deps, db: { ...deps.db, prisma } };
}

describe('recovery against a Retell that hangs or fails', () => {
  it('a worker recovering lost calls whose get-call / list-calls hang or fail keeps its own live calls, and still settles the lost calls Retell can answer for', async () => {
    // Long enough that a loaded machine's scheduling stalls never lapse a lease that is renewed
    // on time: what must keep it alive is the budgeted recovery, not luck.
    const LEASE_MS = 3000;
    r = await retellApp({ config: { LEASE_MS: String(LEASE_MS) } });
    const { t, fake, a } = r;

    // This worker's own calls: dialled and talking.
    const own = await insertBatch(t.deps, a, {
      contacts: 3,
      batch: { status: 'running' },
      callOverrides: (i) => ({ status: 'queued', phoneNumber: phoneEndingIn(4 + i, i) }),
    });
    const w = testWorker(t.deps);
    const other = testWorker(t.deps);
    w.start();
    try {
      await until(
        async () => (await t.deps.db.prisma.call.count({ where: { batchId: own.batch.id, providerCallId: { not: null } } })) === 3,
        undefined,
        'own dials',
      );
      await fake.startAll();
      await until(
        async () => (await t.deps.db.prisma.call.count({ where: { batchId: own.batch.id, status: 'in_progress' } })) === 3,
        undefined,
        'own calls answered',
      );

      // A dead worker's calls: Retell never answers get-call for half of them; list-calls (their
      // Retell id was never stored) hangs or fails for the others. They are inserted with live
      // leases: `w` is running, and a recovery round before the rule below is set would find
      // Retell knowing nothing of them and rightly fail them as lost.
      const now = t.clock.now();
      const live = { leaseExpiresAt: new Date(now.getTime() + 3_600_000) };
      const ghosts = 24;
      const lost = await insertBatch(t.deps, a, {
        contacts: ghosts + 1,
        batch: { status: 'running' },
        callOverrides: (i) =>
          i < ghosts
            ? {
                ...lostCall(now, { phone: phoneEndingIn(5, 100 + i), providerCallId: i % 2 ? `rc_ghost_${i}` : null, expiredAgoMs: 60_000 }),
                ...live,
              }
            : { ...lostCall(now, { phone: phoneEndingIn(0, 200), providerCallId: null, expiredAgoMs: 30_000 }), ...live },
      });
      const answerable = lost.calls[ghosts];
      const seeded = fake.seedCall({
        from_number: a.did.number,
        to_number: answerable.phoneNumber,
        metadata: { call_id: answerable.id, batch_id: lost.batch.id, account_id: a.account.id, attempt: 1 },
      });
      await fake.finishAll({ only: (c) => c.call_id === seeded.call_id });
      const ghostIds = new Set(lost.calls.slice(0, ghosts).map((c) => c.id));
      let n = 0;
      let hangs = 0;
      const hang = () => (hangs++, 'hang' as const);
      fake.lookupRule((q) => {
        if (q.kind === 'get') return q.retellCallId?.startsWith('rc_ghost_') ? hang() : null;
        if (!q.callId || !ghostIds.has(q.callId)) return null;
        return n++ % 2 ? hang() : { status: 503 };
      });
      // Now they are lost. The answerable one expired last, so it sorts behind every hanging one:
      // Retell can tell how it went.
      await expireLeases(t, new Map(lost.calls.map((c, i) => [c.id, i < ghosts ? 60_000 : 30_000])));
      // A second worker recovers too: it would adopt any call of ours whose lease lapsed.
      other.start();

      // Watched until every lease of ours was renewed four lease lengths on (renewals went on
      // through them) and recovery has met hanging lookups: at every look, each lease still live.
      const renewedPast = t.clock.now().getTime() + 5 * LEASE_MS;
      await waitFor(
        async () => {
          // The instant is taken before the read: a lease renewed while the read waited is not
          // mistaken for one that lapsed.
          const at = t.clock.now().getTime();
          const rows = await t.deps.db.prisma.call.findMany({ where: { batchId: own.batch.id } });
          for (const c of rows) {
            expect({ owner: c.leaseOwner, status: c.status, leaseLeft: c.leaseExpiresAt!.getTime() > at }).toEqual({
              owner: w.id,
              status: 'in_progress',
              leaseLeft: true,
            });
          }
          return hangs > 0 && rows.every((c) => c.leaseExpiresAt!.getTime() >= renewedPast);
        },
        { intervalMs: 100, timeoutMs: 20 * LEASE_MS, what: 'our leases renewed through four lease lengths while recovery met hanging lookups' },
      );
      expect(w.stats().inFlight).toBe(3);
      // Nobody hung up on our calls or took them over.
      expect(fake.stops).toEqual([]);
      expect((await callEvents(t.deps, own.batch.id)).filter((e) => e.detail?.event === 'adopted')).toEqual([]);
      // The lost call Retell could answer for was not starved by the hanging ones...
      await until(
        async () => (await t.deps.db.prisma.call.findUniqueOrThrow({ where: { id: answerable.id } })).status === 'no_answer',
        undefined,
        'answerable lost call settled',
      );
      // ...and the ones Retell cannot tell about are asked again later, not failed as lost.
      const ghostRows = await t.deps.db.prisma.call.findMany({ where: { id: { in: [...ghostIds] } } });
      expect(new Set(ghostRows.map((c) => `${c.status}/${c.leaseOwner}`))).toEqual(new Set(['in_progress/ghost#1']));

      fake.lookupRule(null);
      await fake.finishAll({ only: (c) => c.metadata.batch_id === own.batch.id, analyzeNow: () => true });
      await until(() => batchSettled(t, own.batch.id), undefined, 'own batch');
      await expectConsistentBatch(t.deps, own.batch.id);
    } finally {
      fake.lookupRule(null);
      await Promise.all([w.stop({ graceMs: 0 }), other.stop({ graceMs: 0 })]);
    }
    expectNoInvalidBodies(fake);
  }, 120_000);
});

describe('adopting a lost call that is still talking', () => {
  it('is retried, not failed as lost, when its batch settings cannot be read; adopted once they can', async () => {
    r = await retellApp();
    const { t, fake, a } = r;
    const now = t.clock.now();
    const { batch, calls } = await insertBatch(t.deps, a, {
      contacts: 1,
      batch: { status: 'running' },
      callOverrides: () => lostCall(now, { phone: phoneEndingIn(5), providerCallId: null, expiredAgoMs: 1_000 }),
    });
    const seeded = fake.seedCall({
      from_number: a.did.number,
      to_number: calls[0].phoneNumber,
      metadata: { call_id: calls[0].id, batch_id: batch.id, account_id: a.account.id, attempt: 1 },
    });
    await t.deps.db.prisma.call.update({ where: { id: calls[0].id }, data: { providerCallId: seeded.call_id } });
    await fake.startAll();
    let failing = true;
    const w = testWorker(withFlakyBatchReads(t.deps, () => failing));
    try {
      await w.runOnce();
      await w.settle();
      const row = await t.deps.db.prisma.call.findUniqueOrThrow({ where: { id: calls[0].id } });
      expect([row.status, row.leaseOwner, row.disconnectReason]).toEqual(['in_progress', 'ghost#1', null]);
      expect(fake.stops).toEqual([]);

      failing = false;
      // Past the retry delay of the failed attempt.
      t.clock.advance(10_000);
      await w.runOnce();
      const adopted = (await callEvents(t.deps, batch.id)).filter((e) => e.detail?.event === 'adopted');
      expect(adopted).toHaveLength(1);
      expect((await t.deps.db.prisma.call.findUniqueOrThrow({ where: { id: calls[0].id } })).leaseOwner).toBe(w.id);

      await fake.finishAll({ analyzeNow: () => true });
      await until(() => batchSettled(t, batch.id), undefined, 'batch');
      await w.drain();
    } finally {
      await w.stop({ graceMs: 0 });
    }
    const { calls: done } = await expectConsistentBatch(t.deps, batch.id);
    expect([done[0].status, done[0].disconnectReason]).toEqual(['completed', 'agent_hangup']);
  }, 90_000);

  it("keeps the call's real dial time: an adopted call already past its max duration is hung up at once", async () => {
    r = await retellApp();
    const { t, fake, a } = r;
    const now = t.clock.now();
    // Dialled 60 s ago with a 30 s limit; Retell says it was answered ~25 s ago.
    const { batch, calls } = await insertBatch(t.deps, a, {
      contacts: 1,
      batch: { status: 'running', maxDurationSeconds: 30 },
      callOverrides: () => lostCall(now, { phone: phoneEndingIn(5), providerCallId: null, expiredAgoMs: 1_000, dialledAgoMs: 60_000 }),
    });
    const seeded = fake.seedCall({
      from_number: a.did.number,
      to_number: calls[0].phoneNumber,
      metadata: { call_id: calls[0].id, batch_id: batch.id, account_id: a.account.id, attempt: 1 },
    });
    await t.deps.db.prisma.call.update({ where: { id: calls[0].id }, data: { providerCallId: seeded.call_id } });
    await fake.startAll();
    const w = testWorker(t.deps);
    try {
      expect((await w.runOnce()).settled).toBe(1);
      await until(() => fake.stops.includes(seeded.call_id), undefined, 'max-duration hangup');
    } finally {
      await w.stop({ graceMs: 0 });
    }
  }, 90_000);
});
