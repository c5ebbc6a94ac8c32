// A batch created over REST with a callback_url, run by the dispatch worker (simulator), its events
// delivered to a real receiver: every event arrives signed, call payloads equal the REST call
// records, and `callbacks` counts the deliveries.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { batchBody, CALL_BATCHES } from '../helpers/batch-requests.ts';
import { manualSimulator, phoneEndingIn, testWorker } from '../helpers/dispatch.ts';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';
import { deliverDue } from '../../src/services/webhooks/delivery-worker.ts';
import { webhookSecret } from '../../src/services/webhooks/secrets.ts';
import { CALL_RECORD_FIELDS } from '../../src/services/representations.ts';

let t: TestApp;
let a: SeededAccount;
let rx: Receiver;

beforeAll(async () => {
  t = await createTestApp({ config: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  a = await t.seedAccount({ outcomeKeys: ['interested', 'callback_requested'] });
  rx = await startReceiver();
});
afterAll(async () => {
  await rx.close();
  await t.close();
});

async function deliverAll() {
  for (let i = 0; i < 10 && (await deliverDue(t.deps, { limit: 100 })).length > 0; i++);
}

describe('webhooks end to end', () => {
  it('a batch run sends batch.started, call.* per call and batch.completed, signed and shaped like REST', async () => {
    // Simulator: 0 no answer, 1 busy, 2 failed, 3 and 4 completed.
    const contacts = [0, 1, 2, 3, 4].map((d, i) => ({ contact_id: `c${d}`, phone_number: phoneEndingIn(d, i) }));
    const created = await t.request('POST', CALL_BATCHES, {
      key: a.apiKey,
      body: batchBody(a, { contacts, callback_url: rx.url, recording_enabled: true }),
    });
    expect(created.status).toBe(201);
    const batchId = created.body.data.batch_id;

    await testWorker(t.deps).drain();
    await deliverAll();

    const { secret } = await webhookSecret(t.deps, a.account.id);
    for (const r of rx.received) new Webhook(secret).verify(r.body, r.headers as Record<string, string>);
    const events = rx.bodies();
    const count = (type: string) => events.filter((e) => e.type === type).length;
    expect({
      started: count('batch.started'),
      completed: count('call.completed'),
      failed: count('call.failed'),
      analyzed: count('call.analyzed'),
      batchCompleted: count('batch.completed'),
    }).toEqual({ started: 1, completed: 2, failed: 3, analyzed: 2, batchCompleted: 1 });
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
    for (const e of events) expect(e.data.batch_id).toBe(batchId);

    expect(
      events
        .filter((e) => e.type === 'call.failed')
        .map((e) => e.data.reason)
        .sort(),
    ).toEqual(['busy', 'failed', 'no_answer']);
    const started = events.find((e) => e.type === 'batch.started')!;
    expect(started.data).toMatchObject({ status: 'running', started_at: expect.stringMatching(/Z$/), completed_at: null });
    const done = events.find((e) => e.type === 'batch.completed')!;
    expect(done.data).toMatchObject({ status: 'completed', completed: 2, failed: 3, queued: 0, in_progress: 0 });

    // call.completed and call.analyzed carry the final record: the REST results item, field for
    // field (summary, outcomes and the recording included), but for the recording link, which is
    // signed for the attempt that carried it and plays.
    const results = await t.request('GET', `${CALL_BATCHES}/${batchId}/results`, { key: a.apiKey });
    expect(results.status).toBe(200);
    const finals = events.filter((x) => x.type === 'call.completed' || x.type === 'call.analyzed');
    expect(finals).toHaveLength(4);
    for (const e of finals) {
      expect(Object.keys(e.data)).toEqual([...CALL_RECORD_FIELDS]);
      expect(e.data).toMatchObject({ status: 'completed', transcript_status: 'ready', recording_available: true });
      expect(e.data.summary).toEqual(expect.any(String));
      expect(Object.keys(e.data.outcomes).sort()).toEqual(['callback_requested', 'interested']);
      const rest = results.body.data.items.find((i: any) => i.call_id === e.data.call_id);
      expect({ ...e.data, recording_url: null }).toEqual({ ...rest, recording_url: null });
      const audio = await t.app.fetch(new Request(e.data.recording_url));
      expect(audio.status).toBe(200);
      expect(audio.headers.get('content-type')).toBe('audio/wav');
    }
    // Each answered call is announced once, before or with its analysis in the outbox.
    const completedIds = events.filter((e) => e.type === 'call.completed').map((e) => e.data.call_id);
    expect(new Set(completedIds).size).toBe(2);
    expect(completedIds.sort()).toEqual(
      events
        .filter((e) => e.type === 'call.analyzed')
        .map((e) => e.data.call_id)
        .sort(),
    );
    // Unanswered calls are call.failed at their end, with nothing from an analysis.
    for (const e of events.filter((x) => x.type === 'call.failed')) {
      expect(e.data).toMatchObject({ summary: null, outcomes: null, recording_url: null, transcript_status: null });
    }

    const details = await t.request('GET', `${CALL_BATCHES}/${batchId}`, { key: a.apiKey });
    expect(details.body.data.callbacks).toBe(events.length);
    // batch.completed carries the batch details as REST shows them (callbacks then was a snapshot).
    expect(Object.keys(done.data)).toEqual(Object.keys(details.body.data));
    expect({ ...done.data, callbacks: null }).toEqual({ ...details.body.data, callbacks: null });
  });

  it('cancelling a batch sends batch.cancelled', async () => {
    const created = await t.request('POST', CALL_BATCHES, {
      key: a.apiKey,
      body: batchBody(a, { start_mode: 'manual', callback_url: rx.url }),
    });
    const batchId = created.body.data.batch_id;
    const cancelled = await t.request('POST', `${CALL_BATCHES}/${batchId}/cancel`, { key: a.apiKey, body: {} });
    expect(cancelled.status).toBe(200);
    rx.received.length = 0;
    await deliverAll();
    expect(rx.bodies().map((e) => [e.type, e.data.status, e.data.cancelled])).toEqual([['batch.cancelled', 'cancelled', 2]]);
  });

  it('cancelling a batch with calls in flight: each dialled call still sends the events of the status it ends in, the undialled ones none', async () => {
    // Simulator on the test clock: answered after 2 s, talks for a minute; 0 rings until the end.
    const sim = manualSimulator(t.clock, { callMs: 60_000, ringMs: 2_000 });
    const worker = testWorker(t.deps, { providers: sim.registry });
    const contacts = [4, 0, 4].map((d, i) => ({ contact_id: `x${i}`, phone_number: phoneEndingIn(d, 700 + i) }));
    const created = await t.request('POST', CALL_BATCHES, { key: a.apiKey, body: batchBody(a, { contacts, concurrency: 2, callback_url: rx.url }) });
    expect(created.status).toBe(201);
    const batchId = created.body.data.batch_id;
    expect((await worker.runOnce()).claimed).toBe(2);
    await sim.dialled(2);
    sim.timers.advance(2_000);
    await worker.settle();
    expect((await t.request('POST', `${CALL_BATCHES}/${batchId}/cancel`, { key: a.apiKey, body: {} })).status).toBe(200);
    // The worker hangs up the two calls in flight; the third was never dialled.
    expect((await worker.runOnce()).hungUp).toBe(2);
    await worker.drain();
    rx.received.length = 0;
    await deliverAll();

    const byContact = (id: string) => rx.bodies().filter((e) => e.type.startsWith('call.') && e.data.contact_id === id);
    const answered = byContact('x0');
    expect(answered.map((e) => e.type).sort()).toEqual(['call.analyzed', 'call.completed']);
    for (const e of answered)
      expect(e.data).toMatchObject({ status: 'completed', hangup_by: 'system', disconnect_reason: 'cancelled', transcript_status: 'ready' });
    expect(byContact('x1').map((e) => [e.type, e.data.status, e.data.reason, e.data.disconnect_reason])).toEqual([
      ['call.failed', 'failed', 'failed', 'cancelled'],
    ]);
    expect(byContact('x2')).toEqual([]);
    // Deliveries run concurrently, so arrival order is not event order: ids are time-ordered (docs/webhooks.md).
    const batchEvents = rx
      .bodies()
      .filter((e) => e.type.startsWith('batch.'))
      .sort((x, y) => (x.id < y.id ? -1 : 1));
    expect(batchEvents.map((e) => [e.type, e.data.status])).toEqual([
      ['batch.started', 'running'],
      ['batch.cancelled', 'cancelled'],
    ]);
  });
});
