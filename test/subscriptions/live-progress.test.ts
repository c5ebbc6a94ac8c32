// Live progress over both transports, driven by a real dispatch worker with ms-scale simulated
// calls: the first value is the current one, the counters reach the end without polling, every
// value satisfies the sum rule, and subscriptions are authenticated and scoped to the account.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { waitFor } from '../helpers/wait.ts';
import { wsClient } from '../helpers/ws-client.ts';
import { sseStream, sumRuleHolds, wsStream } from '../helpers/subscriptions.ts';
import { batchBody, CALL_BATCHES, makeContacts } from '../helpers/batch-requests.ts';
import { testWorker } from '../helpers/dispatch.ts';
import type { DispatchWorker } from '../../src/dispatch/worker.ts';
import { startReceiver } from '../helpers/webhook-receiver.ts';
import { enqueueWebhook } from '../../src/services/webhooks/outbox.ts';
import { deliverDue } from '../../src/services/webhooks/delivery-worker.ts';

let t: TestApp;
let a: SeededAccount;
let b: SeededAccount;
let url: string;
let worker: DispatchWorker;

const PROGRESS = `subscription($id: ID!) {
  batchProgress(batchId: $id) {
    batchId status queued inProgress completed failed cancelled callbacks acceptedContacts totalContacts updatedAt
  }
}`;

const CALLS = `subscription($id: ID!) {
  callUpdated(batchId: $id) {
    callId batchId seq status transcriptStatus summary outcomes llmTranscript recordingAvailable recordingUrl completedAt
  }
}`;

const ACCOUNT = `subscription { accountBatches { batchId status queued inProgress completed failed cancelled acceptedContacts } }`;

interface Progress {
  batchId: string;
  status: string;
  queued: number;
  inProgress: number;
  completed: number;
  failed: number;
  cancelled: number;
  callbacks: number;
  acceptedContacts: number;
  totalContacts: number;
  updatedAt: string;
}

/** Subscribers the app's event hub holds right now. */
const held = () => {
  const st = t.deps.events.started()?.stats();
  return st ? st.progressSubscribers + st.callSubscribers + st.accountSubscribers : 0;
};

/** The hub's subscribers of a kind now. */
const hubStat = (kind: 'callSubscribers' | 'accountSubscribers') => t.deps.events.started()?.stats()[kind] ?? 0;
/** Waits until the hub holds more subscribers of a kind than `before`: a subscription without an initial value has registered. */
const registered = (kind: 'callSubscribers' | 'accountSubscribers', before: number) =>
  waitFor(() => hubStat(kind) > before, { what: `a new ${kind} entry in the hub` });

const finished = (p: Progress) => p.queued === 0 && p.inProgress === 0 && p.status === 'completed';

async function createBatch(
  acc: SeededAccount,
  n: number,
  startMode: 'manual' | 'immediate',
  prefix = 'c',
  extra: Record<string, unknown> = {},
): Promise<string> {
  const res = await t.request('POST', CALL_BATCHES, {
    key: acc.apiKey,
    body: batchBody(acc, { start_mode: startMode, concurrency: 4, contacts: makeContacts(n, prefix), ...extra }),
  });
  expect(res.status).toBe(201);
  return res.body.data.batch_id;
}

async function start(acc: SeededAccount, id: string) {
  const res = await t.gql('mutation($id: ID!) { startBatch(id: $id) { status } }', { id }, acc.apiKey);
  expect(res.body.errors).toBeUndefined();
}

beforeAll(async () => {
  // Private targets allowed: the callbacks test delivers to a receiver on 127.0.0.1.
  t = await createTestApp({ config: { SIM_CALL_MS: '20', RUN_WORKER: 'false', WEBHOOK_ALLOW_PRIVATE: 'true' } });
  a = await t.seedAccount();
  b = await t.seedAccount();
  url = await t.app.listen();
  worker = testWorker(t.deps);
  worker.start();
});
afterAll(async () => {
  await worker?.stop({ graceMs: 0 });
  await t.close();
});

