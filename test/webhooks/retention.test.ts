// Outbox retention (WEBHOOK_RETENTION_DAYS): finished deliveries go once their last attempt is older
// than the retention; pending ones, recent ones and the batches' counters stay.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { insertWebhookBatch } from '../helpers/webhook-fixtures.ts';
import { waitFor } from '../helpers/wait.ts';
import { newId } from '../../src/domain/ids.ts';
import { pruneWebhookDeliveries, startWebhookPruner } from '../../src/services/webhooks/prune-deliveries.ts';

let t: TestApp;
let a: SeededAccount;
beforeAll(async () => {
  t = await createTestApp({ config: { WEBHOOK_RETENTION_DAYS: '30' } });
  a = await t.seedAccount();
});
afterAll(() => t.close());

const NOW = new Date('2031-06-30T12:00:00.000Z');
const daysAgo = (d: number) => new Date(NOW.getTime() - d * 86_400_000);

/** One delivery per [status, days since its last attempt]; returns their ids in that order. */
async function deliveries(batchId: string, rows: [status: string, ageDays: number][]): Promise<string[]> {
  const ids = rows.map(() => newId('webhook'));
  await t.deps.db.prisma.webhookDelivery.createMany({
    data: rows.map(([status, age], i) => ({
      id: ids[i]!,
      accountId: a.account.id,
      batchId,
      eventType: 'call.completed',
      payload: { id: ids[i], type: 'call.completed', created_at: daysAgo(age + 1).toISOString(), data: {} },
      url: 'https://hooks.example.com/in',
      status,
      attempts: status === 'pending' ? 0 : 1,
      nextAttemptAt: daysAgo(age),
      deliveredAt: status === 'delivered' ? daysAgo(age) : null,
      createdAt: daysAgo(age + 1),
    })),
  });
  return ids;
}

const remaining = async (batchId: string) =>
  new Set((await t.deps.db.prisma.webhookDelivery.findMany({ where: { batchId }, select: { id: true } })).map((d) => d.id));

describe('webhook delivery retention', () => {
  it('deletes finished deliveries last attempted before the retention, a chunk at a time; keeps pending and recent ones and the counters', async () => {
    t.clock.set(NOW);
    const { batch } = await insertWebhookBatch(t.deps, a, { callbackUrl: 'https://hooks.example.com/in', calls: 0 });
    await t.deps.db.prisma.batch.update({ where: { id: batch.id }, data: { callbacks: 4 } });
    const old = await deliveries(batch.id, [
      ['delivered', 31],
      ['delivered', 400],
      ['failed', 45],
      ['disabled', 30.01],
      ['delivered', 90],
    ]);
    const kept = await deliveries(batch.id, [
      ['pending', 400], // still owed to its receiver, however old
      ['delivered', 29.99],
      ['failed', 1],
      ['pending', 0],
    ]);

    expect(await pruneWebhookDeliveries(t.deps, { chunk: 2 })).toBe(old.length);
    expect(await remaining(batch.id)).toEqual(new Set(kept));
    expect((await t.deps.db.prisma.batch.findUniqueOrThrow({ where: { id: batch.id } })).callbacks).toBe(4);
    expect(await pruneWebhookDeliveries(t.deps)).toBe(0);
  });

  it('keeps everything with a retention of 0', async () => {
    t.clock.set(NOW);
    const { batch } = await insertWebhookBatch(t.deps, a, { callbackUrl: 'https://hooks.example.com/in', calls: 0 });
    const ids = await deliveries(batch.id, [['delivered', 3650]]);
    const keepForever = { ...t.deps, config: { ...t.deps.config, WEBHOOK_RETENTION_DAYS: 0 } };
    expect(await pruneWebhookDeliveries(keepForever)).toBe(0);
    expect(await remaining(batch.id)).toEqual(new Set(ids));
  });

  it('runs in the background loop of every worker process', async () => {
    t.clock.set(NOW);
    const { batch } = await insertWebhookBatch(t.deps, a, { callbackUrl: 'https://hooks.example.com/in', calls: 0 });
    const [, recent] = await deliveries(batch.id, [
      ['delivered', 60],
      ['delivered', 2],
    ]);
    const pruner = startWebhookPruner(t.deps, { firstAfterMs: 0 });
    try {
      await waitFor(async () => (await remaining(batch.id)).size === 1, { what: 'the old delivery pruned' });
      expect(await remaining(batch.id)).toEqual(new Set([recent]));
    } finally {
      await pruner.stop();
    }
  });
});
