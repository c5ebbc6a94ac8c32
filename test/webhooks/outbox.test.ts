import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { insertWebhookBatch } from '../helpers/webhook-fixtures.ts';
import { enqueueBatchWebhooks, enqueueCallWebhooks, enqueueWebhook } from '../../src/services/webhooks/outbox.ts';
import { callWebhookTypes } from '../../src/services/webhooks/events.ts';
import { withSqlTransaction } from '../../src/services/sql-transaction.ts';
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
      const id = await enqueueWebhook(tx, { accountId: a.account.id, batchId: batch.id, callbackUrl: batch.callbackUrl, type: 'batch.started', data: { batch_id: batch.id }, at });
      expect(id).toMatch(/^msg_/);
    });
    await expect(
      t.deps.db.prisma.$transaction(async (tx) => {
        await tx.batch.update({ where: { id: batch.id }, data: { status: 'cancelled' } });
        await enqueueWebhook(tx, { accountId: a.account.id, batchId: batch.id, callbackUrl: batch.callbackUrl, type: 'batch.cancelled', data: {}, at });
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
      expect(await enqueueWebhook(tx, { accountId: a.account.id, batchId: batch.id, callbackUrl: null, type: 'batch.started', data: {}, at })).toBeNull();
      // Even when the caller believes there is a URL, the batch row decides.
      expect(await enqueueWebhook(tx, { accountId: a.account.id, batchId: batch.id, callbackUrl: 'https://stale.example.com', type: 'batch.started', data: {}, at })).toBeNull();
    });
    const other = await insertWebhookBatch(t.deps, a, { callbackUrl: 'https://hooks.example.com/in' });
    await t.deps.db.prisma.$transaction(async (tx) => {
      expect(await enqueueWebhook(tx, { accountId: 'acc_someone_else', batchId: other.batch.id, callbackUrl: 'https://x.example.com', type: 'batch.started', data: {}, at })).toBeNull();
    });
    expect(await rows(batch.id)).toHaveLength(0);
    expect(await rows(other.batch.id)).toHaveLength(0);
  });

  it('builds batch and call events inside a raw-driver transaction with the REST field names', async () => {
    const { batch, calls } = await insertWebhookBatch(t.deps, a, { callbackUrl: 'https://hooks.example.com/in', calls: 3 });
    const at = t.clock.now();
    await withSqlTransaction(t.deps.db, async (tx) => {
      await tx.query(`UPDATE batches SET status = 'running', started_at = $2::timestamptz, queued = 0, completed = 1, failed = 1, in_progress = 1 WHERE id = $1`, [batch.id, at.toISOString()]);
      await tx.query(
        `UPDATE calls SET status = 'completed', hangup_by = 'user', disconnect_reason = 'normal', duration_seconds = 42, answer_duration_seconds = 30,
                "timestamp" = $2::timestamptz, completed_at = $2::timestamptz, transcript_status = 'ready', summary = 'Wants a demo',
                outcomes = '{"interested":"interested","callback_requested":"no"}', recording_available = true, llm_transcript = 'Agent: hi', dialed_number = phone_number
          WHERE id = $1`,
        [calls[0]!.id, at.toISOString()],
      );
      await tx.query(`UPDATE calls SET status = 'no_answer', disconnect_reason = 'no_answer', completed_at = $2::timestamptz WHERE id = $1`, [calls[1]!.id, at.toISOString()]);
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
    expect(started.data).toMatchObject({ batch_id: batch.id, status: 'running', start_mode: 'immediate', timezone: 'Europe/Berlin', started_at: at.toISOString(), completed_at: null, in_progress: 1, callbacks: 0 });
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

  it('maps call transitions to events', () => {
    expect(callWebhookTypes('in_progress', 'completed')).toEqual(['call.completed']);
    expect(callWebhookTypes('ringing', 'busy')).toEqual(['call.failed']);
    expect(callWebhookTypes('queued', 'failed')).toEqual(['call.failed']);
    expect(callWebhookTypes('queued', 'cancelled')).toEqual([]);
    expect(callWebhookTypes('completed', 'completed', 'ready')).toEqual(['call.analyzed']);
    expect(callWebhookTypes('completed', 'completed', 'processing')).toEqual([]);
    expect(callWebhookTypes('answered', 'in_progress')).toEqual([]);
  });
});
