// use_alternate_number (one call record, at most one dial per number) and max_duration_seconds_per_call
// (the system hangs up on the test clock).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { insertBatch } from '../helpers/fixtures.ts';
import { batchBody, CALL_BATCHES, validPhone } from '../helpers/batch-requests.ts';
import { attemptOutcome } from '../../src/domain/attempt-outcome.ts';
import { callEvents, expectConsistentBatch, manualSimulator, phoneEndingIn, registryOf, testWorker } from '../helpers/dispatch.ts';

let t: TestApp;
let a: SeededAccount;

beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount({ limits: { maxConcurrentCalls: 100 } });
});
afterAll(() => t.close());
beforeEach(() => t.clock.set(new Date('2025-07-01T09:00:00.000Z')));

const calls = (batchId: string) => t.deps.db.prisma.call.findMany({ where: { batchId }, orderBy: { seq: 'asc' } });

describe('use_alternate_number', () => {
  it('dials the alternate once when the primary ends no_answer, busy or failed; the call stays one record', async () => {
    const cases = [
      { primary: phoneEndingIn(0, 1), alternate: phoneEndingIn(4, 1) }, // no answer -> answered
      { primary: phoneEndingIn(1, 2), alternate: phoneEndingIn(2, 2) }, // busy -> dial fails
      { primary: phoneEndingIn(2, 3), alternate: phoneEndingIn(3, 3) }, // dial fails -> user hangs up
      { primary: phoneEndingIn(5, 4), alternate: phoneEndingIn(6, 4) }, // answered: alternate unused
      { primary: phoneEndingIn(0, 5), alternate: null }, // nothing to fall back to
    ];
    const { batch } = await insertBatch(t.deps, a, {
      contacts: cases.length,
      batch: { useAlternateNumber: true, concurrency: 5 },
      callOverrides: (i) => ({ status: 'queued', phoneNumber: cases[i].primary, alternatePhone: cases[i].alternate }),
    });
    await testWorker(t.deps).drain();
    const { events } = await expectConsistentBatch(t.deps, batch.id);
    const rows = await calls(batch.id);
    expect(rows.map((r) => [r.status, r.dialedNumber, r.usedAlternate, r.attempts])).toEqual([
      ['completed', cases[0].alternate, true, 2],
      ['failed', cases[1].alternate, true, 2],
      ['completed', cases[2].alternate, true, 2],
      ['completed', cases[3].primary, false, 1],
      ['no_answer', cases[4].primary, false, 1],
    ]);
    expect(rows[1].disconnectReason).toBe('dial_failed');
    expect(rows[2].hangupBy).toBe('user');

    const first = events.filter((e) => e.call_id === rows[0].id);
    expect(first.map((e) => `${e.from_status}->${e.to_status}`)).toEqual([
      'queued->ringing',
      'ringing->ringing',
      'ringing->answered',
      'answered->in_progress',
      'in_progress->completed',
    ]);
    expect(first[1].detail).toMatchObject({
      event: 'dial',
      number: cases[0].alternate,
      attempt: 2,
      alternate: true,
      previous: { number: cases[0].primary, status: 'no_answer' },
    });

    // GraphQL reports the number actually dialled.
    const res = await t.gql(
      `query($id: ID!) { batch(id: $id) { callsConnection(first: 5) { edges { node { phoneNumber status history { toStatus detail } } } } } }`,
      { id: batch.id },
      a.apiKey,
    );
    const nodes = res.body.data.batch.callsConnection.edges.map((e: any) => e.node);
    expect(nodes[0].phoneNumber).toBe(cases[0].alternate);
    expect(nodes[0].history.map((h: any) => h.toStatus)).toEqual(['ringing', 'ringing', 'answered', 'in_progress', 'completed']);
  });

  it("follows the contact's sim key per attempt, the alternate dial being attempt 2; voicemail ends no_answer", async () => {
    // Last digit 4 alone would answer; `sim` decides instead.
    const { batch } = await insertBatch(t.deps, a, {
      contacts: 2,
      batch: { useAlternateNumber: true },
      callOverrides: (i) => ({
        status: 'queued',
        phoneNumber: phoneEndingIn(4, 10 + i),
        alternatePhone: i === 0 ? phoneEndingIn(0, 10) : null,
        metadata: { sim: i === 0 ? 'voicemail,completed' : ' Voicemail ' },
      }),
    });
    await testWorker(t.deps).drain();
    const { events } = await expectConsistentBatch(t.deps, batch.id);
    const [viaAlternate, voicemail] = await calls(batch.id);
    expect([viaAlternate.status, viaAlternate.usedAlternate, viaAlternate.attempts]).toEqual(['completed', true, 2]);
    expect(events.find((e) => e.call_id === viaAlternate.id && e.detail?.event === 'dial' && e.detail?.alternate)?.detail).toMatchObject({
      attempt: 2,
      previous: { status: 'no_answer', disconnect_reason: 'voicemail' },
    });
    expect([voicemail.status, voicemail.hangupBy, voicemail.disconnectReason, voicemail.attempts]).toEqual(['no_answer', 'system', 'voicemail', 1]);
    expect([voicemail.answerDurationSeconds, voicemail.llmTranscript, voicemail.transcriptStatus, voicemail.recordingAvailable]).toEqual([
      null,
      null,
      null,
      false,
    ]);
    expect(attemptOutcome(voicemail)).toBe('voicemail');
  });

  it('is not used when the batch did not ask for it', async () => {
    const { batch } = await insertBatch(t.deps, a, {
      contacts: 1,
      batch: { useAlternateNumber: false },
      callOverrides: () => ({ status: 'queued', phoneNumber: phoneEndingIn(1), alternatePhone: phoneEndingIn(4) }),
    });
    await testWorker(t.deps).drain();
    const [c] = await calls(batch.id);
    expect([c.status, c.dialedNumber, c.usedAlternate, c.attempts]).toEqual(['busy', phoneEndingIn(1), false, 1]);
    expect((await callEvents(t.deps, batch.id)).filter((e) => e.detail?.event === 'dial')).toHaveLength(1);
  });
});