describe('batchProgress over graphql-ws', () => {
  it('starts with the current value and follows the batch to its end, each value obeying the sum rule', async () => {
    const id = await createBatch(a, 12, 'manual');
    const client = wsClient(url, `Bearer ${a.apiKey}`);
    const s = wsStream<{ batchProgress: Progress }>(client, PROGRESS, { id });
    const first = await s.until(() => true);
    expect(first.batchProgress).toMatchObject({ batchId: id, status: 'paused', queued: 12, completed: 0, acceptedContacts: 12 });

    await start(a, id);
    const last = await s.until((v) => finished(v.batchProgress));
    expect(last.batchProgress.completed + last.batchProgress.failed).toBe(12);

    const values = s.values().map((v) => v.batchProgress);
    expect(values.every(sumRuleHolds)).toBe(true);
    // Something in between was seen live, not just the first and the last value.
    expect(values.length).toBeGreaterThan(2);
    // The batch's own row agrees with the last value.
    const row = await t.deps.db.prisma.batch.findUniqueOrThrow({ where: { id } });
    expect({ completed: row.completed, failed: row.failed, status: row.status }).toEqual({
      completed: last.batchProgress.completed,
      failed: last.batchProgress.failed,
      status: 'completed',
    });
    s.close();
    await client.dispose();
    await waitFor(() => held() === 0);
  });

  it('the batch an event carries is read as it is at that event, its detail fields too', async () => {
    const id = await createBatch(a, 2, 'manual');
    const client = wsClient(url, `Bearer ${a.apiKey}`);
    type WithBatch = { batchProgress: { status: string; batch: { status: string; completedAt: string | null; acceptedContacts: number } } };
    const s = wsStream<WithBatch>(
      client,
      'subscription($id: ID!) { batchProgress(batchId: $id) { status batch { status completedAt acceptedContacts } } }',
      { id },
    );
    const first = await s.until(() => true);
    expect(first.batchProgress.batch).toEqual({ status: 'paused', completedAt: null, acceptedContacts: 2 });
    const cancelled = await t.gql('mutation($id: ID!) { cancelBatch(id: $id) { completedAt } }', { id }, a.apiKey);
    const last = await s.until((v) => v.batchProgress.status === 'cancelled');
    expect(last.batchProgress.batch).toEqual({ status: 'cancelled', completedAt: cancelled.body.data.cancelBatch.completedAt, acceptedContacts: 2 });
    s.close();
    await client.dispose();
  });

  it("refuses another account's batch and an unknown one with NOT_FOUND 'Call batch not found'", async () => {
    const foreign = await createBatch(b, 1, 'manual');
    const client = wsClient(url, `Bearer ${a.apiKey}`);
    for (const id of [foreign, 'sched_00000000000000000000000000000000']) {
      const s = wsStream(client, PROGRESS, { id });
      const errors = await s.firstError();
      expect(errors[0]).toMatchObject({ message: 'Call batch not found', extensions: { code: 'NOT_FOUND' } });
      expect(s.values()).toEqual([]);
    }
    const calls = wsStream(client, CALLS, { id: foreign });
    expect((await calls.firstError())[0]).toMatchObject({ message: 'Call batch not found', extensions: { code: 'NOT_FOUND' } });
    await client.dispose();
  });

  it('closes the socket with 4401 before any subscription for a wrong key', async () => {
    const client = wsClient(url, 'Bearer sk_' + 'y'.repeat(43));
    const s = wsStream(client, PROGRESS, { id: 'sched_x' });
    const errors = await s.firstError();
    expect(errors[0]).toMatchObject({ code: 4401 });
    expect(s.values()).toEqual([]);
    await client.dispose();
  });
});

