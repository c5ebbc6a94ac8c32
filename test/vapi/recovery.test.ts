// Calls a dead worker placed through Vapi: whatever state the crash left them in, a surviving worker
// settles each with Vapi's real outcome - adopting those still going, finding by our ids in the
// assistant metadata those whose Vapi id was never stored - and never dials any of them again.
import { afterEach, describe, expect, it } from 'vitest';
import { callEvents, expectConsistentBatch, phoneEndingIn, testWorker } from '../helpers/dispatch.ts';
import { insertBatch } from '../helpers/fixtures.ts';
import {
  batchSettled,
  expectedRecord,
  expectNoInvalidBodies,
  pickRecord,
  until,
  VAPI_ASSISTANT,
  VAPI_NUMBER_ID,
  vapiApp,
  type VapiApp,
} from './vapi-app.ts';

let r: VapiApp | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

describe('recovery of a dead worker’s Vapi calls', () => {
  it('adopts the calls still going (stored id or found by metadata), settles the one that ended unobserved, fails only the one Vapi never had', async () => {
    r = await vapiApp({ config: { LEASE_MS: '2000' } });
    const { t, fake, a } = r;
    const now = t.clock.now();
    // 0: id stored, talking; 1: id never stored, talking; 2: id stored, ended while nobody listened;
    // 3: id never stored and no Vapi call (died before the create left).
    const phones = [phoneEndingIn(4, 0), phoneEndingIn(5, 1), phoneEndingIn(3, 2), phoneEndingIn(6, 3)];
    const { batch, calls } = await insertBatch(t.deps, a, {
      contacts: 4,
      batch: { status: 'running' },
      callOverrides: (i) => ({
        status: i < 2 ? 'in_progress' : 'ringing',
        phoneNumber: phones[i],
        dialedNumber: phones[i],
        attempts: 1,
        leaseOwner: 'ghost#1',
        // The never-created one's lease lapsed longer ago than a create may take (requestTimeoutMs):
        // no create of it can still be on its way.
        leaseExpiresAt: new Date(now.getTime() - (i === 3 ? 20_000 : 5_000)),
        timestamp: new Date(now.getTime() - (i === 3 ? 30_000 : 15_000)),
        providerCallId: null,
      }),
    });
    const seeded = calls.slice(0, 3).map((c) =>
      fake.seedCall({
        assistantId: VAPI_ASSISTANT,
        phoneNumberId: VAPI_NUMBER_ID,
        customer: { number: c.phoneNumber },
        assistantOverrides: { metadata: { call_id: c.id, batch_id: batch.id, account_id: a.account.id, attempt: 1 }, maxDurationSeconds: 30 },
      }),
    );
    for (const i of [0, 2]) await t.deps.db.prisma.call.update({ where: { id: calls[i].id }, data: { providerCallId: seeded[i].id } });
    await fake.startAll((c) => c.id !== seeded[2].id);
    await fake.finishAll({ only: (c) => c.id === seeded[2].id, dropAll: () => true });

    const w = testWorker(t.deps);
    w.start();
    try {
      const adopted = async () => (await callEvents(t.deps, batch.id)).filter((e) => e.detail?.event === 'adopted').map((e) => e.call_id);
      await until(async () => (await adopted()).length === 2, undefined, 'adoptions');
      expect((await adopted()).sort()).toEqual([calls[0].id, calls[1].id].sort());
      // Found through GET /call by our metadata: its id is stored now.
      expect((await t.deps.db.prisma.call.findUniqueOrThrow({ where: { id: calls[1].id } })).providerCallId).toBe(seeded[1].id);
      await until(
        async () => {
          if (await batchSettled(t, batch.id)) return true;
          await fake.finishAll();
          return false;
        },
        undefined,
        'batch settled',
      );
      await w.settle();
    } finally {
      await w.stop({ graceMs: 0 });
    }
    const { events } = await expectConsistentBatch(t.deps, batch.id);
    const rows = await t.deps.db.prisma.call.findMany({ where: { batchId: batch.id } });
    const byId = new Map(rows.map((c) => [c.id, c]));
    for (const i of [0, 1, 2]) expect(pickRecord(byId.get(calls[i].id)!)).toEqual(expectedRecord(phones[i], { analysed: true }));
    expect(byId.get(calls[3].id)).toMatchObject({ status: 'failed', disconnectReason: 'dispatcher_lost' });
    const settled = events.find((e) => e.call_id === calls[2].id && e.detail?.event === 'ended')!;
    expect(settled.detail).toMatchObject({ recovered: true, disconnect_reason: 'customer-ended-call' });
    // Recovery never dials.
    expect(fake.creates).toEqual([]);
    expectNoInvalidBodies(fake);
  }, 60_000);
});
