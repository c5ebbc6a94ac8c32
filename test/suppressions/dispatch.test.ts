// A number put on the do-not-call list after its batch was created is never dialled: the claim
// cancels the call (disconnect_reason `suppressed`) and the counters' sum rule holds.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { insertBatch } from '../helpers/fixtures.ts';
import { callEvents, expectConsistentBatch, manualSimulator, phoneEndingIn, testWorker } from '../helpers/dispatch.ts';

let t: TestApp;
let a: SeededAccount;
let other: SeededAccount;

beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount({ limits: { maxConcurrentCalls: 50 } });
  other = await t.seedAccount({ limits: { maxConcurrentCalls: 50 } });
});
afterAll(() => t.close());
beforeEach(() => t.clock.set(new Date('2025-05-05T10:00:00.000Z')));

const suppress = (numbers: string[], key = a.apiKey) => t.request('POST', '/api/v1/public/suppressions', { key, body: { phone_numbers: numbers } });
const calls = (id: string) => t.deps.db.prisma.call.findMany({ where: { batchId: id }, orderBy: { seq: 'asc' } });

describe('dial time', () => {
  it('cancels a call whose number was listed after the create, dials the others', async () => {
    const sim = manualSimulator(t.clock, { callMs: 1_000 });
    const worker = testWorker(t.deps, { providers: sim.registry });
    const { batch } = await insertBatch(t.deps, a, { contacts: 4, callOverrides: (i) => ({ status: 'queued', phoneNumber: phoneEndingIn(4, i) }) });
    expect((await suppress([phoneEndingIn(4, 1), phoneEndingIn(4, 3)])).body.data.added).toBe(2);
    // Another account's list does not touch this account's calls.
    const { batch: foreign } = await insertBatch(t.deps, other, {
      contacts: 1,
      callOverrides: () => ({ status: 'queued', phoneNumber: phoneEndingIn(4, 0) }),
    });

    await worker.runOnce();
    await worker.settle();
    sim.timers.advance(1_000);
    await worker.settle();
    await worker.runOnce();
    await worker.settle();

    const after = await calls(batch.id);
    expect(after.map((c) => [c.status, c.disconnectReason, c.attempts])).toEqual([
      ['completed', expect.any(String), 1],
      ['cancelled', 'suppressed', 0],
      ['completed', expect.any(String), 1],
      ['cancelled', 'suppressed', 0],
    ]);
    expect(after[1].dialedNumber).toBeNull();
    const { batch: b } = await expectConsistentBatch(t.deps, batch.id);
    expect(b).toMatchObject({ status: 'completed', completed: 2, cancelled: 2, queued: 0, inProgress: 0 });
    const events = (await callEvents(t.deps, batch.id)).filter((e) => e.call_id === after[1].id);
    expect(events.map((e) => [e.from_status, e.to_status])).toEqual([['queued', 'cancelled']]);

    const rest = await t.request('GET', `/api/v1/public/call-batches/${batch.id}/calls`, { key: a.apiKey });
    expect(rest.body.data.items[1]).toMatchObject({ status: 'cancelled', disconnect_reason: 'suppressed' });
    await worker.drain();
    expect((await calls(foreign.id))[0].status).toBe('completed');
  });

  it('closes a batch whose every waiting call is listed, without dialling', async () => {
    const sim = manualSimulator(t.clock, { callMs: 1_000 });
    const worker = testWorker(t.deps, { providers: sim.registry });
    const { batch } = await insertBatch(t.deps, a, { contacts: 2, callOverrides: (i) => ({ phoneNumber: phoneEndingIn(7, i) }) });
    await suppress([phoneEndingIn(7, 0), phoneEndingIn(7, 1)]);
    await worker.runOnce();
    await worker.settle();
    const { batch: b } = await expectConsistentBatch(t.deps, batch.id);
    expect(b).toMatchObject({ status: 'completed', cancelled: 2, queued: 0, startedAt: null });
    expect(b.completedAt).not.toBeNull();
    expect((await calls(batch.id)).every((c) => c.status === 'cancelled' && c.attempts === 0)).toBe(true);
  });
});

describe('alternate number', () => {
  it('is not dialled when listed after the create: the call ends with the primary attempt', async () => {
    const sim = manualSimulator(t.clock, { callMs: 1_000 });
    const to: string[] = [];
    const place = sim.provider.placeCall.bind(sim.provider);
    sim.provider.placeCall = (req) => {
      to.push(req.to);
      return place(req);
    };
    const worker = testWorker(t.deps, { providers: sim.registry });
    // Primaries end no_answer (last digit 0); the alternates would be answered (last digit 4).
    const primary = (i: number) => phoneEndingIn(0, 80 + i);
    const alternate = (i: number) => phoneEndingIn(4, 80 + i);
    const { batch } = await insertBatch(t.deps, a, {
      contacts: 2,
      batch: { useAlternateNumber: true, concurrency: 5 },
      callOverrides: (i) => ({ status: 'queued', phoneNumber: primary(i), alternatePhone: alternate(i) }),
    });
    expect((await suppress([alternate(0)])).body.data.added).toBe(1);

    await worker.runOnce();
    await worker.settle();
    expect(to.sort()).toEqual([primary(0), primary(1)].sort());
    sim.timers.advance(1_000);
    await worker.settle();
    sim.timers.advance(1_000);
    await worker.settle();
    await worker.drain();

    expect(to).not.toContain(alternate(0));
    expect(to).toContain(alternate(1));
    const rows = await calls(batch.id);
    expect(rows.map((r) => [r.status, r.disconnectReason, r.dialedNumber, r.usedAlternate, r.attempts])).toEqual([
      ['no_answer', 'no_answer', primary(0), false, 1],
      ['completed', expect.any(String), alternate(1), true, 2],
    ]);
    const { batch: b } = await expectConsistentBatch(t.deps, batch.id);
    expect(b).toMatchObject({ status: 'completed', completed: 1, failed: 1, queued: 0, inProgress: 0 });
    const events = (await callEvents(t.deps, batch.id)).filter((e) => e.call_id === rows[0].id);
    expect(events.map((e) => [e.from_status, e.to_status])).toEqual([
      ['queued', 'ringing'],
      ['ringing', 'no_answer'],
    ]);
    expect(events[1].detail).toMatchObject({
      event: 'ended',
      number: primary(0),
      disconnect_reason: 'no_answer',
      alternate_not_dialled: 'suppressed',
    });
  });
});
