// A Retell worker stopped gracefully hands its work over at once: calls still talking and analyses
// Retell has not delivered yet are not waited for, and their leases are expired on the way out, so
// the next worker takes them over at its next recovery instead of a lease length later.
import { afterEach, describe, expect, it } from 'vitest';
import { callEvents, expectConsistentBatch, phoneEndingIn, testWorker } from '../helpers/dispatch.ts';
import { insertBatch } from '../helpers/fixtures.ts';
import { batchSettled, expectedRecord, expectNoInvalidBodies, pickRecord, retellApp, until, type RetellApp } from './retell-app.ts';

let r: RetellApp | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

// Leases far longer than the test: only an expiry at shutdown lets the next worker in.
const LEASE_MS = '600000';

describe('a Retell worker stopped gracefully', () => {
  it('does not wait out its grace period for Retell analyses; the next worker takes them over at once', async () => {
    r = await retellApp({ config: { LEASE_MS, RETELL_ANALYSIS_GRACE_MS: '600000' } });
    const { t, fake, a } = r;
    const { batch, calls } = await insertBatch(t.deps, a, {
      contacts: 1,
      batch: { status: 'running' },
      callOverrides: () => ({ status: 'queued', phoneNumber: phoneEndingIn(4) }),
    });
    const w = testWorker(t.deps);
    w.start();
    await until(() => fake.calls.size === 1, undefined, 'dial');
    await fake.finishAll();
    const row = () => t.deps.db.prisma.call.findUniqueOrThrow({ where: { id: calls[0].id } });
    await until(async () => (await row()).transcriptStatus === 'processing', undefined, 'call ended, analysis awaited');

    // A grace period of an hour: a stop that waited it out (for an analysis that is not coming
    // within it) would outlast the test's deadline, however fast or slow the machine.
    const GRACE_MS = 3_600_000;
    let stopped = false;
    const stopping = w.stop({ graceMs: GRACE_MS }).then(() => (stopped = true));
    // Nothing was left to finish but Retell's analysis, which was handed over rather than awaited.
    await until(() => stopped, undefined, 'the stop, without waiting out its grace period');
    await stopping;
    expect((await row()).leaseExpiresAt!.getTime()).toBeLessThan(t.clock.now().getTime());

    const next = testWorker(t.deps);
    try {
      expect((await next.runOnce()).analysisRecovered).toBe(1);
      await fake.analyzeAll();
      await until(() => batchSettled(t, batch.id), undefined, 'analysis');
    } finally {
      await next.stop({ graceMs: 0 });
    }
    const { calls: done } = await expectConsistentBatch(t.deps, batch.id);
    expect(pickRecord(done[0])).toEqual(expectedRecord(done[0].phoneNumber, { analysed: true }));
  }, 120_000);

  it('expires the leases of the calls it leaves talking: the next worker adopts them without waiting a lease length', async () => {
    r = await retellApp({ config: { LEASE_MS } });
    const { t, fake, a } = r;
    const { batch } = await insertBatch(t.deps, a, {
      contacts: 3,
      batch: { status: 'running' },
      callOverrides: (i) => ({ status: 'queued', phoneNumber: phoneEndingIn(5 + i, i) }),
    });
    const w = testWorker(t.deps);
    w.start();
    await until(
      async () => (await t.deps.db.prisma.call.count({ where: { batchId: batch.id, providerCallId: { not: null } } })) === 3,
      undefined,
      'dials',
    );
    await fake.startAll();
    await until(
      async () => (await t.deps.db.prisma.call.count({ where: { batchId: batch.id, status: 'in_progress' } })) === 3,
      undefined,
      'answered',
    );
    await w.stop({ graceMs: 0 });
    expect(fake.stops).toEqual([]);
    const rows = await t.deps.db.prisma.call.findMany({ where: { batchId: batch.id } });
    for (const c of rows)
      expect([c.status, c.leaseOwner, c.leaseExpiresAt!.getTime() < t.clock.now().getTime()]).toEqual(['in_progress', w.id, true]);

    // Same clock: no lease had to run out.
    const next = testWorker(t.deps);
    try {
      expect((await next.runOnce()).settled).toBe(3);
      expect((await callEvents(t.deps, batch.id)).filter((e) => e.detail?.event === 'adopted')).toHaveLength(3);
      await fake.finishAll({ analyzeNow: () => true });
      await until(() => batchSettled(t, batch.id), undefined, 'batch');
    } finally {
      await next.stop({ graceMs: 0 });
    }
    const { calls } = await expectConsistentBatch(t.deps, batch.id);
    for (const c of calls) expect(pickRecord(c)).toEqual(expectedRecord(c.phoneNumber, { analysed: true }));
    expect(fake.creates).toHaveLength(3);
    expectNoInvalidBodies(fake);
  }, 90_000);
});