describe('callUpdated over graphql-ws', () => {
  it("emits each call's status changes with its results once ready", async () => {
    const id = await createBatch(a, 6, 'manual', 'cu');
    const client = wsClient(url, `Bearer ${a.apiKey}`);
    const before = hubStat('callSubscribers');
    const calls = wsStream<{ callUpdated: any }>(client, CALLS, { id });
    const progress = wsStream<{ batchProgress: Progress }>(client, PROGRESS, { id });
    await progress.until(() => true);
    // callUpdated has no initial value: wait until its start (a read of the batch's calls) is done.
    await registered('callSubscribers', before);
    await start(a, id);
    await progress.until((v) => finished(v.batchProgress));
    const dbCalls = await t.deps.db.prisma.call.findMany({ where: { batchId: id }, orderBy: { seq: 'asc' } });
    // Every call's final state arrives, including the analysis of answered calls.
    for (const c of dbCalls) {
      await calls.until(
        (v) =>
          v.callUpdated.callId === c.id &&
          v.callUpdated.status === c.status &&
          (c.transcriptStatus === null || v.callUpdated.transcriptStatus === 'ready'),
      );
    }
    const updates = calls.values().map((v) => v.callUpdated);
    expect(updates.every((u) => u.batchId === id)).toBe(true);
    const answered = updates.filter((u) => u.transcriptStatus === 'ready');
    for (const u of answered) {
      expect(u.summary).toEqual(expect.any(String));
      expect(u.llmTranscript).toEqual(expect.any(String));
      expect(u.outcomes).toEqual(expect.any(Object));
    }
    // Results are null until ready.
    for (const u of updates.filter((x) => x.transcriptStatus !== 'ready')) expect(u.summary).toBeNull();
    // Final state per call matches the database.
    const lastByCall = new Map(updates.map((u) => [u.callId, u]));
    for (const c of dbCalls) expect(lastByCall.get(c.id)?.status).toBe(c.status);
    calls.close();
    progress.close();
    await client.dispose();
  });
});

describe('callUpdated replay', () => {
  it('a subscriber joining after the calls changed first gets their latest state, so a page read before subscribing misses nothing', async () => {
    const id = await createBatch(a, 5, 'immediate', 'late');
    const settled = () =>
      t.deps.db.prisma.call.count({
        where: {
          batchId: id,
          OR: [
            { status: { in: ['pending', 'queued', 'ringing', 'answered', 'in_progress'] } },
            { transcriptStatus: { in: ['pending', 'processing'] } },
          ],
        },
      });
    await expect.poll(settled, { timeout: 30_000 }).toBe(0);
    const all = await t.deps.db.prisma.call.findMany({ where: { batchId: id } });
    // The replay holds the calls that changed in the 30 s before the batch's last change (docs/api.md):
    // on a quiet machine all five; on a slow one, a call analysed much later leaves the early ones out.
    const newest = Math.max(...all.map((c) => c.updatedAt.getTime()));
    const dbCalls = all.filter((c) => c.updatedAt.getTime() >= newest - 30_000);
    // Nothing changes any more: whatever arrives is the replay.
    const client = wsClient(url, `Bearer ${a.apiKey}`);
    const calls = wsStream<{ callUpdated: any }>(client, CALLS, { id });
    try {
      for (const c of dbCalls) {
        await calls.until(
          (v) => v.callUpdated.callId === c.id && v.callUpdated.status === c.status && v.callUpdated.transcriptStatus === c.transcriptStatus,
        );
      }
      expect(new Set(calls.values().map((v) => v.callUpdated.callId)).size).toBe(dbCalls.length);
    } finally {
      calls.close();
      await client.dispose();
    }
  });
});

describe('accountBatches over graphql-ws', () => {
  it("emits the account's batches as they are created and move, never another account's", async () => {
    const client = wsClient(url, `Bearer ${a.apiKey}`);
    const before = hubStat('accountSubscribers');
    const s = wsStream<{ accountBatches: Progress }>(client, ACCOUNT);
    // The subscription has no initial value: wait until it is registered.
    await registered('accountSubscribers', before);
    const otherId = await createBatch(b, 2, 'immediate', 'other');
    const id = await createBatch(a, 3, 'immediate', 'mine');
    await s.until((v) => v.accountBatches.batchId === id && v.accountBatches.status === 'completed');
    const ids = new Set(s.values().map((v) => v.accountBatches.batchId));
    expect(ids.has(otherId)).toBe(false);
    expect(s.values().every((v) => sumRuleHolds(v.accountBatches))).toBe(true);
    s.close();
    await client.dispose();
  });
});