describe('max_duration_seconds_per_call', () => {
  it('the system hangs up an answered call at the limit, not before', async () => {
    const sim = manualSimulator(t.clock, { callMs: 600_000, ringMs: 2_000 });
    const worker = testWorker(t.deps, { providers: sim.registry });
    const { batch } = await insertBatch(t.deps, a, {
      contacts: 1,
      batch: { maxDurationSeconds: 30 },
      callOverrides: () => ({ status: 'queued', phoneNumber: phoneEndingIn(4) }),
    });
    await worker.runOnce();
    await sim.dialled(1);
    sim.timers.advance(29_999);
    await worker.settle();
    expect((await worker.runOnce()).hungUp).toBe(0);
    expect((await calls(batch.id))[0].status).toBe('in_progress');

    sim.timers.advance(1);
    expect((await worker.runOnce()).hungUp).toBe(1);
    await worker.settle();
    const [c] = await calls(batch.id);
    expect([c.status, c.hangupBy, c.disconnectReason, c.durationSeconds, c.answerDurationSeconds]).toEqual([
      'completed',
      'system',
      'max_duration_reached',
      30,
      28,
    ]);
    expect(c.transcriptStatus).toBe('ready');
    expect(c.llmTranscript).toMatch(/^Agent: /);
    expect((await expectConsistentBatch(t.deps, batch.id)).batch.status).toBe('completed');
  });

  describe("without a per-batch limit, the account's max_call_duration_seconds applies", () => {
    let short: SeededAccount;
    beforeAll(async () => {
      short = await t.seedAccount({ limits: { maxConcurrentCalls: 10, maxCallDurationSeconds: 40 } });
    });

    async function expectHungUpAt(batchId: string, seconds: number) {
      const sim = manualSimulator(t.clock, { callMs: 600_000, ringMs: 2_000 });
      const worker = testWorker(t.deps, { providers: sim.registry });
      expect((await worker.runOnce()).claimed).toBe(1);
      await sim.dialled(1);
      sim.timers.advance(seconds * 1000 - 1);
      await worker.settle();
      expect((await worker.runOnce()).hungUp).toBe(0);
      expect((await calls(batchId))[0].status).toBe('in_progress');
      sim.timers.advance(1);
      expect((await worker.runOnce()).hungUp).toBe(1);
      await worker.settle();
      const [c] = await calls(batchId);
      expect([c.status, c.hangupBy, c.disconnectReason, c.durationSeconds]).toEqual(['completed', 'system', 'max_duration_reached', seconds]);
      await expectConsistentBatch(t.deps, batchId);
    }

    it('a batch created without max_duration_seconds_per_call', async () => {
      const res = await t.request('POST', CALL_BATCHES, {
        key: short.apiKey,
        body: batchBody(short, { max_duration_seconds_per_call: undefined, contacts: [{ contact_id: 'c1', phone_number: validPhone(4) }] }),
      });
      expect(res.status).toBe(201);
      await expectHungUpAt(res.body.data.batch_id, 40);
    });

    it('a stored batch with no limit of its own (0)', async () => {
      const { batch } = await insertBatch(t.deps, short, {
        contacts: 1,
        batch: { maxDurationSeconds: 0 },
        callOverrides: () => ({ status: 'queued', phoneNumber: phoneEndingIn(4) }),
      });
      await expectHungUpAt(batch.id, 40);
    });
  });

  it('a call still ringing at the limit ends failed, by the system', async () => {
    const sim = manualSimulator(t.clock, { callMs: 600_000, ringMs: 300_000 });
    const worker = testWorker(t.deps, { providers: sim.registry });
    const { batch } = await insertBatch(t.deps, a, {
      contacts: 1,
      batch: { maxDurationSeconds: 45, useAlternateNumber: true },
      callOverrides: () => ({ status: 'queued', phoneNumber: phoneEndingIn(4), alternatePhone: phoneEndingIn(5) }),
    });
    await worker.runOnce();
    await sim.dialled(1);
    sim.timers.advance(45_000);
    await worker.runOnce();
    await worker.settle();
    const [c] = await calls(batch.id);
    // A hangup by the system is final: the alternate number is not tried.
    expect([c.status, c.hangupBy, c.disconnectReason, c.attempts, c.transcriptStatus]).toEqual(['failed', 'system', 'max_duration_reached', 1, null]);
  });

  it('a provider that never ends a call it was told to hang up: the worker ends it a lease length later, an answered one as completed with its analysis settled, and each gets the events its ending promises', async () => {
    const sim = manualSimulator(t.clock, { callMs: 600_000, ringMs: 10_000 });
    // Hangups go nowhere: the provider keeps the calls "in flight" forever.
    const deaf = registryOf({ ...sim.provider, hangup: async () => undefined });
    const worker = testWorker(t.deps, { providers: deaf });
    const { batch } = await insertBatch(t.deps, a, {
      contacts: 2,
      batch: { maxDurationSeconds: 30, concurrency: 2, callbackUrl: 'https://hooks.example.com/calls' },
      // Answered after 10 s; never answered (rings until the call length).
      callOverrides: (i) => ({ status: 'queued', phoneNumber: phoneEndingIn([4, 0][i], i) }),
    });
    const [answered, ringing] = (await calls(batch.id)).map((c) => c.id);
    expect((await worker.runOnce()).claimed).toBe(2);
    await sim.dialled(2);
    sim.timers.advance(10_000);
    await worker.settle();
    sim.timers.advance(20_000);
    expect((await worker.runOnce()).hungUp).toBe(2);
    await worker.settle();
    expect((await calls(batch.id)).map((c) => c.status)).toEqual(['in_progress', 'ringing']);
    t.clock.advance(t.deps.config.LEASE_MS + 1);
    await worker.runOnce();
    await worker.settle();
    const [c1, c2] = await calls(batch.id);
    expect(pickEnd(c1)).toEqual({ status: 'completed', hangupBy: 'system', disconnectReason: 'provider_unresponsive', transcriptStatus: 'failed' });
    // Answered 10 s into the dial; given up on 30 s + a lease length after the dial.
    const lease = Math.round(t.deps.config.LEASE_MS / 1000);
    expect([c1.durationSeconds, c1.answerDurationSeconds]).toEqual([30 + lease, 20 + lease]);
    expect(pickEnd(c2)).toEqual({ status: 'failed', hangupBy: 'system', disconnectReason: 'provider_unresponsive', transcriptStatus: null });
    const outbox = await callWebhooks(batch.id);
    expect(Object.fromEntries(outbox)).toEqual({ [answered]: ['call.completed', 'call.analyzed'], [ringing]: ['call.failed'] });
    expect((await expectConsistentBatch(t.deps, batch.id)).batch.status).toBe('completed');
  });
});

