// A hung receiver is cut at the configured WEBHOOK_TIMEOUT_MS (1 s here), not at the 10 s default
// (timed project: a wall-clock budget, measured alone). The rest of delivery: delivery.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { startReceiver } from '../helpers/webhook-receiver.ts';
import { insertWebhookBatch } from '../helpers/webhook-fixtures.ts';
import { enqueueWebhook } from '../../src/services/webhooks/outbox.ts';
import { deliverDue } from '../../src/services/webhooks/delivery-worker.ts';

let t: TestApp;
let a: SeededAccount;
beforeAll(async () => {
  t = await createTestApp({ config: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_TIMEOUT_MS: '1000' } });
  a = await t.seedAccount();
});
afterAll(() => t.close());

describe('webhook delivery to a hung receiver', () => {
  it('gives up at the configured timeout', async () => {
    const rx = await startReceiver();
    try {
      rx.setHandler(() => 'hang');
      const { batch } = await insertWebhookBatch(t.deps, a, { callbackUrl: rx.url });
      await t.deps.db.prisma.$transaction((tx) =>
        enqueueWebhook(tx, {
          accountId: a.account.id,
          batchId: batch.id,
          callbackUrl: rx.url,
          type: 'batch.started',
          data: { batch_id: batch.id, status: 'running' },
          at: t.clock.now(),
        }),
      );
      const started = Date.now();
      const [timedOut] = await deliverDue(t.deps, { random: () => 0, limit: 50 });
      expect(timedOut).toMatchObject({ result: 'retry', statusCode: null, error: 'timed out after 1000 ms' });
      // Cut at the configured 1 s, not at the 10 s default (and with room for a busy machine).
      expect(Date.now() - started).toBeLessThan(8_000);
    } finally {
      await rx.close();
    }
  });
});
