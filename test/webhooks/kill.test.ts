// A delivery worker process killed with SIGKILL in the middle of a POST loses nothing: once its
// lease expires, another worker sends the event again with the same webhook-id. Needs PostgreSQL
// (a second process shares the database), so it runs when TEST_DATABASE_URL is set.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { TEST_DATABASE_URL } from '../helpers/database.ts';
import { startServerProcess } from '../helpers/server-process.ts';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';
import { insertWebhookBatch } from '../helpers/webhook-fixtures.ts';
import { waitFor } from '../helpers/wait.ts';
import { enqueueWebhook } from '../../src/services/webhooks/outbox.ts';
import { deliverDue } from '../../src/services/webhooks/delivery-worker.ts';

describe.runIf(TEST_DATABASE_URL)('killed delivery worker process', () => {
  let t: TestApp;
  let a: SeededAccount;
  let rx: Receiver;
  beforeAll(async () => {
    t = await createTestApp({ config: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
    a = await t.seedAccount();
    rx = await startReceiver(() => 'hang');
  });
  afterAll(async () => {
    await rx.close();
    await t.close();
  });

  it('redelivers after SIGKILL with the same webhook-id', async () => {
    const { batch } = await insertWebhookBatch(t.deps, a, { callbackUrl: rx.url, calls: 0 });
    await t.deps.db.prisma.batch.update({ where: { id: batch.id }, data: { status: 'completed' } });
    const id = (await t.deps.db.prisma.$transaction((tx) =>
      enqueueWebhook(tx, {
        accountId: a.account.id,
        batchId: batch.id,
        callbackUrl: rx.url,
        type: 'batch.completed',
        data: { batch_id: batch.id },
        at: t.clock.now(),
      }),
    ))!;

    const server = await startServerProcess({
      DATABASE_URL: t.testDb.url!,
      APP_SECRET: t.deps.appSecret,
      RUN_WORKER: 'true',
      SEED_DEMO: 'false',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_POLL_MS: '20',
      WEBHOOK_TIMEOUT_MS: '15000',
    });
    try {
      const exitedEarly = () => {
        if (server.child.exitCode !== null) throw new Error(`server exited early (${server.child.exitCode})`);
      };
      await waitFor(() => rx.received.length > 0, { what: 'the first attempt', abortIf: exitedEarly });
      expect(rx.received).toHaveLength(1);
      const leased = await t.deps.db.prisma.webhookDelivery.findUniqueOrThrow({ where: { id } });
      expect(leased.leaseOwner).toBeTruthy();
      expect(leased.status).toBe('pending');
    } finally {
      server.child.kill('SIGKILL');
      await server.waitForExit();
    }

    rx.setHandler(() => ({ status: 200 }));
    t.clock.advance(t.deps.config.WEBHOOK_LEASE_MS + 15_000);
    expect(await deliverDue(t.deps)).toEqual([{ id, result: 'delivered', statusCode: 200 }]);
    expect(rx.received.map((r) => r.headers['webhook-id'])).toEqual([id, id]);
    expect((await t.deps.db.prisma.batch.findUniqueOrThrow({ where: { id: batch.id } })).callbacks).toBe(1);
  }, 90_000);
});
