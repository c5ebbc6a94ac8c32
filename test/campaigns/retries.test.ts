// Retries and expiry on a controllable clock: a batch created through REST with a retry policy and
// expires_at, dialled by the worker with the simulator's per-attempt `sim` outcomes. Nothing sleeps:
// the test clock moves, and the worker drains what is due.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { batchBody, CALL_BATCHES, validPhone } from '../helpers/batch-requests.ts';
import { callEvents, expectConsistentBatch, manualSimulator, nextTurn, testWorker } from '../helpers/dispatch.ts';
import { insertBatch } from '../helpers/fixtures.ts';
import { sseStream } from '../helpers/subscriptions.ts';
import { claimCalls } from '../../src/dispatch/store/claim-calls.ts';

const START = new Date('2026-03-02T15:00:00.000Z');
const MINUTE = 60_000;

let t: TestApp;
let a: SeededAccount;

beforeAll(async () => {
  t = await createTestApp({ config: { RETRY_MIN_DELAY_SECONDS: '1' } });
  a = await t.seedAccount({ limits: { maxConcurrentCalls: 100 } });
});
afterAll(() => t.close());
beforeEach(() => t.clock.set(START));

interface Contact {
  sim: string;
  alternate?: string;
}

async function create(contacts: Contact[], overrides: Record<string, unknown>): Promise<string> {
  const res = await t.request('POST', CALL_BATCHES, {
    key: a.apiKey,
    body: batchBody(a, {
      contacts: contacts.map((c, i) => ({
        contact_id: `c${i + 1}`,
        // Last digit 4 answers; `sim` decides instead.
        phone_number: validPhone(i * 10 + 4),
        metadata: { sim: c.sim, ...(c.alternate ? { alternate_phone: c.alternate } : {}) },
      })),
      ...overrides,
    }),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.batch_id;
}

const calls = (batchId: string) => t.deps.db.prisma.call.findMany({ where: { batchId }, orderBy: { seq: 'asc' } });
const drain = () => testWorker(t.deps).drain();
const later = (ms: number) => t.clock.set(new Date(t.clock.now().getTime() + ms));

describe('retry', () => {
  it('tries an unanswered call again after delay_seconds, up to max_attempts, only for the outcomes asked for', async () => {
    const id = await create([{ sim: 'no_answer,no_answer,completed' }, { sim: 'no_answer' }, { sim: 'busy' }], {
      retry: { max_attempts: 3, on: ['no_answer'], delay_seconds: 600 },
    });
    await drain();
    let rows = await calls(id);
    expect(rows.map((r) => [r.status, r.attempts])).toEqual([
      ['queued', 1],
      ['queued', 1],
      ['busy', 1],
    ]);
    expect(rows[0].nextAttemptAt?.toISOString()).toBe(new Date(START.getTime() + 10 * MINUTE).toISOString());
    await expectConsistentBatch(t.deps, id);

    // Not due yet: nothing is dialled.
    later(10 * MINUTE - 1_000);
    await drain();
    expect((await calls(id)).map((r) => r.attempts)).toEqual([1, 1, 1]);

    later(1_000);
    await drain();
    rows = await calls(id);
    expect(rows.map((r) => [r.status, r.attempts])).toEqual([
      ['queued', 2],
      ['queued', 2],
      ['busy', 1],
    ]);

    later(10 * MINUTE);
    await drain();
    rows = await calls(id);
    expect(rows.map((r) => [r.status, r.attempts, r.nextAttemptAt])).toEqual([
      ['completed', 3, null],
      ['no_answer', 3, null],
      ['busy', 1, null],
    ]);
    const { batch } = await expectConsistentBatch(t.deps, id);
    expect([batch.status, batch.completed, batch.failed]).toEqual(['completed', 1, 2]);

    // REST: the record's attempts; GraphQL: each attempt.
    const rest = await t.request('GET', `${CALL_BATCHES}/${id}/calls`, { key: a.apiKey });
    expect(rest.body.data.items.map((c: any) => [c.status, c.attempts, c.next_attempt_at])).toEqual([
      ['completed', 3, null],
      ['no_answer', 3, null],
      ['busy', 1, null],
    ]);
    const gql = await t.gql(
      `query($id: ID!) { node(id: $id) { ... on Call { attemptCount attempts { number status disconnectReason startedAt endedAt } } } }`,
      { id: rows[0].id },
      a.apiKey,
    );
    expect(gql.body.errors).toBeUndefined();
    const attempts = gql.body.data.node.attempts;
    expect(attempts.map((x: any) => [x.number, x.status])).toEqual([
      [1, 'no_answer'],
      [2, 'no_answer'],
      [3, 'completed'],
    ]);
    expect(attempts[1].startedAt).toBe(new Date(START.getTime() + 10 * MINUTE).toISOString());
    expect(gql.body.data.node.attemptCount).toBe(3);
  });

  it('shows a waiting call as queued with next_attempt_at, in the queued counter', async () => {
    const id = await create([{ sim: 'busy,completed' }], { retry: { max_attempts: 2, delay_seconds: 60 } });
    await drain();
    const res = await t.request('GET', `${CALL_BATCHES}/${id}/calls`, { key: a.apiKey });
    expect(res.body.data.items[0]).toMatchObject({ status: 'queued', attempts: 1, next_attempt_at: '2026-03-02T15:01:00.000Z' });
    const details = await t.request('GET', `${CALL_BATCHES}/${id}`, { key: a.apiKey });
    expect(details.body.data).toMatchObject({
      status: 'running',
      queued: 1,
      in_progress: 0,
      failed: 0,
      retry: { max_attempts: 2, on: ['no_answer', 'busy', 'voicemail'], delay_seconds: 60 },
      expires_at: null,
    });
  });

  it('dials the alternate number first within the same round, then retries from the primary; max_attempts counts every dial', async () => {
    const alternate = validPhone(9_004);
    const id = await create([{ sim: 'no_answer,no_answer,completed', alternate }], {
      use_alternate_number: true,
      retry: { max_attempts: 3, delay_seconds: 60 },
    });
    await drain();
    expect((await calls(id)).map((r) => [r.status, r.attempts])).toEqual([['queued', 2]]);
    later(MINUTE);
    await drain();
    const [row] = await calls(id);
    expect([row.status, row.attempts, row.dialedNumber, row.usedAlternate]).toEqual(['completed', 3, validPhone(4), false]);
    const dials = (await callEvents(t.deps, id)).filter((e) => e.detail?.event === 'dial').map((e) => [e.detail!.attempt, e.detail!.number]);
    expect(dials).toEqual([
      [1, validPhone(4)],
      [2, alternate],
      [3, validPhone(4)],
    ]);
    await expectConsistentBatch(t.deps, id);
  });

  it('does not dial the alternate number when no attempt is left', async () => {
    const id = await create([{ sim: 'no_answer', alternate: validPhone(9_014) }], {
      use_alternate_number: true,
      retry: { max_attempts: 1 },
    });
    await drain();
    expect((await calls(id)).map((r) => [r.status, r.attempts, r.usedAlternate])).toEqual([['no_answer', 1, false]]);
  });

  it('says why a waiting call waits: Call.retryReason on a page, attemptCount / nextAttemptAt / retryReason on callUpdated', async () => {
    const id = await create([{ sim: 'busy,completed' }, { sim: 'voicemail,completed' }, { sim: 'no_answer,completed' }, { sim: 'completed' }], {
      retry: { max_attempts: 3, delay_seconds: 600 },
    });
    await drain();
    const page = () => t.gql(`query($id: ID!) { calls(batchId: $id) { items { status attemptCount nextAttemptAt retryReason } } }`, { id }, a.apiKey);
    const waiting = { status: 'queued', attemptCount: 1, nextAttemptAt: '2026-03-02T15:10:00.000Z' };
    const done = { status: 'completed', nextAttemptAt: null, retryReason: null };
    const first = [
      { ...waiting, retryReason: 'busy' },
      { ...waiting, retryReason: 'voicemail' },
      { ...waiting, retryReason: 'no_answer' },
      { ...done, attemptCount: 1 },
    ];
    expect((await page()).body.data.calls.items).toEqual(first);

    // A subscriber joining now first gets the latest state of the calls that changed last (the
    // waiting ones), with the same facts: from the calls row, the reason from one probe of each
    // waiting call's history.
    const s = sseStream<{ callUpdated: any }>(
      (r) => t.app.fetch(r),
      'http://test.local',
      `subscription($id: ID!) { callUpdated(batchId: $id) { seq status attemptCount nextAttemptAt retryReason } }`,
      { id },
      a.apiKey,
    );
    try {
      const replayed = [];
      for (const seq of [1, 2, 3]) {
        const { seq: _, ...rest } = (await s.until((v) => v.callUpdated.seq === seq, 15_000)).callUpdated;
        replayed.push(rest);
      }
      expect(replayed).toEqual(first.slice(0, 3));
    } finally {
      s.close();
    }

    // Dialled again and answered: nothing waits any more.
    later(10 * MINUTE);
    await drain();
    expect((await page()).body.data.calls.items).toEqual([2, 2, 2, 1].map((attemptCount) => ({ ...done, attemptCount })));
  });

  it('retries voicemail only when asked to; a final voicemail is no_answer with disconnect_reason voicemail', async () => {
    const id = await create([{ sim: 'voicemail,completed' }, { sim: 'voicemail' }, { sim: 'no_answer' }], {
      retry: { max_attempts: 2, on: ['voicemail'], delay_seconds: 60 },
    });
    await drain();
    expect((await calls(id)).map((r) => r.status)).toEqual(['queued', 'queued', 'no_answer']);
    later(MINUTE);
    await drain();
    const res = await t.request('GET', `${CALL_BATCHES}/${id}/calls`, { key: a.apiKey });
    expect(res.body.data.items.map((c: any) => [c.status, c.disconnect_reason, c.attempts])).toEqual([
      ['completed', 'agent_hangup', 2],
      ['no_answer', 'voicemail', 2],
      ['no_answer', 'no_answer', 1],
    ]);
  });

  it('queues call.retry_scheduled for each retry and call.failed / call.completed only at the last attempt', async () => {
    const id = await create([{ sim: 'busy,busy,completed' }, { sim: 'busy' }], {
      retry: { max_attempts: 3, delay_seconds: 60 },
      callback_url: 'https://hooks.example.com/calls',
    });
    for (let i = 0; i < 3; i++) {
      await drain();
      later(MINUTE);
    }
    const deliveries = await t.deps.db.prisma.webhookDelivery.findMany({ where: { batchId: id }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
    const [first, second] = await calls(id);
    const typesOf = (callId: string) =>
      deliveries.filter((d) => (d.payload as any).data.call_id === callId).map((d) => [(d.payload as any).type, (d.payload as any).data.attempts]);
    expect(typesOf(first.id)).toEqual([
      ['call.retry_scheduled', 1],
      ['call.retry_scheduled', 2],
      ['call.completed', 3],
      ['call.analyzed', 3],
    ]);
    expect(typesOf(second.id)).toEqual([
      ['call.retry_scheduled', 1],
      ['call.retry_scheduled', 2],
      ['call.failed', 3],
    ]);
    const scheduled = deliveries.find((d) => (d.payload as any).type === 'call.retry_scheduled')!;
    expect((scheduled.payload as any).data).toMatchObject({ status: 'queued', next_attempt_at: '2026-03-02T15:01:00.000Z' });
  });

  it('ends calls waiting for a retry when the batch is cancelled', async () => {
    const id = await create([{ sim: 'no_answer' }, { sim: 'no_answer' }], { retry: { max_attempts: 3, delay_seconds: 3600 } });
    await drain();
    const res = await t.request('POST', `${CALL_BATCHES}/${id}/cancel`, { key: a.apiKey });
    expect(res.status).toBe(200);
    const { batch } = await expectConsistentBatch(t.deps, id);
    expect([batch.status, batch.cancelled, batch.queued]).toEqual(['cancelled', 2, 0]);
    expect(batch.completedAt).not.toBeNull();
    later(2 * 3600_000);
    await drain();
    expect((await calls(id)).map((r) => [r.status, r.attempts])).toEqual([
      ['cancelled', 1],
      ['cancelled', 1],
    ]);
  });

  it('a retry written after the cancel, before the worker saw it, still ends cancelled and the batch completes', async () => {
    const sim = manualSimulator(t.clock, { callMs: 30_000 });
    const worker = testWorker(t.deps, { providers: sim.registry });
    const id = await create([{ sim: 'no_answer' }], { retry: { max_attempts: 3, delay_seconds: 60 } });
    await worker.runOnce();
    await sim.dialled(1);
    expect((await t.request('POST', `${CALL_BATCHES}/${id}/cancel`, { key: a.apiKey })).status).toBe(200);
    // The call ends unanswered before the worker's next tick would hang it up: it is put back in line.
    sim.timers.advance(30_000);
    await worker.settle();
    expect((await calls(id)).map((r) => r.status)).toEqual(['queued']);
    await worker.runOnce();
    expect((await calls(id)).map((r) => [r.status, r.attempts])).toEqual([['cancelled', 1]]);
    const { batch } = await expectConsistentBatch(t.deps, id);
    expect([batch.status, batch.cancelled]).toEqual(['cancelled', 1]);
    expect(batch.completedAt).not.toBeNull();
  });
});

describe('the claim', () => {
  it('gives the slots a batch of waiting retries cannot use to the batch beside it, in the same claim', async () => {
    const acc = await t.seedAccount({ limits: { maxConcurrentCalls: 10 } });
    const later = new Date(START.getTime() + 3600_000);
    const waiting = await insertBatch(t.deps, acc, {
      contacts: 30,
      status: 'running',
      batch: { concurrency: 10, retryMaxAttempts: 3, retryOn: ['busy'], retryDelaySeconds: 3600 },
      callOverrides: () => ({ status: 'queued', attempts: 1, nextAttemptAt: later }),
    });
    const fresh = await insertBatch(t.deps, acc, { contacts: 30, status: 'running', batch: { concurrency: 10 } });
    const claim = () =>
      claimCalls(t.deps, { accountId: acc.account.id, workerId: 'w-test', clock: () => t.clock.now(), leaseMs: 60_000, budget: 100 });
    const r = await claim();
    expect(r.claimed.filter((c) => c.batchId === fresh.batch.id)).toHaveLength(10);
    expect(r.claimed.filter((c) => c.batchId === waiting.batch.id)).toHaveLength(0);
    // Once due, the retries are taken first (due earliest), before never-dialled calls.
    t.clock.set(later);
    await t.deps.db.prisma.call.updateMany({
      where: { batchId: fresh.batch.id, status: 'ringing' },
      data: { status: 'completed', leaseOwner: null },
    });
    await t.deps.db.prisma.batch.update({ where: { id: fresh.batch.id }, data: { inProgress: 0, completed: 10 } });
    const again = await claim();
    expect(again.claimed.filter((c) => c.batchId === waiting.batch.id).map((c) => c.attempts)).toEqual(Array(5).fill(2));
  });
});

describe('expires_at', () => {
  it('never places a call after it: waiting calls end cancelled with disconnect_reason expired and the batch completes', async () => {
    const id = await create([{ sim: 'no_answer,completed' }, { sim: 'completed' }], {
      retry: { max_attempts: 2, delay_seconds: 1800 },
      expires_at: '2026-03-02T15:45:00Z',
      concurrency: 1,
    });
    // One slot: the first call is dialled; the second waits for the slot.
    const worker = testWorker(t.deps);
    await worker.runOnce();
    await worker.drain();
    expect((await calls(id)).map((r) => r.status)).toEqual(['queued', 'completed']);

    later(45 * MINUTE);
    await drain();
    const rows = await calls(id);
    expect(rows.map((r) => [r.status, r.disconnectReason, r.attempts])).toEqual([
      ['cancelled', 'expired', 1],
      ['completed', 'agent_hangup', 1],
    ]);
    const { batch } = await expectConsistentBatch(t.deps, id);
    expect([batch.status, batch.cancelled, batch.completed]).toEqual(['completed', 1, 1]);
    const details = await t.request('GET', `${CALL_BATCHES}/${id}`, { key: a.apiKey });
    expect(details.body.data.expires_at).toBe('2026-03-02T15:45:00.000Z');
  });

  it('does not schedule a retry that could only happen after it: that attempt is the last', async () => {
    const id = await create([{ sim: 'busy,completed' }], { retry: { max_attempts: 2, delay_seconds: 3600 }, expires_at: '2026-03-02T15:30:00Z' });
    await drain();
    expect((await calls(id)).map((r) => [r.status, r.attempts])).toEqual([['busy', 1]]);
  });

  it('a batch started after it dials nothing', async () => {
    const id = await create([{ sim: 'completed' }, { sim: 'completed' }], { start_mode: 'manual', expires_at: '2026-03-02T15:10:00Z' });
    later(20 * MINUTE);
    expect((await t.request('POST', `${CALL_BATCHES}/${id}/start`, { key: a.apiKey })).status).toBe(200);
    await drain();
    expect((await calls(id)).map((r) => [r.status, r.disconnectReason, r.attempts])).toEqual([
      ['cancelled', 'expired', 0],
      ['cancelled', 'expired', 0],
    ]);
    expect((await callEvents(t.deps, id)).filter((e) => e.detail?.event === 'dial')).toEqual([]);
    const { batch } = await expectConsistentBatch(t.deps, id);
    expect(batch.status).toBe('completed');
  });
});

describe('two workers', () => {
  it('share retries without placing one attempt twice', async () => {
    const n = 40;
    const res = await t.request('POST', CALL_BATCHES, {
      key: a.apiKey,
      body: batchBody(a, {
        concurrency: 20,
        retry: { max_attempts: 3, delay_seconds: 1 },
        contacts: Array.from({ length: n }, (_, i) => ({
          contact_id: `w${i}`,
          phone_number: validPhone(20_000 + i * 10 + 4),
          metadata: { sim: 'no_answer,busy,completed' },
        })),
      }),
    });
    expect(res.status).toBe(201);
    const id = res.body.data.batch_id;
    // Few slots each, so both take part.
    const workers = [testWorker(t.deps, { maxInFlight: 4 }), testWorker(t.deps, { maxInFlight: 4 })];
    for (const w of workers) w.start();
    try {
      // The test clock moves a second at a time, each step seen by both loops: every retry comes due.
      const deadline = Date.now() + 60_000;
      while (Date.now() < deadline) {
        const b = await t.deps.db.prisma.batch.findUniqueOrThrow({ where: { id } });
        if (b.status === 'completed') break;
        later(1_000);
        await nextTurn(...workers);
      }
    } finally {
      await Promise.all(workers.map((w) => w.stop({ graceMs: 2000 })));
    }
    const { batch, events } = await expectConsistentBatch(t.deps, id);
    expect([batch.status, batch.completed]).toEqual(['completed', n]);
    const dials = events.filter((e) => e.detail?.event === 'dial');
    expect(dials).toHaveLength(3 * n);
    expect(new Set(dials.map((e) => `${e.call_id}#${String(e.detail!.attempt)}`)).size).toBe(3 * n);
    expect(new Set(dials.map((e) => String(e.detail!.worker))).size).toBe(2);
  }, 90_000);
});
