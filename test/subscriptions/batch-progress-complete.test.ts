// batchProgress completes with a terminal status (completed, cancelled): a subscription on a batch
// already in one sends that value once and completes; one that is open when the batch gets there
// sends the value and completes. Over graphql-ws and SSE; the hub lets go of the subscriber.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { wsClient } from '../helpers/ws-client.ts';
import { sseStream, wsStream, type Stream } from '../helpers/subscriptions.ts';
import { batchBody, CALL_BATCHES, makeContacts } from '../helpers/batch-requests.ts';
import { isFinalSnapshot, type BatchSnapshot } from '../../src/events/batch-channel.ts';

let t: TestApp;
let a: SeededAccount;
let url: string;

const PROGRESS = `subscription($id: ID!) { batchProgress(batchId: $id) { batchId status queued cancelled } }`;
type Progress = { batchProgress: { batchId: string; status: string; queued: number; cancelled: number } };

beforeAll(async () => {
  t = await createTestApp({ config: { RUN_WORKER: 'false' } });
  a = await t.seedAccount();
  url = await t.app.listen();
});
afterAll(() => t.close());

async function createBatch(): Promise<string> {
  const res = await t.request('POST', CALL_BATCHES, { key: a.apiKey, body: batchBody(a, { start_mode: 'manual', contacts: makeContacts(2, 'bp') }) });
  expect(res.status).toBe(201);
  return res.body.data.batch_id;
}

async function cancel(id: string): Promise<void> {
  const res = await t.gql('mutation($id: ID!) { cancelBatch(id: $id) { status } }', { id }, a.apiKey);
  expect(res.body.errors).toBeUndefined();
}

/** The worker's last move, written as it writes it (the row's trigger announces it). */
async function complete(id: string): Promise<void> {
  await t.deps.db.prisma.batch.update({ where: { id }, data: { status: 'completed', completedAt: new Date(), queued: 0, completed: 2 } });
}

/** Resolves when the server completes the stream; fails after a generous deadline. */
async function completes(s: Stream<unknown>, ms = 15_000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`stream still open after ${ms} ms`)), ms)));
  try {
    await Promise.race([s.done, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

const progressSubscribers = () => t.deps.events.started()?.stats().progressSubscribers ?? 0;

type Open = (id: string) => { stream: Stream<Progress>; dispose: () => void | Promise<void> };

const transports: [string, Open][] = [
  [
    'graphql-ws',
    (id) => {
      const client = wsClient(url, `Bearer ${a.apiKey}`);
      return { stream: wsStream<Progress>(client, PROGRESS, { id }), dispose: () => client.dispose() };
    },
  ],
  [
    'SSE',
    (id) => {
      const stream = sseStream<Progress>(fetch, url, PROGRESS, { id }, a.apiKey);
      return { stream, dispose: async () => stream.close() };
    },
  ],
];

describe.each(transports)('batchProgress over %s', (_name, open) => {
  it('on a batch already cancelled or completed: the final value once, then complete', async () => {
    const cancelled = await createBatch();
    await cancel(cancelled);
    const completed = await createBatch();
    await complete(completed);
    for (const [id, status] of [
      [cancelled, 'cancelled'],
      [completed, 'completed'],
    ] as const) {
      const { stream, dispose } = open(id);
      try {
        await completes(stream);
        expect(stream.results.map((r) => r.errors)).toEqual([undefined]);
        expect(stream.values()).toEqual([{ batchProgress: expect.objectContaining({ batchId: id, status }) }]);
      } finally {
        await dispose();
      }
    }
    await expect.poll(progressSubscribers, { timeout: 10_000 }).toBe(0);
  });

  it('open when the batch is cancelled, or completed: that value, then complete', async () => {
    for (const [end, status] of [
      [cancel, 'cancelled'],
      [complete, 'completed'],
    ] as const) {
      const id = await createBatch();
      const { stream, dispose } = open(id);
      try {
        const first = await stream.until(() => true, 15_000);
        expect(first.batchProgress.status).toBe('paused');
        await end(id);
        await completes(stream);
        const values = stream.values().map((v) => v.batchProgress.status);
        expect(values.at(-1)).toBe(status);
        expect(values.filter((s) => s === status)).toHaveLength(1);
      } finally {
        await dispose();
      }
    }
    await expect.poll(progressSubscribers, { timeout: 10_000 }).toBe(0);
  });
});

describe('the value a progress stream ends with', () => {
  const snapshot = (o: Partial<BatchSnapshot>): BatchSnapshot =>
    ({ status: 'cancelled', acceptedContacts: 3, queued: 0, inProgress: 0, completed: 1, failed: 0, cancelled: 2, ...o }) as BatchSnapshot;
  it('is a terminal status with every call ended: a cancel committed while a call is in flight is not the end', () => {
    expect(isFinalSnapshot(snapshot({}))).toBe(true);
    expect(isFinalSnapshot(snapshot({ inProgress: 1, cancelled: 1 }))).toBe(false);
    expect(isFinalSnapshot(snapshot({ status: 'completed', queued: 1, cancelled: 1 }))).toBe(false);
    expect(isFinalSnapshot(snapshot({ status: 'running' }))).toBe(false);
  });
});
