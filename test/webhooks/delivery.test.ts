// Delivery against a real HTTP receiver on 127.0.0.1 (allow-private on), time moved by the test clock.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';
import { insertWebhookBatch } from '../helpers/webhook-fixtures.ts';
import { waitFor } from '../helpers/wait.ts';
import { enqueueCallWebhooks, enqueueWebhook } from '../../src/services/webhooks/outbox.ts';
import { withSqlTransaction } from '../../src/db/sql-transaction.ts';
import { WEBHOOK_RECORDING_URL_TTL_SECONDS } from '../../src/services/webhooks/payload-links.ts';
import { deliverDue, leaseDueDeliveries, startWebhookDeliveryWorker } from '../../src/services/webhooks/delivery-worker.ts';
import { rotateWebhookSecret, webhookSecret } from '../../src/services/webhooks/secrets.ts';
import { verifyWebhook } from '../../src/services/webhooks/verify.ts';
import type { WebhookEventType } from '../../src/services/webhooks/events.ts';

let t: TestApp;
let a: SeededAccount;
let rx: Receiver;
const noJitter = () => 0;

beforeAll(async () => {
  t = await createTestApp({ config: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_TIMEOUT_MS: '1000' } });
  a = await t.seedAccount();
});
afterAll(() => t.close());
beforeEach(async () => {
  // Frozen at real time: signatures stay within the reference library's tolerance, and only the test moves time.
  t.clock.set(new Date());
  rx = await startReceiver();
});
afterEach(async () => {
  await rx.close();
  // Each test sees only its own deliveries.
  await t.deps.db.prisma.webhookDelivery.updateMany({ where: { status: 'pending' }, data: { status: 'failed' } });
});

async function batchWith(url: string | null = rx.url) {
  return (await insertWebhookBatch(t.deps, a, { callbackUrl: url })).batch;
}

/** A state change and its event, in one transaction (what the worker and batch operations do). */
async function change(batchId: string, type: WebhookEventType, status: string, url: string | null = rx.url) {
  const at = t.clock.now();
  return t.deps.db.prisma.$transaction(async (tx) => {
    await tx.batch.update({ where: { id: batchId }, data: { status } });
    return enqueueWebhook(tx, { accountId: a.account.id, batchId, callbackUrl: url, type, data: { batch_id: batchId, status }, at });
  });
}

const delivery = (id: string) => t.deps.db.prisma.webhookDelivery.findUniqueOrThrow({ where: { id } });
const callbacks = async (batchId: string) => (await t.deps.db.prisma.batch.findUniqueOrThrow({ where: { id: batchId } })).callbacks;
const run = () => deliverDue(t.deps, { random: noJitter, limit: 50 });

