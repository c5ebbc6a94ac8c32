// docs/examples/webhook-receiver.mjs, run with plain `node` as the docs say, receives the real,
// signed deliveries of a batch run by a real `npm start`: it prints each event once, acknowledges a
// redelivery without printing it again (also after a secret rotation, when two signatures come), and
// refuses forged, tampered, stale and unsigned requests. The GraphQL it uses is the docs' own
// (webhook-secret.graphql, webhook-deliveries.graphql).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSecret, signedHeaders } from '../../src/services/webhooks/signing.ts';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.ts';
import { waitFor } from '../helpers/wait.ts';
import { exampleOperations, graphqlWithKey } from '../helpers/doc-examples.ts';
import { tempDataDir } from '../helpers/data-dir.ts';

const root = path.resolve(import.meta.dirname, '../..');
const dataDir = tempDataDir('cbs-webhook-receiver-');
let server: ServerProcess;
let key = '';
let secret = '';
let receiver: { child: ChildProcess; url: string; stdout: () => string; stderr: () => string };

const graphql = async (query: string, variables: Record<string, unknown> = {}) => (await graphqlWithKey(server.url, key, query, variables)).data;

async function startExample(env: Record<string, string>) {
  const child = spawn(process.execPath, [path.join(root, 'docs/examples/webhook-receiver.mjs')], {
    cwd: os.tmpdir(),
    env: { PATH: process.env.PATH, ...env, PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  const exited = () => {
    if (child.exitCode !== null) throw new Error(`the receiver exited (${child.exitCode}): ${err}`);
  };
  await waitFor(() => /listening on http:\/\/127\.0\.0\.1:\d+/.test(err), { what: 'the receiver to listen', abortIf: exited });
  const url = `${/listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(err)![1]}/hooks`;
  return { child, url, stdout: () => out, stderr: () => err };
}

/** The events the receiver printed, one JSON line each. */
const printed = () =>
  receiver
    .stdout()
    .trimEnd()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

async function deliveries(batchId: string) {
  return (await graphql(exampleOperations('webhook-deliveries.graphql').get('WebhookDeliveries')!, { id: batchId })).batch;
}

beforeAll(async () => {
  server = await startServerProcess({
    DATA_DIR: dataDir,
    DATABASE_URL: '',
    RUN_WORKER: 'true',
    SIM_CALL_MS: '300',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_POLL_MS: '100',
  });
  await waitFor(() => /sk_[A-Za-z0-9_-]{43}/.test(server.stdout()), { what: 'the demo key' });
  key = /(sk_[A-Za-z0-9_-]{43})/.exec(server.stdout())![1];
  secret = (await graphql(exampleOperations('webhook-secret.graphql').get('WebhookSecret')!)).webhookSecret.secret;
  expect(secret).toMatch(/^whsec_/);
  receiver = await startExample({ WEBHOOK_SECRET: secret });
}, 90_000);

afterAll(async () => {
  receiver?.child.kill('SIGTERM');
  server?.child.kill('SIGTERM');
  await server?.waitForExit();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('the webhook receiver of docs/webhooks.md', () => {
  let batchId = '';

  it('prints every signed event of a batch once, and the service counts each as delivered', async () => {
    // The simulator: numbers ending 0, 1, 2 end no answer, busy, failed; 3 and 4 are answered.
    const contacts = [0, 1, 2, 3, 4].map((d) => ({ contact_id: `w-${d}`, phone_number: `+1415555017${d}` }));
    const res = await fetch(`${server.url}/api/v1/public/call-batches`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        agent_name: 'Demo Agent',
        version_name: 'v1',
        start_mode: 'immediate',
        concurrency: 5,
        interruption: true,
        use_alternate_number: false,
        schedule_date: '2026-11-24',
        schedule_time: '09:00',
        schedule_timezone: 'UTC',
        callback_url: receiver.url,
        contacts,
      }),
    });
    const created = (await res.json()) as any;
    expect(res.status).toBe(201);
    batchId = created.data.batch_id;

    // batch.started, batch.completed, 3 call.failed, 2 call.completed and 2 call.analyzed.
    await waitFor(() => printed().length >= 9, { timeoutMs: 60_000, what: 'nine printed events' });
    // The receiver prints an event before it answers, and the service records the delivery once the
    // answer is in: wait for the ninth record rather than read right after the ninth print.
    let batch: any;
    await waitFor(
      async () => {
        batch = await deliveries(batchId);
        return batch.callbacks >= 9;
      },
      { timeoutMs: 30_000, what: 'nine deliveries recorded' },
    );
    const nodes = batch.webhookDeliveries.edges.map((e: any) => e.node);
    expect(batch.webhookDeliveries.totalCount).toBe(9);
    expect(nodes.every((n: any) => n.status === 'delivered' && n.lastStatusCode === 204)).toBe(true);
    expect(batch.callbacks).toBe(9);

    const events = printed();
    expect(events.map((e) => e.id).sort()).toEqual(nodes.map((n: any) => n.id).sort());
    const types = events.map((e) => e.type).sort();
    expect(types).toEqual([
      'batch.completed',
      'batch.started',
      'call.analyzed',
      'call.analyzed',
      'call.completed',
      'call.completed',
      'call.failed',
      'call.failed',
      'call.failed',
    ]);
    expect(events.every((e) => e.data.batch_id === batchId)).toBe(true);
    expect(receiver.stderr()).not.toMatch(/^(40|41)\d /m);
  }, 90_000);

  it('acknowledges a redelivery (same webhook-id) without printing the event again, also with two signatures after a rotation', async () => {
    expect(batchId).not.toBe('');
    const ops = exampleOperations('webhook-deliveries.graphql');
    const [first, second] = (await deliveries(batchId)).webhookDeliveries.edges.map((e: any) => e.node.id);
    const redeliver = async (id: string) => {
      expect((await graphql(ops.get('RedeliverWebhook')!, { id })).redeliverWebhook).toMatchObject({ id, status: 'pending', attempts: 0 });
      await waitFor(() => receiver.stderr().includes(`duplicate ${id}`), { what: `the redelivery of ${id}` });
      await expect
        .poll(async () => (await deliveries(batchId)).webhookDeliveries.edges.find((e: any) => e.node.id === id).node)
        .toMatchObject({ status: 'delivered', attempts: 1, lastStatusCode: 204 });
    };
    await redeliver(first);

    // While a rotation overlaps both secrets sign; the receiver still has only the old one.
    const rotated = (await graphql(exampleOperations('webhook-secret.graphql').get('RotateWebhookSecret')!)).rotateWebhookSecret;
    expect(rotated.previousSecret).toBe(secret);
    await redeliver(second);
    expect(printed()).toHaveLength(9);
  }, 60_000);

  it('refuses forged, tampered, stale and unsigned requests with 401 or 400 and prints none of them', async () => {
    const event = { id: 'msg_forged', type: 'batch.completed', created_at: new Date().toISOString(), data: { batch_id: batchId } };
    const body = JSON.stringify(event);
    const post = async (headers: Record<string, string>, text = body) => {
      const res = await fetch(receiver.url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: text });
      return res.status;
    };
    const now = new Date();
    expect(await post({ ...signedHeaders([generateSecret()], event.id, now, body) }), 'signed with another secret').toBe(401);
    expect(
      await post({ ...signedHeaders([secret], event.id, now, body) }, body.replace('completed', 'cancelled')),
      'body changed after signing',
    ).toBe(401);
    expect(await post({ ...signedHeaders([secret], event.id, new Date(now.getTime() - 10 * 60_000), body) }), 'ten minutes old').toBe(401);
    expect(await post({ ...signedHeaders([secret], event.id, now, body), 'webhook-signature': 'v1,' }), 'empty signature').toBe(401);
    expect(await post({ 'webhook-id': event.id }), 'no timestamp, no signature').toBe(400);
    expect(await post({ ...signedHeaders([secret], event.id, now, 'x'.repeat(2 * 1024 * 1024)) }, 'x'.repeat(2 * 1024 * 1024)), 'over 1 MiB').toBe(
      413,
    );
    expect(printed().some((e) => e.id === 'msg_forged')).toBe(false);
    expect(printed()).toHaveLength(9);
    // The genuine article passes: it is the signature, not the address, that was refused.
    expect(await post({ ...signedHeaders([secret], event.id, now, body) })).toBe(204);
    await waitFor(() => printed().some((e) => e.id === 'msg_forged'), { what: 'the correctly signed event' });
  });
});
