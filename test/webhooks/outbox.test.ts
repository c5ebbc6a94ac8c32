import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { insertWebhookBatch } from '../helpers/webhook-fixtures.ts';
import { enqueueBatchWebhooks, enqueueCallWebhooks, enqueueWebhook } from '../../src/services/webhooks/outbox.ts';
import { callWebhookTypes } from '../../src/services/webhooks/events.ts';
import { withSqlTransaction } from '../../src/db/sql-transaction.ts';
import { applyCallWrites, type CallWrite } from '../../src/services/calls/call-transitions.ts';
import { BATCH_DETAILS_FIELDS, CALL_RECORD_FIELDS } from '../../src/services/representations.ts';

let t: TestApp;
let a: SeededAccount;
beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount();
});
afterAll(() => t.close());

const rows = (batchId: string) => t.deps.db.prisma.webhookDelivery.findMany({ where: { batchId }, orderBy: { id: 'asc' } });

describe('webhook outbox', () => {
  it('commits with the state change, and rolls back with it', async () => {
    const { batch } = await insertWebhookBatch(t.deps, a, { callbackUrl: 'https://hooks.example.com/in' });
    const at = t.clock.now();
    await t.deps.db.prisma.$transaction(async (tx) => {
      await tx.batch.update({ where: { id: batch.id }, data: { status: 'running', startedAt: at } });
      const id = await enqueueWebhook(tx, {
        accountId: a.account.id,
        batchId: batch.id,
        callbackUrl: batch.callbackUrl,
        type: 'batch.started',
        data: { batch_id: batch.id },
        at,
      });
      expect(id).toMatch(/^msg_/);
    });
    await expect(
      t.deps.db.prisma.$transaction(async (tx) => {
        await tx.batch.update({ where: { id: batch.id }, data: { status: 'cancelled' } });
        await enqueueWebhook(tx, {
          accountId: a.account.id,
          batchId: batch.id,
          callbackUrl: batch.callbackUrl,
          type: 'batch.cancelled',
          data: {},
          at,
        });
        throw new Error('crash before commit');
      }),
    ).rejects.toThrow('crash before commit');
    const queued = await rows(batch.id);
    expect(queued.map((r) => r.eventType)).toEqual(['batch.started']);
    expect(queued[0]).toMatchObject({ status: 'pending', attempts: 0, url: 'https://hooks.example.com/in', accountId: a.account.id });
    expect(queued[0]!.nextAttemptAt.getTime()).toBe(at.getTime());
    expect(queued[0]!.payload).toEqual({ id: queued[0]!.id, type: 'batch.started', created_at: at.toISOString(), data: { batch_id: batch.id } });
    expect((await t.deps.db.prisma.batch.findUnique({ where: { id: batch.id } }))!.status).toBe('running');
  });

  it('queues nothing for a batch without callback_url, or for another account', async () => {
    const { batch } = await insertWebhookBatch(t.deps, a, { callbackUrl: null });
    const at = t.clock.now();
    await t.deps.db.prisma.$transaction(async (tx) => {
      expect(
        await enqueueWebhook(tx, { accountId: a.account.id, batchId: batch.id, callbackUrl: null, type: 'batch.started', data: {}, at }),
      ).toBeNull();
      // Even when the caller believes there is a URL, the batch row decides.
      expect(
        await enqueueWebhook(tx, {
          accountId: a.account.id,
          batchId: batch.id,
          callbackUrl: 'https://stale.example.com',
          type: 'batch.started',
          data: {},
          at,
        }),
      ).toBeNull();
    });
    const other = await insertWebhookBatch(t.deps, a, { callbackUrl: 'https://hooks.example.com/in' });
    await t.deps.db.prisma.$transaction(async (tx) => {
      expect(
        await enqueueWebhook(tx, {
          accountId: 'acc_someone_else',
          batchId: other.batch.id,
          callbackUrl: 'https://x.example.com',
          type: 'batch.started',
          data: {},
          at,
        }),
      ).toBeNull();
    });
    expect(await rows(batch.id)).toHaveLength(0);
    expect(await rows(other.batch.id)).toHaveLength(0);
  });

  it('builds batch and call events inside a raw-driver transaction with the REST field names', async () => {
    const { batch, calls } = await insertWebhookBatch(t.deps, a, { callbackUrl: 'https://hooks.example.com/in', calls: 3 });
    const at = t.clock.now();
    await withSqlTransaction(t.deps.db, async (tx) => {
      await tx.query(
        `UPDATE batches SET status = 'running', started_at = $2::timestamptz, queued = 0, completed = 1, failed = 1, in_progress = 1 WHERE id = $1`,
        [batch.id, at.toISOString()],
      );
      await tx.query(
        `UPDATE calls SET status = 'completed', hangup_by = 'user', disconnect_reason = 'normal', duration_seconds = 42, answer_duration_seconds = 30,
                "timestamp" = $2::timestamptz, completed_at = $2::timestamptz, transcript_status = 'ready', summary = 'Wants a demo',
                outcomes = '{"interested":"interested","callback_requested":"no"}', recording_available = true, llm_transcript = 'Agent: hi', dialed_number = phone_number
          WHERE id = $1`,
        [calls[0]!.id, at.toISOString()],
      );
      await tx.query(`UPDATE calls SET status = 'no_answer', disconnect_reason = 'no_answer', completed_at = $2::timestamptz WHERE id = $1`, [
        calls[1]!.id,
        at.toISOString(),
      ]);
      await enqueueBatchWebhooks(tx, [{ type: 'batch.started', batchId: batch.id }], at);
      const ids = await enqueueCallWebhooks(
        tx,
        t.deps,
        [
          ...callWebhookTypes('in_progress', 'completed', 'ready').map((type) => ({ type, callId: calls[0]!.id })),
          ...callWebhookTypes('ringing', 'no_answer').map((type) => ({ type, callId: calls[1]!.id })),
        ],
        at,
      );
      expect(ids).toHaveLength(3);
    });
    const queued = await rows(batch.id);
    expect(queued.map((r) => r.eventType)).toEqual(['batch.started', 'call.completed', 'call.analyzed', 'call.failed']);
    const started = queued[0]!.payload as any;
    expect(Object.keys(started.data).sort()).toEqual([...BATCH_DETAILS_FIELDS].sort());
    expect(started.data).toMatchObject({
      batch_id: batch.id,
      status: 'running',
      start_mode: 'immediate',
      timezone: 'Europe/Berlin',
      started_at: at.toISOString(),
      completed_at: null,
      in_progress: 1,
      callbacks: 0,
    });
    const completed = queued[1]!.payload as any;
    expect(Object.keys(completed.data).sort()).toEqual([...CALL_RECORD_FIELDS].sort());
    expect(completed.data).toMatchObject({
      call_id: calls[0]!.id,
      batch_id: batch.id,
      contact_id: 'ext-1',
      external_id: 'ext-1',
      phone_number: '+14155550100',
      agent_id: a.agent.id,
      agent_name: 'Sales Agent',
      version_id: a.version.id,
      version_name: 'v1',
      voice: 'verse',
      status: 'completed',
      call_status: 'completed',
      transcript_status: 'ready',
      duration_seconds: 42,
      answer_duration_seconds: 30,
      timestamp: at.toISOString(),
      completed_at: at.toISOString(),
      hangup_by: 'user',
      disconnect_reason: 'normal',
      summary: 'Wants a demo',
      outcomes: { interested: 'interested', callback_requested: 'no' },
      recording_available: true,
      llm_transcript: 'Agent: hi',
    });
    expect(completed.data.recording_url).toMatch(new RegExp(`/recordings/${calls[0]!.id}\\.wav\\?expires=\\d+&signature=`));
    const failed = queued[3]!.payload as any;
    expect(failed.data).toMatchObject({ call_id: calls[1]!.id, status: 'no_answer', reason: 'no_answer', recording_url: null, summary: null });
  });

  it('queues call.completed with the write that settles the analysis, carrying summary, outcomes and recording', async () => {
    const { batch, calls } = await insertWebhookBatch(t.deps, a, { callbackUrl: 'https://hooks.example.com/in', calls: 2 });
    const [answered, unanswered] = calls as [(typeof calls)[0], (typeof calls)[0]];
    await t.deps.db.prisma.call.updateMany({ where: { batchId: batch.id }, data: { status: 'in_progress', leaseOwner: 'w1' } });
    await t.deps.db.prisma.batch.update({ where: { id: batch.id }, data: { status: 'running', queued: 0, inProgress: 2 } });
    const at = t.clock.now();
    const ref = (id: string) => ({ callId: id, batchId: batch.id, accountId: a.account.id, owner: 'w1' });
    const apply = (w: CallWrite) => applyCallWrites(t.deps, [w], at);
    const callRows = async () => (await rows(batch.id)).filter((r) => r.eventType.startsWith('call.'));
    const types = async () => (await callRows()).map((r) => r.eventType);

    // The answered call ends with its analysis to come; the other one ends unanswered.
    await apply({
      ...ref(answered.id),
      from: 'in_progress',
      to: 'completed',
      events: [{ from: 'in_progress', to: 'completed', at }],
      set: { completedAt: at, durationSeconds: 40, transcriptStatus: 'pending', llmTranscript: 'Agent: hi' },
    });
    await apply({
      ...ref(unanswered.id),
      from: 'in_progress',
      to: 'no_answer',
      events: [{ from: 'in_progress', to: 'no_answer', at }],
      set: { completedAt: at, disconnectReason: 'no_answer' },
      releaseLease: true,
    });
    expect(await types()).toEqual(['call.failed']);
    // Analysis starts, the recording arrives with it: still nothing for the answered call.
    const wav = { contentType: 'audio/wav', data: new Uint8Array([82, 73, 70, 70]) };
    await apply({
      ...ref(answered.id),
      from: 'completed',
      to: 'completed',
      events: [],
      set: { transcriptStatus: 'processing', recordingAvailable: true },
      recording: wav,
    });
    expect(await types()).toEqual(['call.failed']);
    // The analysis settles: the call is announced now, with everything, then the analysis.
    await apply({
      ...ref(answered.id),
      from: 'completed',
      to: 'completed',
      events: [],
      set: { transcriptStatus: 'ready', summary: 'Wants a demo', outcomes: { interested: 'yes' } },
      releaseLease: true,
    });
    const queued = await callRows();
    expect(queued.map((r) => r.eventType)).toEqual(['call.failed', 'call.completed', 'call.analyzed']);
    // The batch closed when its last call ended, before the analysis settled.
    expect((await rows(batch.id)).map((r) => r.eventType)).toEqual(['call.failed', 'batch.completed', 'call.completed', 'call.analyzed']);
    const completed = (queued[1]!.payload as any).data;
    expect(completed).toMatchObject({
      call_id: answered.id,
      status: 'completed',
      transcript_status: 'ready',
      summary: 'Wants a demo',
      outcomes: { interested: 'yes' },
      recording_available: true,
      llm_transcript: 'Agent: hi',
    });
    expect(completed.recording_url).toMatch(new RegExp(`/recordings/${answered.id}\\.wav\\?expires=\\d+&signature=`));
    expect((queued[2]!.payload as any).data).toEqual(completed);
    expect((queued[0]!.payload as any).data).toMatchObject({ call_id: unanswered.id, reason: 'no_answer', summary: null });
  });

  it('maps call writes to events: call.completed waits for the analysis to settle', () => {
    // An answered call ending with its analysis to come: nothing yet, whatever the provider.
    expect(callWebhookTypes('in_progress', 'completed', 'pending')).toEqual([]);
    expect(callWebhookTypes('answered', 'completed', 'processing')).toEqual([]);
    expect(callWebhookTypes('completed', 'completed', 'processing')).toEqual([]);
    // The write that settles it announces the call, then the analysis.
    expect(callWebhookTypes('completed', 'completed', 'ready')).toEqual(['call.completed', 'call.analyzed']);
    expect(callWebhookTypes('completed', 'completed', 'failed')).toEqual(['call.completed', 'call.analyzed']);
    // Ending with the analysis settled in the same write (a provider that analyses itself, or an
    // answer without a transcript), or with no analysis announced: at once.
    expect(callWebhookTypes('in_progress', 'completed', 'ready')).toEqual(['call.completed', 'call.analyzed']);
    expect(callWebhookTypes('in_progress', 'completed', 'failed')).toEqual(['call.completed', 'call.analyzed']);
    expect(callWebhookTypes('in_progress', 'completed')).toEqual(['call.completed']);
    // A completed call's field-only writes without a settling analysis announce nothing again.
    expect(callWebhookTypes('completed', 'completed')).toEqual([]);
    // Unanswered or broken calls: call.failed at the end; an analysis of such a call only says so.
    expect(callWebhookTypes('ringing', 'busy')).toEqual(['call.failed']);
    expect(callWebhookTypes('ringing', 'no_answer')).toEqual(['call.failed']);
    expect(callWebhookTypes('queued', 'failed')).toEqual(['call.failed']);
    expect(callWebhookTypes('answered', 'failed', 'failed')).toEqual(['call.failed', 'call.analyzed']);
    expect(callWebhookTypes('failed', 'failed', 'ready')).toEqual(['call.analyzed']);
    expect(callWebhookTypes('queued', 'cancelled')).toEqual([]);
    expect(callWebhookTypes('answered', 'in_progress')).toEqual([]);
  });
});
