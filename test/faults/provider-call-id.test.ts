// Found by the fault campaign (bench/faults, round 15 of seed 11): a worker dialled a call's primary
// number (Retell call 1, failed), then its alternate (Retell call 2, answered), and was cut off from
// the database before the alternate's provider call id was written. The call's row still named
// Retell call 1, so the worker that recovered the call looked that one up and settled the call
// `failed` with the primary's result: the answered conversation's transcript and result were lost.
// `provider_call_id` names the current dial's provider call: a write that records a new dial (the
// alternate's, the claim of a retry) clears the previous dial's, so recovery finds the current dial
// by its attempt (findCall) instead. Any database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyCallWrites } from '../../src/services/calls/call-transitions.ts';
import { alternateDialWrite } from '../../src/dispatch/store/call-writes.ts';
import { claimCalls } from '../../src/dispatch/store/claim-calls.ts';
import { mergeWrites } from '../../src/dispatch/store/write-queue.ts';
import type { CallEndResult } from '../../src/dispatch/voice/provider.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { insertBatch } from '../helpers/fixtures.ts';

// One app for the file: a PGlite app takes seconds to open on a loaded machine.
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

const failedPrimary = (at: Date): CallEndResult => ({
  status: 'failed',
  hangupBy: 'system',
  disconnectReason: 'dial_failed',
  startedAt: at,
  answeredAt: null,
  endedAt: at,
  transcript: null,
  recording: null,
});

describe("a new dial clears the previous dial's provider call id", () => {
  it("the alternate number's dial write: the row names no provider call until the alternate's id is written", async () => {
    const a = await t.seedAccount();
    const {
      batch,
      calls: [c],
    } = await insertBatch(t.deps, a, {
      contacts: 1,
      batch: { useAlternateNumber: true },
      callOverrides: () => ({
        status: 'ringing',
        attempts: 1,
        leaseOwner: 'A',
        leaseExpiresAt: new Date(t.clock.now().getTime() + 60_000),
        providerCallId: 'rc_primary',
        alternatePhone: '+14155550177',
      }),
    });
    const ref = { callId: c!.id, batchId: batch.id, accountId: a.account.id };
    const dial = alternateDialWrite(ref, 'A', 'ringing', { number: c!.phoneNumber, result: failedPrimary(t.clock.now()) }, '+14155550177', 2);
    expect((await applyCallWrites(t.deps, [dial], t.clock.now())).applied.has(c!.id)).toBe(true);
    const row = await t.deps.db.prisma.call.findUniqueOrThrow({ where: { id: c!.id } });
    expect({ attempts: row.attempts, dialedNumber: row.dialedNumber, providerCallId: row.providerCallId }).toEqual({
      attempts: 2,
      dialedNumber: '+14155550177',
      providerCallId: null,
    });

    // Its own id, written later, is kept.
    const id = { ...ref, owner: 'A', from: 'ringing' as const, to: 'ringing' as const, events: [], set: { providerCallId: 'rc_alternate' } };
    await applyCallWrites(t.deps, [id], t.clock.now());
    expect((await t.deps.db.prisma.call.findUniqueOrThrow({ where: { id: c!.id } })).providerCallId).toBe('rc_alternate');
  });

  it("merged in the write queue, the primary's id write does not ride along with the alternate's dial", () => {
    const ref = { callId: 'call_1', batchId: 'b', accountId: 'a' };
    const id = { ...ref, owner: 'A', from: 'ringing' as const, to: 'ringing' as const, events: [], set: { providerCallId: 'rc_primary' } };
    const dial = alternateDialWrite(ref, 'A', 'ringing', { number: '+14155550100', result: failedPrimary(new Date()) }, '+14155550177', 2);
    const merged = mergeWrites(id, dial);
    expect(merged.set.providerCallId).toBeUndefined();
    expect(merged.set.attemptsIncrement).toBe(1);
    // The other way round (the alternate's id after its dial), the id is the alternate's.
    const alternateId = { ...id, set: { providerCallId: 'rc_alternate' } };
    expect(mergeWrites(dial, alternateId).set.providerCallId).toBe('rc_alternate');
  });

  it("a retry's claim: the row names no provider call until the new dial's id is written", async () => {
    const a = await t.seedAccount({ limits: { maxConcurrentCalls: 10 } });
    const past = new Date(t.clock.now().getTime() - 1_000);
    const {
      calls: [c],
    } = await insertBatch(t.deps, a, {
      contacts: 1,
      callOverrides: () => ({ status: 'queued', attempts: 1, providerCallId: 'rc_first_attempt', nextAttemptAt: past }),
    });
    const r = await claimCalls(t.deps, { accountId: a.account.id, workerId: 'B', clock: () => t.clock.now(), leaseMs: 30_000, budget: 10 });
    expect(r.claimed.map((x) => x.id)).toEqual([c!.id]);
    const row = await t.deps.db.prisma.call.findUniqueOrThrow({ where: { id: c!.id } });
    expect({ status: row.status, attempts: row.attempts, providerCallId: row.providerCallId }).toEqual({
      status: 'ringing',
      attempts: 2,
      providerCallId: null,
    });
  });
});
