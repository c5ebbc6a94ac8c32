// Revoking a key, or turning an account's API access off, ends every subscription and socket
// authenticated with it within a few seconds: WebSocket sockets close with 4403, SSE streams end
// with one UNAUTHENTICATED error, also when the change is made through another API instance.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type App } from '../../src/app.ts';
import { issueApiKey } from '../../src/services/auth/api-keys.ts';
import { REVOKED_MESSAGE } from '../../src/graphql/plugins/end-revoked-subscriptions.ts';
import { ADMIN_TOKEN, createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { wsClient } from '../helpers/ws-client.ts';
import { sseStream, wsStream, type Stream } from '../helpers/subscriptions.ts';
import { batchBody, CALL_BATCHES } from '../helpers/batch-requests.ts';

const RECHECK_MS = 200;
// The sweep runs every 200 ms here; the deadline is for a loaded 2-core machine.
const ENDED_WITHIN_MS = 15_000;

let t: TestApp;
let other: App;
let otherUrl: string;

beforeAll(async () => {
  t = await createTestApp({ config: { CREDENTIAL_RECHECK_MS: String(RECHECK_MS) } });
  await t.app.listen();
  // A second API instance on the same database: no memory shared with the first but the database.
  other = buildApp(t.deps);
  otherUrl = await other.listen();
});
afterAll(async () => {
  await other.stop();
  await t.close();
});

const ACCOUNT_BATCHES = 'subscription { accountBatches { batchId status } }';

async function adminGql(query: string, variables: Record<string, unknown>) {
  const r = await t.gql(query, variables, ADMIN_TOKEN);
  expect(r.body.errors).toBeUndefined();
  return r.body.data;
}

const revoke = (id: string) => adminGql('mutation($id: ID!) { adminRevokeApiKey(id: $id) }', { id });

/** An account with two keys: the first is watched (and later revoked), the second creates batches. */
async function accountWithTwoKeys(): Promise<SeededAccount & { watchedKeyId: string; creatorKey: string }> {
  const a = await t.seedAccount({ limits: { rateLimitPerMinute: 10_000 } });
  const watched = await t.deps.db.prisma.apiKey.findFirstOrThrow({ where: { accountId: a.account.id } });
  const creator = await issueApiKey(t.deps.db, a.account.id);
  return { ...a, watchedKeyId: watched.id, creatorKey: creator.apiKey };
}

async function createBatch(a: SeededAccount, key: string): Promise<string> {
  const r = await t.request('POST', CALL_BATCHES, { key, body: batchBody(a, { start_mode: 'manual' }) });
  expect(r.status).toBe(201);
  return r.body.data.batch_id;
}

/** Creates batches until the stream reports one (the subscription has no initial value to wait for). */
async function expectLive(stream: Stream<{ accountBatches: { batchId: string } }>, a: SeededAccount, key: string) {
  const deadline = Date.now() + ENDED_WITHIN_MS;
  for (;;) {
    const id = await createBatch(a, key);
    try {
      await stream.until((v) => v.accountBatches.batchId === id, 1_000);
      return;
    } catch (e) {
      if (Date.now() > deadline) throw e;
    }
  }
}

describe('a revoked key ends what it opened', () => {
  it('WebSocket: the socket closes with 4403 and nothing more arrives', async () => {
    const a = await accountWithTwoKeys();
    const client = wsClient(otherUrl, `Bearer ${a.apiKey}`);
    let closeCode: number | undefined;
    client.on('closed', (e) => (closeCode = (e as { code?: number }).code));
    const stream = wsStream(client, ACCOUNT_BATCHES);
    try {
      await expectLive(stream, a, a.creatorKey);
      // Revoked through the first instance; the socket is on the second.
      await revoke(a.watchedKeyId);
      await expect(
        Promise.race([stream.done, new Promise((_, no) => setTimeout(() => no(new Error('still open')), ENDED_WITHIN_MS))]),
      ).resolves.toBeUndefined();
      expect(closeCode).toBe(4403);
      const seen = stream.results.length;
      await createBatch(a, a.creatorKey);
      // The account's other key still works and its batch is not delivered to the closed stream.
      expect(stream.results.length).toBe(seen);
    } finally {
      stream.close();
      await client.dispose();
    }
  });

  it('SSE: the stream ends with one UNAUTHENTICATED error', async () => {
    const a = await accountWithTwoKeys();
    const stream = sseStream<{ accountBatches: { batchId: string } }>(fetch, otherUrl, ACCOUNT_BATCHES, undefined, a.apiKey);
    try {
      await expectLive(stream, a, a.creatorKey);
      await revoke(a.watchedKeyId);
      const errors = await stream.firstError(ENDED_WITHIN_MS);
      expect(errors[0]).toMatchObject({ message: REVOKED_MESSAGE, extensions: { code: 'UNAUTHENTICATED' } });
      await stream.done;
    } finally {
      stream.close();
    }
  });

  it('turning the account’s API access off ends its sockets and streams', async () => {
    const a = await accountWithTwoKeys();
    const client = wsClient(otherUrl, `Bearer ${a.apiKey}`);
    let closeCode: number | undefined;
    client.on('closed', (e) => (closeCode = (e as { code?: number }).code));
    const ws = wsStream(client, ACCOUNT_BATCHES);
    const sse = sseStream<{ accountBatches: { batchId: string } }>(fetch, otherUrl, ACCOUNT_BATCHES, undefined, a.apiKey);
    try {
      await expectLive(ws, a, a.creatorKey);
      await expectLive(sse, a, a.creatorKey);
      await adminGql('mutation($id: ID!) { adminUpdateAccount(id: $id, input: { apiAccessEnabled: false }) { id } }', { id: a.account.id });
      await sse.firstError(ENDED_WITHIN_MS);
      await expect(
        Promise.race([ws.done, new Promise((_, no) => setTimeout(() => no(new Error('still open')), ENDED_WITHIN_MS))]),
      ).resolves.toBeUndefined();
      expect(closeCode).toBe(4403);
    } finally {
      ws.close();
      sse.close();
      await client.dispose();
    }
  });

  it('another account’s sessions are untouched', async () => {
    const a = await accountWithTwoKeys();
    const b = await accountWithTwoKeys();
    const client = wsClient(otherUrl, `Bearer ${b.apiKey}`);
    const stream = wsStream(client, ACCOUNT_BATCHES);
    const revoked = sseStream<{ accountBatches: { batchId: string } }>(fetch, otherUrl, ACCOUNT_BATCHES, undefined, a.apiKey);
    try {
      await expectLive(stream, b, b.creatorKey);
      await expectLive(revoked, a, a.creatorKey);
      await revoke(a.watchedKeyId);
      // Once the sweep has ended a's stream, b's subscription still delivers.
      await revoked.firstError(ENDED_WITHIN_MS);
      await expectLive(stream, b, b.creatorKey);
      expect(stream.results.every((r) => !r.errors)).toBe(true);
    } finally {
      stream.close();
      revoked.close();
      await client.dispose();
    }
  });
});
