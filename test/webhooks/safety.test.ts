// With WEBHOOK_ALLOW_PRIVATE off (the default): private targets are refused at batch creation
// (422 detail, nothing stored) and again at delivery (DNS rebinding).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { batchBody, CALL_BATCHES } from '../helpers/batch-requests.ts';
import { insertWebhookBatch } from '../helpers/webhook-fixtures.ts';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';
import { enqueueWebhook } from '../../src/services/webhooks/outbox.ts';
import { deliverDue } from '../../src/services/webhooks/delivery-worker.ts';

let t: TestApp;
let a: SeededAccount;
let rx: Receiver;

beforeAll(async () => {
  t = await createTestApp({ config: { WEBHOOK_ALLOW_PRIVATE: 'false' } });
  a = await t.seedAccount();
  rx = await startReceiver();
});
afterAll(async () => {
  await rx.close();
  await t.close();
});

const stored = async () => ({
  batches: await t.deps.db.prisma.batch.count({ where: { accountId: a.account.id } }),
  calls: await t.deps.db.prisma.call.count({ where: { accountId: a.account.id } }),
});

describe('callback_url safety', () => {
  it.each([
    ['http://127.0.0.1:8080/hook', 'callback_url must not point to a private, loopback or link-local address (127.0.0.1)'],
    ['http://169.254.169.254/latest/meta-data/', 'callback_url must not point to a private, loopback or link-local address (169.254.169.254)'],
    ['http://[::ffff:10.0.0.7]/hook', 'callback_url must not point to a private, loopback or link-local address (::ffff:a00:7)'],
    ['https://localhost/hook', 'callback_url must name a public host (localhost is local or internal)'],
    ['ftp://files.example.com/hook', 'callback_url must use http or https'],
    // The URL parser would drop the CR/LF and check "hooks.example.comevil.internal" as one host.
    ['https://hooks.example.com\r\nevil.internal/hook', 'callback_url must not contain whitespace or control characters'],
    ['https://hooks.example.com/a\tb', 'callback_url must not contain whitespace or control characters'],
    ['https://hooks.example.com/a b', 'callback_url must not contain whitespace or control characters'],
    ['https://hooks.example.com/\u0085', 'callback_url must not contain whitespace or control characters'],
  ])('refuses %s at creation with a 422 detail and stores nothing', async (url, detail) => {
    const before = await stored();
    const post = await t.request('POST', CALL_BATCHES, { key: a.apiKey, body: batchBody(a, { callback_url: url }) });
    expect(post.status).toBe(422);
    expect(post.body).toEqual({ detail });
    const put = await t.request('PUT', CALL_BATCHES, { key: a.apiKey, body: batchBody(a, { callback_url: url, idempotency_key: `k-${url}` }) });
    expect(put.status).toBe(422);
    expect(put.body).toEqual({ detail });
    expect(await stored()).toEqual(before);
  });

  it('refuses it on GraphQL too, and accepts a public URL', async () => {
    const input = {
      agentId: a.agent.id,
      versionId: a.version.id,
      interruption: true,
      useAlternateNumber: false,
      startMode: 'manual',
      scheduleDate: '2030-01-15',
      scheduleTime: '09:30',
      scheduleTimezone: 'America/New_York',
      contacts: [{ contactId: 'c1', phoneNumber: '+14155550123' }],
    };
    const mutation = `mutation($input: CreateCallBatchInput!) { createCallBatch(input: $input) { batchId } }`;
    const refused = await t.gql(mutation, { input: { ...input, callbackUrl: 'http://10.0.0.1/hook' } }, a.apiKey);
    expect(refused.body.errors![0]).toMatchObject({
      message: 'callback_url must not point to a private, loopback or link-local address (10.0.0.1)',
      extensions: { code: 'UNPROCESSABLE' },
    });
    const ok = await t.request('POST', CALL_BATCHES, { key: a.apiKey, body: batchBody(a, { callback_url: 'https://hooks.example.com/in' }) });
    expect(ok.status).toBe(201);
    const batch = await t.deps.db.prisma.batch.findUniqueOrThrow({ where: { id: ok.body.data.batch_id } });
    expect(batch.callbackUrl).toBe('https://hooks.example.com/in');
  });

  it('refuses private targets at delivery time too, including a name that now resolves to loopback', async () => {
    const direct = await insertWebhookBatch(t.deps, a, { callbackUrl: rx.url });
    const named = await insertWebhookBatch(t.deps, a, { callbackUrl: `http://hooks.example.com:${rx.port}/hooks` });
    const at = t.clock.now();
    await t.deps.db.prisma.$transaction(async (tx) => {
      for (const b of [direct.batch, named.batch]) {
        await enqueueWebhook(tx, { accountId: a.account.id, batchId: b.id, callbackUrl: b.callbackUrl, type: 'batch.started', data: {}, at });
      }
    });
    const rebinding = async () => [{ address: '127.0.0.1', family: 4 }];
    const outcomes = await deliverDue(t.deps, { resolver: rebinding, random: () => 0 });
    expect(outcomes.map((o) => [o.result, (o as { error?: string }).error]).sort()).toEqual([
      ['retry', 'callback_url must not point to a private, loopback or link-local address (127.0.0.1)'],
      ['retry', 'callback_url must not resolve to a private, loopback or link-local address (hooks.example.com -> 127.0.0.1)'],
    ]);
    expect(rx.received).toHaveLength(0);
  });
});