describe('webhook delivery', () => {
  it('POSTs the event signed per Standard Webhooks (verified by the reference library) and counts it', async () => {
    const batch = await batchWith();
    const id = (await change(batch.id, 'batch.started', 'running'))!;
    expect(await run()).toEqual([{ id, result: 'delivered', statusCode: 200 }]);

    expect(rx.received).toHaveLength(1);
    const r = rx.received[0]!;
    const { secret } = await webhookSecret(t.deps, a.account.id);
    expect(secret).toMatch(/^whsec_/);
    const event = new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as any;
    expect(event).toMatchObject({ id, type: 'batch.started', data: { batch_id: batch.id, status: 'running' } });
    expect(Object.keys(event)).toEqual(['id', 'type', 'created_at', 'data']);
    expect(r.headers['webhook-id']).toBe(id);
    expect(r.headers['content-type']).toBe('application/json');
    expect(verifyWebhook(secret, r.headers as Record<string, string>, r.body)).toEqual(event);

    expect(await delivery(id)).toMatchObject({ status: 'delivered', attempts: 1, lastStatusCode: 200, lastError: null, leaseOwner: null });
    expect(await callbacks(batch.id)).toBe(1);
    // Nothing is due any more.
    t.clock.advance(48 * 3_600_000);
    expect(await run()).toEqual([]);
    expect(rx.received).toHaveLength(1);
  });

  it('retries a failing receiver with backoff; after success is recorded the event never comes again', async () => {
    rx.setHandler((_r, n) => (n <= 3 ? { status: 500, body: 'boom' } : { status: 204 }));
    const batch = await batchWith();
    const id = (await change(batch.id, 'batch.completed', 'completed'))!;

    expect((await run())[0]).toMatchObject({ result: 'retry', statusCode: 500, error: 'HTTP 500: boom' });
    expect(await run()).toEqual([]); // not due before the 5 s backoff
    const waits = [5_000, 300_000, 1_800_000];
    for (const [i, wait] of waits.entries()) {
      const before = (await delivery(id)).nextAttemptAt.getTime() - t.clock.now().getTime();
      expect(before).toBe(wait);
      t.clock.advance(wait);
      const [outcome] = await run();
      expect(outcome!.result).toBe(i < 2 ? 'retry' : 'delivered');
    }
    expect(rx.received).toHaveLength(4);
    expect(new Set(rx.received.map((r) => r.headers['webhook-id']))).toEqual(new Set([id]));
    expect(await delivery(id)).toMatchObject({ status: 'delivered', attempts: 4, lastStatusCode: 204 });
    expect(await callbacks(batch.id)).toBe(1);

    for (let i = 0; i < 5; i++) {
      t.clock.advance(12 * 3_600_000);
      await run();
    }
    expect(rx.received).toHaveLength(4);
  });

  it('gives up after the schedule is exhausted (failed), and redeliverWebhook re-queues it', async () => {
    rx.setHandler(() => ({ status: 503 }));
    const batch = await batchWith();
    const id = (await change(batch.id, 'batch.cancelled', 'cancelled'))!;
    await run();
    for (let i = 0; i < 6; i++) {
      t.clock.advance(11 * 3_600_000);
      await run();
    }
    expect(rx.received).toHaveLength(7);
    expect(await delivery(id)).toMatchObject({ status: 'failed', attempts: 7, lastStatusCode: 503, lastError: 'HTTP 503' });
    t.clock.advance(48 * 3_600_000);
    expect(await run()).toEqual([]);

    rx.setHandler(() => ({ status: 200 }));
    const res = await t.gql(`mutation($id: ID!) { redeliverWebhook(id: $id) { id status attempts nextAttemptAt } }`, { id }, a.apiKey);
    expect(res.body.data.redeliverWebhook).toMatchObject({ id, status: 'pending', attempts: 0 });
    expect(await run()).toEqual([{ id, result: 'delivered', statusCode: 200 }]);
    expect(rx.received.at(-1)!.headers['webhook-id']).toBe(id);
    expect(await callbacks(batch.id)).toBe(1);

    // Redelivering a delivered event sends it again but does not count it twice.
    await t.gql(`mutation($id: ID!) { redeliverWebhook(id: $id) { id } }`, { id }, a.apiKey);
    await run();
    expect(rx.received).toHaveLength(9);
    expect(await callbacks(batch.id)).toBe(1);

    const other = await t.seedAccount();
    const foreign = await t.gql(`mutation($id: ID!) { redeliverWebhook(id: $id) { id } }`, { id }, other.apiKey);
    expect(foreign.body.errors![0].extensions.code).toBe('NOT_FOUND');
  });

  it('a receiver that is down during the batch receives every event once it is back', async () => {
    const batch = await batchWith();
    await rx.stop();
    const ids = [
      await change(batch.id, 'batch.started', 'running'),
      await change(batch.id, 'call.completed', 'running'),
      await change(batch.id, 'call.failed', 'running'),
      await change(batch.id, 'batch.completed', 'completed'),
    ];
    const first = await run();
    expect(first).toHaveLength(4);
    for (const o of first) expect(o).toMatchObject({ result: 'retry', statusCode: null, error: expect.stringContaining('ECONNREFUSED') });
    t.clock.advance(5_000);
    await run();
    expect(rx.received).toHaveLength(0);

    await rx.start();
    t.clock.advance(300_000);
    expect((await run()).map((o) => o.result)).toEqual(['delivered', 'delivered', 'delivered', 'delivered']);
    expect(
      rx
        .bodies()
        .map((b) => b.id)
        .sort(),
    ).toEqual([...ids].sort());
    expect(
      rx
        .bodies()
        .map((b) => b.type)
        .sort(),
    ).toEqual(['batch.completed', 'batch.started', 'call.completed', 'call.failed']);
    expect(await callbacks(batch.id)).toBe(4);
  });

  it('a killed worker loses nothing: after its lease expires the event is sent again with the same webhook-id', async () => {
    rx.setHandler(() => 'hang');
    const batch = await batchWith();
    const id = (await change(batch.id, 'batch.started', 'running'))!;
    // Worker A leases the delivery and starts sending, then dies: nothing is ever recorded.
    const doomed = startWebhookDeliveryWorker(t.deps, { owner: 'worker-a' });
    await until(() => rx.received.length === 1);
    expect((await delivery(id)).leaseOwner).toBe('worker-a');
    // (stop() would wait for the attempt; a killed process doesn't. The hanging request stays unanswered.)
    void doomed.stop();

    rx.setHandler(() => ({ status: 200 }));
    expect(await deliverDue(t.deps, { owner: 'worker-b' })).toEqual([]); // lease still held
    t.clock.advance(t.deps.config.WEBHOOK_LEASE_MS + 1);
    expect(await deliverDue(t.deps, { owner: 'worker-b' })).toEqual([{ id, result: 'delivered', statusCode: 200 }]);
    expect(rx.received.map((r) => r.headers['webhook-id'])).toEqual([id, id]);
    expect(await delivery(id)).toMatchObject({ status: 'delivered', attempts: 2 });
    expect(await callbacks(batch.id)).toBe(1);
  });

  it('410 Gone stops the delivery, the batch’s queued ones, and any further events', async () => {
    rx.setHandler(() => ({ status: 410 }));
    const batch = await batchWith();
    const first = (await change(batch.id, 'batch.started', 'running'))!;
    await run();
    expect(await delivery(first)).toMatchObject({ status: 'disabled', lastStatusCode: 410 });
    expect((await t.deps.db.prisma.batch.findUniqueOrThrow({ where: { id: batch.id } })).callbackUrl).toBeNull();
    // A writer still holding the old URL queues nothing: the batch row decides.
    expect(await change(batch.id, 'batch.completed', 'completed')).toBeNull();
    t.clock.advance(48 * 3_600_000);
    await run();
    expect(rx.received).toHaveLength(1);
  });

  it('410 also disables deliveries of the batch that were waiting', async () => {
    rx.setHandler((_r, n) => (n === 1 ? { status: 500 } : { status: 410 }));
    const batch = await batchWith();
    const a1 = (await change(batch.id, 'batch.started', 'running'))!;
    await run();
    const a2 = (await change(batch.id, 'call.completed', 'running'))!;
    await run();
    expect(await delivery(a1)).toMatchObject({ status: 'disabled', lastStatusCode: 500 });
    expect(await delivery(a2)).toMatchObject({ status: 'disabled', lastStatusCode: 410 });
  });

  it('honours Retry-After (seconds and HTTP date) as the earliest next attempt', async () => {
    rx.setHandler((_r, n) => (n === 1 ? { status: 429, headers: { 'retry-after': '120' } } : { status: 200 }));
    const batch = await batchWith();
    const id = (await change(batch.id, 'batch.started', 'running'))!;
    const t0 = t.clock.now().getTime();
    await run();
    expect((await delivery(id)).nextAttemptAt.getTime() - t0).toBe(120_000);
    t.clock.advance(60_000);
    expect(await run()).toEqual([]);
    t.clock.advance(60_000);
    expect((await run())[0]!.result).toBe('delivered');

    const at = new Date(Math.ceil((t.clock.now().getTime() + 3_600_000) / 1000) * 1000);
    rx.setHandler((_r, n) => (n === 3 ? { status: 503, headers: { 'retry-after': at.toUTCString() } } : { status: 200 }));
    const id2 = (await change(batch.id, 'batch.completed', 'completed'))!;
    await run();
    expect((await delivery(id2)).nextAttemptAt.getTime()).toBe(at.getTime());
  });

  it('does not follow redirects, times out hung receivers, and reads only the start of big responses', async () => {
    const target = await startReceiver();
    try {
      rx.setHandler(() => ({ status: 307, headers: { location: target.url } }));
      const batch = await batchWith();
      const id = (await change(batch.id, 'batch.started', 'running'))!;
      await run();
      expect(target.received).toHaveLength(0);
      expect((await delivery(id)).lastError).toBe(`HTTP 307: redirects are not followed (Location: ${target.url})`);

      rx.setHandler(() => 'hang');
      t.clock.advance(10_000);
      const [timedOut] = await run();
      // Cut by the configured 1 s deadline (how soon: delivery-timeout.timed.test.ts).
      expect(timedOut).toMatchObject({ result: 'retry', statusCode: null, error: 'timed out after 1000 ms' });

      // 64 MiB on offer: the sender hangs up after its cap (MAX_RESPONSE_BYTES) instead of reading
      // it all; what the receiver managed to write is what fits in the socket buffers.
      rx.setHandler(() => ({ status: 200, streamBytes: 64 * 1024 * 1024 }));
      t.clock.advance(400_000);
      expect((await run())[0]).toMatchObject({ result: 'delivered', statusCode: 200 });
      const big = rx.received.at(-1)!.response;
      await big.closed;
      expect(big.finished).toBe(false);
      expect(big.bodyBytesWritten).toBeLessThan(16 * 1024 * 1024);
    } finally {
      await target.close();
    }
  });

  it('keeps only the start of a failing receiver’s big error page', async () => {
    rx.setHandler(() => ({ status: 500, streamBytes: 32 * 1024 * 1024 }));
    const batch = await batchWith();
    const id = (await change(batch.id, 'batch.started', 'running'))!;
    expect((await run())[0]).toMatchObject({ result: 'retry', statusCode: 500 });
    const answer = rx.received[0]!.response;
    await answer.closed;
    expect(answer.finished).toBe(false);
    const { lastError } = await delivery(id);
    expect(lastError).toMatch(/^HTTP 500: x{200}$/);
  });

  it('signs the recording link for each attempt: a retry hours later carries a link that plays', async () => {
    rx.setHandler((_r, n) => (n === 1 ? { status: 503 } : { status: 200 }));
    const { calls } = await insertWebhookBatch(t.deps, a, { callbackUrl: rx.url, calls: 1 });
    const call = calls[0]!;
    await t.deps.db.prisma.call.update({
      where: { id: call.id },
      data: {
        status: 'completed',
        transcriptStatus: 'ready',
        summary: 'ok',
        outcomes: { interested: 'yes' },
        recordingAvailable: true,
        completedAt: t.clock.now(),
      },
    });
    // Base64 through SQL, as the dispatch worker stores audio (PGlite takes no bytea parameters).
    await t.deps.db.prisma.$executeRaw`
      INSERT INTO recordings (call_id, account_id, content_type, data) VALUES (${call.id}, ${a.account.id}, 'audio/wav', decode(${Buffer.from('RIFF....WAVEfmt ').toString('base64')}, 'base64'))`;
    const [id] = await withSqlTransaction(t.deps.db, (tx) =>
      enqueueCallWebhooks(tx, t.deps, [{ type: 'call.completed', callId: call.id }], t.clock.now()),
    );
    const play = async (url: string) => {
      const res = await t.app.fetch(new Request(url));
      return { status: res.status, type: res.headers.get('content-type') };
    };

    expect((await run())[0]).toMatchObject({ id, result: 'retry', statusCode: 503 });
    // The receiver was down for 17 hours (the retry schedule's span): the link queued with the
    // event expired long ago ...
    t.clock.advance(17 * 3_600_000);
    const stored = ((await delivery(id!)).payload as any).data.recording_url as string;
    expect(await play(stored)).toMatchObject({ status: 403 });
    // ... the attempt that gets through carries a fresh one, valid for a day from then.
    expect((await run())[0]).toMatchObject({ id, result: 'delivered' });
    const [first, second] = rx.bodies();
    expect(first!.id).toBe(second!.id);
    expect(rx.received.map((r) => r.headers['webhook-id'])).toEqual([id, id]);
    const link = new URL(second!.data.recording_url);
    expect(link.pathname).toBe(`/recordings/${call.id}.wav`);
    const expires = Number(link.searchParams.get('expires')) * 1000;
    expect(expires - t.clock.now().getTime()).toBeGreaterThanOrEqual(WEBHOOK_RECORDING_URL_TTL_SECONDS * 1000);
    expect(await play(second!.data.recording_url)).toEqual({ status: 200, type: 'audio/wav' });
    t.clock.advance(WEBHOOK_RECORDING_URL_TTL_SECONDS * 1000 - 60_000);
    expect((await play(second!.data.recording_url)).status).toBe(200);
    // Nothing else in the event changed between the attempts.
    expect({ ...second!, data: { ...second!.data, recording_url: null } }).toEqual({ ...first!, data: { ...first!.data, recording_url: null } });
    // The signature covers the body as sent.
    const { secret } = await webhookSecret(t.deps, a.account.id);
    const r = rx.received[1]!;
    const ts = new Date(Number(r.headers['webhook-timestamp']) * 1000);
    expect(r.headers['webhook-signature']).toBe(new Webhook(secret).sign(id!, ts, r.body));
  });

  it('signs with both secrets during a rotation, and only the new one after the overlap', async () => {
    const before = await webhookSecret(t.deps, a.account.id);
    const rotated = await rotateWebhookSecret(t.deps, a.account);
    expect(rotated.secret).not.toBe(before.secret);
    expect(rotated.previousSecret).toBe(before.secret);
    expect(rotated.previousSecretExpiresAt!.getTime() - rotated.rotatedAt!.getTime()).toBe(24 * 3_600_000);

    const batch = await batchWith();
    await change(batch.id, 'batch.started', 'running');
    await run();
    const r = rx.received[0]!;
    expect((r.headers['webhook-signature'] as string).split(' ')).toHaveLength(2);
    // Receivers on either secret accept it (reference library, real timestamp).
    expect(new Webhook(before.secret).verify(r.body, r.headers as Record<string, string>)).toBeTruthy();
    expect(new Webhook(rotated.secret).verify(r.body, r.headers as Record<string, string>)).toBeTruthy();

    t.clock.advance(24 * 3_600_000 + 1000);
    await change(batch.id, 'batch.completed', 'completed');
    await run();
    const late = rx.received[1]!;
    const sigs = (late.headers['webhook-signature'] as string).split(' ');
    expect(sigs).toHaveLength(1);
    // The clock is a day ahead of real time, so compare with the reference signer directly.
    const ts = new Date(Number(late.headers['webhook-timestamp']) * 1000);
    expect(sigs[0]).toBe(new Webhook(rotated.secret).sign(late.headers['webhook-id'] as string, ts, late.body));
    expect((await webhookSecret(t.deps, a.account.id)).previousSecret).toBeNull();
  });

  it('connects to the address it resolved and checked, not to a second DNS answer', async () => {
    const batch = await batchWith(`http://hooks.example.com:${rx.port}/pinned`);
    await change(batch.id, 'batch.started', 'running', batch.callbackUrl);
    let lookups = 0;
    const resolver = async () => {
      lookups += 1;
      return [{ address: '127.0.0.1', family: 4 }];
    };
    // hooks.example.com does not resolve here: only the pinned address makes this connection.
    expect((await deliverDue(t.deps, { resolver }))[0]).toMatchObject({ result: 'delivered' });
    expect(lookups).toBe(1);
    expect(rx.received[0]!.path).toBe('/pinned');
    expect(rx.received[0]!.headers.host).toBe(`hooks.example.com:${rx.port}`);
  });

  it('sends URL credentials as Basic auth and masks them when showing the URL', async () => {
    const url = `http://hook-user:p%40ss@127.0.0.1:${rx.port}/auth`;
    const batch = await batchWith(url);
    await change(batch.id, 'batch.started', 'running', url);
    expect((await run())[0]).toMatchObject({ result: 'delivered' });
    expect(rx.received[0]!.headers.authorization).toBe(`Basic ${Buffer.from('hook-user:p@ss').toString('base64')}`);
    const res = await t.gql(`query($id: ID!) { batch(id: $id) { webhookDeliveries { edges { node { url } } } } }`, { id: batch.id }, a.apiKey);
    expect(res.body.data.batch.webhookDeliveries.edges[0].node.url).toBe(`http://***@127.0.0.1:${rx.port}/auth`);
  });

  it('GraphQL shows a batch’s deliveries', async () => {
    rx.setHandler((_r, n) => (n === 1 ? { status: 502, body: 'bad gateway' } : { status: 200 }));
    const batch = await batchWith();
    const failing = (await change(batch.id, 'batch.started', 'running'))!;
    await run();
    const ok = (await change(batch.id, 'batch.completed', 'completed'))!;
    await run();
    const res = await t.gql(
      `query($id: ID!) { batch(id: $id) { callbacks webhookDeliveries { totalCount edges { node {
         id eventType status attempts lastStatusCode lastError nextAttemptAt deliveredAt createdAt url payload } } } } }`,
      { id: batch.id },
      a.apiKey,
    );
    expect(res.body.errors).toBeUndefined();
    const b = res.body.data.batch;
    expect(b.callbacks).toBe(1);
    expect(b.webhookDeliveries.totalCount).toBe(2);
    const [n1, n2] = b.webhookDeliveries.edges.map((e: any) => e.node);
    expect(n1).toMatchObject({
      id: failing,
      eventType: 'batch.started',
      status: 'pending',
      attempts: 1,
      lastStatusCode: 502,
      lastError: 'HTTP 502: bad gateway',
      deliveredAt: null,
      url: rx.url,
    });
    expect(Date.parse(n1.nextAttemptAt)).toBe(t.clock.now().getTime() + 5_000);
    expect(n2).toMatchObject({ id: ok, status: 'delivered', attempts: 1, lastStatusCode: 200, nextAttemptAt: null });
    expect(n2.deliveredAt).toMatch(/Z$/);
    expect(n2.payload).toMatchObject({ id: ok, type: 'batch.completed' });

    const filtered = await t.gql(
      `query($id: ID!) { batch(id: $id) { webhookDeliveries(status: delivered) { edges { node { id } } } } }`,
      { id: batch.id },
      a.apiKey,
    );
    expect(filtered.body.data.batch.webhookDeliveries.edges.map((e: any) => e.node.id)).toEqual([ok]);
  });

  it('records an attempt it could not sign (unreadable secret) as a failure, sending nothing', async () => {
    const other = await t.seedAccount();
    await t.deps.db.prisma.account.update({
      where: { id: other.account.id },
      data: { webhookSecret: 'enc1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
    });
    const { batch } = await insertWebhookBatch(t.deps, other, { callbackUrl: rx.url });
    const id = (await t.deps.db.prisma.$transaction((tx) =>
      enqueueWebhook(tx, { accountId: other.account.id, batchId: batch.id, callbackUrl: rx.url, type: 'batch.started', data: {}, at: t.clock.now() }),
    ))!;
    expect(await run()).toEqual([
      {
        id,
        result: 'retry',
        statusCode: null,
        error: 'not sent: webhook secret: cannot decrypt (was APP_SECRET changed?)',
        nextAttemptAt: expect.any(Date),
      },
    ]);
    expect(rx.received).toHaveLength(0);
    expect(await delivery(id)).toMatchObject({ status: 'pending', attempts: 1, lastError: expect.stringContaining('cannot decrypt') });
  });

  it('runs as a background loop', async () => {
    const bg = startWebhookDeliveryWorker(t.deps);
    try {
      const batch = await batchWith();
      const id = (await change(batch.id, 'batch.started', 'running'))!;
      await until(async () => (await delivery(id)).status === 'delivered');
      expect(rx.received.map((r) => r.headers['webhook-id'])).toEqual([id]);
    } finally {
      await bg.stop();
    }
  });

  it('leases each due delivery to one worker only', async () => {
    const batch = await batchWith();
    for (let i = 0; i < 5; i++) await change(batch.id, 'call.completed', 'running');
    const [x, y] = await Promise.all([leaseDueDeliveries(t.deps, 'x', 3), leaseDueDeliveries(t.deps, 'y', 3)]);
    const ids = [...x, ...y].map((d) => d.id);
    expect(ids).toHaveLength(5);
    expect(new Set(ids).size).toBe(5);
  });
});

const until = (cond: () => boolean | Promise<boolean>) => waitFor(cond, { intervalMs: 20 });