describe('a hung-up call whose provider cannot be reached', () => {
  it("keeps the call until the provider can say how it ended, and ends it with the provider's result (its transcript), not as provider_unresponsive", async () => {
    const sim = manualSimulator(t.clock, { callMs: 600_000, ringMs: 1_000 });
    const transcript = 'Agent: Hello, this is Sales Agent.\nUser: Yes, tell me more.\nAgent: Goodbye!';
    let reachable = false;
    let lookups = 0;
    const cutOff = registryOf({
      ...sim.provider,
      // A partition: hang-ups and record reads fail until it heals; the provider then holds the call's end.
      hangup: async () => {
        if (!reachable) throw new Error('provider unreachable');
      },
      lookup: async () => {
        lookups++;
        if (!reachable) throw new Error('provider unreachable');
        const at = t.clock.now();
        return {
          state: 'ended',
          result: {
            status: 'completed',
            hangupBy: 'system',
            disconnectReason: 'max_duration_reached',
            startedAt: new Date(at.getTime() - 60_000),
            answeredAt: new Date(at.getTime() - 59_000),
            endedAt: at,
            transcript,
            recording: null,
          },
        };
      },
    });
    const worker = testWorker(t.deps, { providers: cutOff });
    const { batch } = await insertBatch(t.deps, a, {
      contacts: 1,
      batch: { maxDurationSeconds: 30, concurrency: 1 },
      callOverrides: () => ({ status: 'queued', phoneNumber: phoneEndingIn(4, 0) }),
    });
    expect((await worker.runOnce()).claimed).toBe(1);
    await sim.dialled(1);
    sim.timers.advance(1_000);
    await worker.settle();
    sim.timers.advance(30_000);
    expect((await worker.runOnce()).hungUp).toBe(1);
    await worker.settle();
    // A lease later, unreachable: the record cannot be read, so the call is kept.
    t.clock.advance(t.deps.config.LEASE_MS + 1);
    await worker.runOnce();
    await worker.settle();
    expect(lookups).toBe(1);
    expect((await calls(batch.id)).map((c) => c.status)).toEqual(['in_progress']);
    reachable = true;
    t.clock.advance(t.deps.config.LEASE_MS + 1);
    await worker.runOnce();
    await worker.settle();
    const [c] = await calls(batch.id);
    expect([c.status, c.disconnectReason, c.llmTranscript]).toEqual(['completed', 'max_duration_reached', transcript]);
    expect((await expectConsistentBatch(t.deps, batch.id)).batch.status).toBe('completed');
  });
});

const pickEnd = (c: { status: string; hangupBy: string | null; disconnectReason: string | null; transcriptStatus: string | null }) => ({
  status: c.status,
  hangupBy: c.hangupBy,
  disconnectReason: c.disconnectReason,
  transcriptStatus: c.transcriptStatus,
});

/** The call events queued in the webhook outbox for a batch, per call, in order. */
async function callWebhooks(batchId: string): Promise<Map<string, string[]>> {
  const rows = await t.deps.db.prisma.$queryRaw<{ call_id: string; event_type: string }[]>`
    SELECT payload->'data'->>'call_id' AS call_id, event_type FROM webhook_deliveries
     WHERE batch_id = ${batchId} AND event_type LIKE 'call.%' ORDER BY id`;
  const out = new Map<string, string[]>();
  for (const r of rows) out.set(r.call_id, [...(out.get(r.call_id) ?? []), r.event_type]);
  return out;
}