describe('subscriptions over SSE (Accept: text/event-stream)', () => {
  // A failing test still hangs up, so the next one's "nothing held" checks see only its own.
  const opened: { close(): void }[] = [];
  const track = <S extends { close(): void }>(stream: S): S => (opened.push(stream), stream);
  afterEach(() => {
    for (const stream of opened.splice(0)) stream.close();
  });

  it('streams batchProgress from the current value to the end', async () => {
    const id = await createBatch(a, 8, 'manual', 'sse');
    const s = sseStream<{ batchProgress: Progress }>((r) => t.app.fetch(r), 'http://test.local', PROGRESS, { id }, a.apiKey);
    const first = await s.until(() => true);
    expect(first.batchProgress).toMatchObject({ batchId: id, status: 'paused', queued: 8 });
    expect((await s.response).headers.get('content-type')).toContain('text/event-stream');
    await start(a, id);
    const last = await s.until((v) => finished(v.batchProgress));
    expect(last.batchProgress.completed + last.batchProgress.failed).toBe(8);
    expect(s.values().every((v) => sumRuleHolds(v.batchProgress))).toBe(true);
    // The terminal status completes the stream and the server lets go (hanging up: next test).
    await s.done;
    await waitFor(() => held() === 0);
  });

  it('works over a real HTTP connection and lets go when the client disconnects', async () => {
    const id = await createBatch(a, 2, 'manual', 'net');
    const s = sseStream<{ batchProgress: Progress }>((r) => fetch(r), url, PROGRESS, { id }, a.apiKey);
    expect((await s.until(() => true)).batchProgress).toMatchObject({ batchId: id, queued: 2 });
    expect(held()).toBeGreaterThan(0);
    s.close();
    await waitFor(() => held() === 0);
  });

  it("streams callUpdated: each call's status changes, its results once ready", async () => {
    const id = await createBatch(a, 6, 'manual', 'ssecu');
    const sse = (q: string) => track(sseStream<any>((r) => t.app.fetch(r), 'http://test.local', q, { id }, a.apiKey));
    const before = hubStat('callSubscribers');
    const calls = sse(CALLS);
    const progress = sse(PROGRESS);
    await progress.until(() => true);
    expect((await calls.response).headers.get('content-type')).toContain('text/event-stream');
    // callUpdated has no initial value: wait until its start is done.
    await registered('callSubscribers', before);
    await start(a, id);
    await progress.until((v) => finished(v.batchProgress));
    // The batch is done when its calls end; their analyses settle a moment later.
    const settled = () => t.deps.db.prisma.call.count({ where: { batchId: id, transcriptStatus: { in: ['pending', 'processing'] } } });
    await expect.poll(settled, { timeout: 10_000 }).toBe(0);
    const dbCalls = await t.deps.db.prisma.call.findMany({ where: { batchId: id }, orderBy: { seq: 'asc' } });
    for (const c of dbCalls) {
      await calls.until(
        (v) => v.callUpdated.callId === c.id && v.callUpdated.status === c.status && v.callUpdated.transcriptStatus === c.transcriptStatus,
      );
    }
    const updates = calls.values().map((v) => v.callUpdated);
    expect(updates.every((u) => u.batchId === id)).toBe(true);
    // Calls went through intermediate states live, not only their final one.
    expect(updates.length).toBeGreaterThan(dbCalls.length);
    const ready = updates.filter((u) => u.transcriptStatus === 'ready');
    expect(ready.length).toBe(dbCalls.filter((c) => c.transcriptStatus === 'ready').length);
    expect(ready.length).toBeGreaterThan(0);
    for (const u of ready) {
      const c = dbCalls.find((x) => x.id === u.callId)!;
      expect({ summary: u.summary, outcomes: u.outcomes }).toEqual({ summary: c.summary, outcomes: c.outcomes });
    }
    for (const u of updates.filter((x) => x.transcriptStatus !== 'ready')) expect(u.summary).toBeNull();
    calls.close();
    progress.close();
    await waitFor(() => held() === 0);
  });

  it("streams accountBatches: the account's batches as they move, never another account's", async () => {
    const before = hubStat('accountSubscribers');
    const s = track(sseStream<{ accountBatches: Progress }>((r) => t.app.fetch(r), 'http://test.local', ACCOUNT, undefined, a.apiKey));
    await registered('accountSubscribers', before);
    expect((await s.response).headers.get('content-type')).toContain('text/event-stream');
    const otherId = await createBatch(b, 2, 'immediate', 'sseother');
    const id = await createBatch(a, 3, 'immediate', 'ssemine');
    const last = await s.until((v) => v.accountBatches.batchId === id && v.accountBatches.status === 'completed');
    expect(last.accountBatches).toMatchObject({ queued: 0, inProgress: 0, acceptedContacts: 3 });
    expect(last.accountBatches.completed + last.accountBatches.failed).toBe(3);
    const mine = s.values().filter((v) => v.accountBatches.batchId === id);
    // Seen moving, not only finished.
    expect(mine.length).toBeGreaterThan(1);
    expect(s.values().some((v) => v.accountBatches.batchId === otherId)).toBe(false);
    expect(s.values().every((v) => sumRuleHolds(v.accountBatches))).toBe(true);
    s.close();
    await waitFor(() => held() === 0);
  });

  it('emits batchProgress when only the callbacks counter changes (a webhook delivered)', async () => {
    const rx = await startReceiver();
    try {
      const id = await createBatch(a, 2, 'manual', 'cb', { callback_url: rx.url });
      const s = track(sseStream<{ batchProgress: Progress }>((r) => t.app.fetch(r), 'http://test.local', PROGRESS, { id }, a.apiKey));
      const first = (await s.until(() => true)).batchProgress;
      expect(first).toMatchObject({ status: 'paused', queued: 2, callbacks: 0 });
      // An event of this batch delivered: nothing changes but batches.callbacks.
      await t.deps.db.prisma.$transaction((tx) =>
        enqueueWebhook(tx, {
          accountId: a.account.id,
          batchId: id,
          callbackUrl: rx.url,
          type: 'batch.started',
          data: { batch_id: id },
          at: t.clock.now(),
        }),
      );
      expect(await deliverDue(t.deps)).toMatchObject([{ result: 'delivered' }]);
      const next = (await s.until((v) => v.batchProgress.callbacks === 1)).batchProgress;
      expect({ ...next, callbacks: 0, updatedAt: null }).toEqual({ ...first, updatedAt: null });
      s.close();
      await waitFor(() => held() === 0);
    } finally {
      await rx.close();
    }
  });

  it('refuses a missing or wrong key with UNAUTHENTICATED', async () => {
    for (const key of [null, 'sk_' + 'z'.repeat(43)]) {
      const s = sseStream((r) => t.app.fetch(r), 'http://test.local', PROGRESS, { id: 'sched_x' }, key);
      const errors = await s.firstError();
      expect(errors[0]).toMatchObject({ extensions: { code: 'UNAUTHENTICATED' } });
      expect(s.values()).toEqual([]);
      s.close();
    }
  });

  it("refuses another account's batch with NOT_FOUND", async () => {
    const foreign = await createBatch(b, 1, 'manual', 'f');
    const s = sseStream((r) => t.app.fetch(r), 'http://test.local', PROGRESS, { id: foreign }, a.apiKey);
    const errors = await s.firstError();
    expect(errors[0]).toMatchObject({ message: 'Call batch not found', extensions: { code: 'NOT_FOUND' } });
    s.close();
  });
});
