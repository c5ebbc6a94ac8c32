import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { insertBatch } from '../helpers/fixtures.ts';
import { callEvents, expectConsistentBatch, manualSimulator, phoneEndingIn, testWorker } from '../helpers/dispatch.ts';
import type { Analyser } from '../../src/dispatch/analysis/analyser.ts';
import { createLocalAnalyser } from '../../src/dispatch/analysis/local-analyser.ts';

let t: TestApp;
let a: SeededAccount;

beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount({ outcomeKeys: ['interested', 'callback_requested'] });
});
afterAll(() => t.close());

const RESULTS = `query($id: ID!) {
  batch(id: $id) {
    status startedAt completedAt queued inProgress completed failed cancelled acceptedContacts
  }
}`;

describe('an immediate batch runs to completion', () => {
  it('dials every call once, records results and closes the batch', async () => {
    // One call per simulator outcome: 0 no answer, 1 busy, 2 failed, 3 user hangs up, 4 agent ends.
    const { batch } = await insertBatch(t.deps, a, {
      contacts: 5,
      startMode: 'immediate',
      batch: { concurrency: 5, recordingEnabled: true },
      callOverrides: (i) => ({ status: 'queued', phoneNumber: phoneEndingIn(i, i), metadata: { plan: 'gold' } }),
    });
    expect(batch.status).toBe('queued');
    const worker = testWorker(t.deps);
    await worker.drain();

    const { batch: done, calls } = await expectConsistentBatch(t.deps, batch.id);
    expect(done.status).toBe('completed');
    expect(done.startedAt).not.toBeNull();
    expect(done.completedAt).not.toBeNull();
    expect(done.completedAt!.getTime()).toBeGreaterThanOrEqual(done.startedAt!.getTime());
    expect({ completed: done.completed, failed: done.failed, queued: done.queued, inProgress: done.inProgress }).toEqual({
      completed: 2,
      failed: 3,
      queued: 0,
      inProgress: 0,
    });

    const bySeq = calls.sort((x, y) => x.seq - y.seq);
    expect(bySeq.map((c) => c.status)).toEqual(['no_answer', 'busy', 'failed', 'completed', 'completed']);
    expect(bySeq.map((c) => c.hangupBy)).toEqual([null, null, 'system', 'user', 'agent']);
    expect(bySeq.map((c) => c.disconnectReason)).toEqual(['no_answer', 'busy', 'dial_failed', 'normal', 'agent_hangup']);
    for (const c of bySeq) {
      expect(c.leaseOwner).toBeNull();
      expect(c.attempts).toBe(1);
      expect(c.dialedNumber).toBe(c.phoneNumber);
      expect(c.timestamp).not.toBeNull();
      expect(c.completedAt).not.toBeNull();
    }
    for (const c of bySeq.slice(0, 3)) {
      expect(c.transcriptStatus).toBeNull();
      expect(c.summary).toBeNull();
      expect(c.recordingAvailable).toBe(false);
    }
    for (const c of bySeq.slice(3)) {
      expect(c.transcriptStatus).toBe('ready');
      expect(c.llmTranscript).toMatch(/^Agent: /);
      expect(c.summary).toMatch(/^Called Contact \d/);
      expect(Object.keys(c.outcomes as object).sort()).toEqual(['callback_requested', 'interested']);
      expect(Object.values(c.outcomes as object).every((v) => typeof v === 'string')).toBe(true);
      expect(c.recordingAvailable).toBe(true);
    }

    // Recordings are stored and served through the signed URL.
    const rec = await t.deps.db.prisma.recording.findUnique({ where: { callId: bySeq[4].id } });
    expect(rec?.contentType).toBe('audio/wav');
    expect(Buffer.from(rec!.data!).subarray(0, 4).toString()).toBe('RIFF');

    const res = await t.gql(RESULTS, { id: batch.id }, a.apiKey);
    expect(res.body.data.batch).toMatchObject({
      status: 'completed',
      queued: 0,
      inProgress: 0,
      completed: 2,
      failed: 3,
      cancelled: 0,
      acceptedContacts: 5,
    });
  });

  it('keeps a timestamped history per call, exposed as Call.history', async () => {
    const { batch } = await insertBatch(t.deps, a, {
      contacts: 1,
      callOverrides: () => ({ status: 'queued', phoneNumber: phoneEndingIn(5) }),
    });
    await testWorker(t.deps).drain();
    const events = await callEvents(t.deps, batch.id);
    expect(events.map((e) => `${e.from_status}->${e.to_status}`)).toEqual([
      'queued->ringing',
      'ringing->answered',
      'answered->in_progress',
      'in_progress->completed',
    ]);
    expect(events[0].detail).toMatchObject({ event: 'dial', number: phoneEndingIn(5), attempt: 1, alternate: false });
    expect(events[3].detail).toMatchObject({ event: 'ended', hangup_by: 'agent', disconnect_reason: 'agent_hangup' });

    const res = await t.gql(
      `query($id: ID!) { batch(id: $id) { callsConnection(first: 1) { edges { node { history { fromStatus toStatus at detail } } } } } }`,
      { id: batch.id },
      a.apiKey,
    );
    const history = res.body.data.batch.callsConnection.edges[0].node.history;
    expect(history.map((h: any) => h.toStatus)).toEqual(['ringing', 'answered', 'in_progress', 'completed']);
    for (const h of history) expect(h.at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  it('the results of a finished batch read through REST /results', async () => {
    const { batch } = await insertBatch(t.deps, a, {
      contacts: 2,
      batch: { recordingEnabled: true },
      callOverrides: (i) => ({ status: 'queued', phoneNumber: phoneEndingIn(i === 0 ? 3 : 0, i) }),
    });
    await testWorker(t.deps).drain();
    const res = await t.request('GET', `/api/v1/public/call-batches/${batch.id}/results`, { key: a.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.message).toBe('Batch results fetched successfully');
    expect(res.body.data.status).toBe('completed');
    const [answered, unanswered] = res.body.data.items;
    expect(answered).toMatchObject({
      call_id: expect.stringMatching(/^call_/),
      batch_id: batch.id,
      phone_number: phoneEndingIn(3, 0),
      status: 'completed',
      call_status: 'completed',
      transcript_status: 'ready',
      hangup_by: 'user',
      disconnect_reason: 'normal',
      recording_available: true,
      recording_url: expect.stringContaining(`/recordings/${answered.call_id}.wav?`),
      summary: expect.stringMatching(/\S/),
      llm_transcript: expect.stringMatching(/^Agent: /),
    });
    expect(Object.keys(answered.outcomes).sort()).toEqual(['callback_requested', 'interested']);
    expect(answered.duration_seconds).toEqual(expect.any(Number));
    expect(answered.timestamp).toMatch(/Z$/);
    expect(answered.completed_at).toMatch(/Z$/);
    expect(unanswered).toMatchObject({
      status: 'no_answer',
      transcript_status: null,
      summary: null,
      outcomes: null,
      recording_available: false,
      recording_url: null,
    });

    // The signed URL serves the stored WAV.
    const url = new URL(answered.recording_url);
    const wav = await t.app.fetch(new Request(`http://test.local${url.pathname}${url.search}`));
    expect(wav.status).toBe(200);
    expect(wav.headers.get('content-type')).toBe('audio/wav');
    expect(
      Buffer.from(await wav.arrayBuffer())
        .subarray(8, 12)
        .toString(),
    ).toBe('WAVE');
  });

  it('queues webhooks for a batch with a callback_url in the transactions of the changes', async () => {
    const { batch } = await insertBatch(t.deps, a, {
      contacts: 2,
      batch: { callbackUrl: 'https://hooks.example.com/calls' },
      callOverrides: (i) => ({ status: 'queued', phoneNumber: phoneEndingIn(i === 0 ? 4 : 1, i) }),
    });
    await testWorker(t.deps).drain();
    const rows = await t.deps.db.prisma.webhookDelivery.findMany({ where: { batchId: batch.id }, orderBy: { id: 'asc' } });
    const types = rows.map((r) => r.eventType);
    expect(types.filter((x) => x === 'batch.started')).toHaveLength(1);
    expect(types.filter((x) => x === 'batch.completed')).toHaveLength(1);
    expect(types.filter((x) => x === 'call.completed')).toHaveLength(1);
    expect(types.filter((x) => x === 'call.failed')).toHaveLength(1);
    expect(types.filter((x) => x === 'call.analyzed')).toHaveLength(1);
    expect(types[0]).toBe('batch.started');
    // The batch completes when its last call ends; an answered call is announced (call.completed)
    // together with its analysis, which may settle after that.
    expect(types.indexOf('batch.completed')).toBeGreaterThan(types.indexOf('call.failed'));
    expect(types.indexOf('call.analyzed')).toBe(types.indexOf('call.completed') + 1);
    expect(rows.every((r) => r.url === 'https://hooks.example.com/calls')).toBe(true);
  });

  it('dials calls put back in line (queued) first, then the never-dialled (pending) in submission order', async () => {
    const { batch } = await insertBatch(t.deps, a, {
      contacts: 4,
      batch: { concurrency: 1 },
      callOverrides: (i) => ({ status: i === 2 ? 'queued' : 'pending', phoneNumber: phoneEndingIn(4, i) }),
    });
    await testWorker(t.deps).drain();
    const { batch: done, events } = await expectConsistentBatch(t.deps, batch.id);
    expect(done.status).toBe('completed');
    const seqOf = new Map((await t.deps.db.prisma.call.findMany({ where: { batchId: batch.id } })).map((c) => [c.id, c.seq]));
    const dials = events.filter((e) => e.to_status === 'ringing');
    expect(dials.map((e) => [seqOf.get(e.call_id), e.from_status])).toEqual([
      [3, 'queued'],
      [1, 'pending'],
      [2, 'pending'],
      [4, 'pending'],
    ]);
  });
});

describe('transcript_status: pending -> processing -> ready, or failed', () => {
  // Every value the column takes is logged by a trigger, so states that last only between two
  // commits are observed from the database too, not inferred from the worker's code.
  beforeAll(async () => {
    const db = t.deps.db.prisma;
    await db.$executeRawUnsafe(`CREATE TABLE test_transcript_log (id serial PRIMARY KEY, call_id text NOT NULL, status text)`);
    await db.$executeRawUnsafe(`
      CREATE FUNCTION test_log_transcript() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.transcript_status IS DISTINCT FROM OLD.transcript_status THEN
          INSERT INTO test_transcript_log (call_id, status) VALUES (NEW.id, NEW.transcript_status);
        END IF;
        RETURN NEW;
      END $$`);
    await db.$executeRawUnsafe(`CREATE TRIGGER test_log_transcript AFTER UPDATE ON calls FOR EACH ROW EXECUTE FUNCTION test_log_transcript()`);
  });

  const logged = async (callId: string) =>
    (await t.deps.db.prisma.$queryRaw<{ status: string | null }[]>`SELECT status FROM test_transcript_log WHERE call_id = ${callId} ORDER BY id`).map(
      (r) => r.status,
    );
  const row = (batchId: string) => t.deps.db.prisma.call.findFirstOrThrow({ where: { batchId } });
  const results = (batchId: string, query = '') => t.request('GET', `/api/v1/public/call-batches/${batchId}/results${query}`, { key: a.apiKey });

  /** An analyser that holds every analysis until released, then answers like the local one or throws. */
  function heldAnalyser(outcome: 'answer' | 'throw') {
    const local = createLocalAnalyser();
    let entered!: () => void;
    let release!: () => void;
    const calls: string[] = [];
    const analyser: Analyser = {
      name: 'held',
      async analyse(input) {
        calls.push(input.transcript);
        entered();
        await new Promise<void>((r) => (release = r));
        if (outcome === 'throw') throw new Error('analysis service unavailable');
        return local.analyse(input);
      },
    };
    const started = new Promise<void>((r) => (entered = r));
    return { analyser, started, release: () => release(), calls };
  }

  async function answeredCallUnderAnalysis(outcome: 'answer' | 'throw') {
    t.clock.set(new Date('2025-09-01T12:00:00.000Z'));
    const held = heldAnalyser(outcome);
    const sim = manualSimulator(t.clock, { callMs: 10_000, ringMs: 1_000 });
    const worker = testWorker(t.deps, { providers: sim.registry, analyser: held.analyser });
    const { batch } = await insertBatch(t.deps, a, {
      contacts: 1,
      batch: { recordingEnabled: true },
      callOverrides: () => ({ status: 'queued', phoneNumber: phoneEndingIn(4) }),
    });
    await worker.runOnce();
    await sim.dialled(1);
    sim.timers.advance(2_000);
    await worker.settle();
    // A call in flight has nothing to analyse yet.
    expect((await row(batch.id)).status).toBe('in_progress');
    expect((await row(batch.id)).transcriptStatus).toBeNull();

    sim.timers.advance(8_000); // the call ends; analysis starts and is held
    await held.started;
    const during = await row(batch.id);
    expect([during.status, during.transcriptStatus, during.summary, during.outcomes]).toEqual(['completed', 'processing', null, null]);
    expect(during.llmTranscript).toMatch(/^Agent: /);
    expect(held.calls).toEqual([during.llmTranscript]);
    const listed = await results(batch.id, '?transcript_status=processing');
    expect(listed.body.data.items.map((c: { call_id: string }) => c.call_id)).toEqual([during.id]);
    expect(listed.body.data.items[0]).toMatchObject({ status: 'completed', transcript_status: 'processing', summary: null, outcomes: null });
    expect(await logged(during.id)).toEqual(['pending', 'processing']);

    held.release();
    await worker.settle();
    return { batchId: batch.id, callId: during.id };
  }

  it('ready with summary and outcomes once the analyser answers', async () => {
    const { batchId, callId } = await answeredCallUnderAnalysis('answer');
    const done = await row(batchId);
    expect(done.transcriptStatus).toBe('ready');
    expect(done.summary).toMatch(/^Called Contact 1/);
    expect(Object.keys(done.outcomes as object).sort()).toEqual(['callback_requested', 'interested']);
    expect(await logged(callId)).toEqual(['pending', 'processing', 'ready']);
    expect((await results(batchId, '?transcript_status=ready')).body.data.items).toHaveLength(1);
    expect(done.leaseOwner).toBeNull();
    await expectConsistentBatch(t.deps, batchId);
  });

  it('failed, without summary or outcomes, when the analyser throws; the call itself stays completed', async () => {
    const { batchId, callId } = await answeredCallUnderAnalysis('throw');
    const done = await row(batchId);
    expect([done.status, done.transcriptStatus, done.summary, done.outcomes]).toEqual(['completed', 'failed', null, null]);
    expect(done.llmTranscript).toMatch(/^Agent: /);
    expect(done.leaseOwner).toBeNull();
    expect(await logged(callId)).toEqual(['pending', 'processing', 'failed']);
    const failed = await results(batchId, '?transcript_status=failed');
    expect(failed.body.data.items).toHaveLength(1);
    expect(failed.body.data.items[0]).toMatchObject({
      call_id: callId,
      status: 'completed',
      transcript_status: 'failed',
      summary: null,
      outcomes: null,
    });
    expect((await expectConsistentBatch(t.deps, batchId)).batch.status).toBe('completed');
  });
});
