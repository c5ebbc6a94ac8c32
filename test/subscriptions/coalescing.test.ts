// The hub under a burst: hundreds of committed counter changes in a fraction of a second cost no
// read of the batch row (each notification carries the progress) and become at most one fan-out
// per tick per process (however many subscribers), every value obeys the sum rule, values never
// go back, and the last value is the final row. Also: the
// triggers notify only for visible changes, and the PostgreSQL LISTEN session survives being
// killed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { insertBatch } from '../helpers/fixtures.ts';
import { TEST_DATABASE_URL } from '../helpers/database.ts';
import { sumRuleHolds } from '../helpers/subscriptions.ts';
import { EventHub } from '../../src/events/hub.ts';
import { BatchChannel, type BatchSnapshot, type ChannelHost } from '../../src/events/batch-channel.ts';
import { withSqlTransaction } from '../../src/db/sql-transaction.ts';
import { waitFor } from '../helpers/wait.ts';

let t: TestApp;
let a: SeededAccount;
let b: SeededAccount;
let hub: EventHub;
const TICK_MS = 150;

beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount();
  b = await t.seedAccount();
  hub = new EventHub(t.deps.db, t.deps.logger, { tickMs: TICK_MS });
  await hub.ready;
});
afterAll(async () => {
  await hub?.close();
  await t.close();
});

/** Moves one call's worth of counters from queued to completed, in its own transaction. */
async function completeOne(batchId: string) {
  await withSqlTransaction(t.deps.db, (tx) =>
    tx.query(`UPDATE batches SET queued = queued - 1, completed = completed + 1, updated_at = now() WHERE id = $1`, [batchId]),
  );
}

function collect(it: AsyncIterableIterator<BatchSnapshot>) {
  const seen: BatchSnapshot[] = [];
  const done = (async () => {
    for await (const v of it) seen.push(v);
  })();
  return { seen, done };
}

const until = (cond: () => boolean | Promise<boolean>) => waitFor(cond);

describe('a burst of counter changes', () => {
  it('costs no batch read and one fan-out per tick, and reaches every subscriber with the final counters', async () => {
    const N = 150;
    const { batch } = await insertBatch(t.deps, a, { contacts: N, status: 'running', callOverrides: () => ({ status: 'queued' }) });
    const subscribers = await Promise.all(Array.from({ length: 25 }, () => hub.batchProgress(a.account, batch.id)));
    const streams = subscribers.map(collect);
    await until(() => streams.every((s) => s.seen.length === 1));
    const readsBefore = hub.counters.batchReads;
    const fanOutsBefore = hub.counters.fanOuts;
    const notificationsBefore = hub.counters.notifications;

    const started = Date.now();
    for (let i = 0; i < N; i++) await completeOne(batch.id);
    const elapsed = Date.now() - started;
    await until(() => streams.every((s) => s.seen.at(-1)!.completed === N));

    expect(hub.counters.batchReads - readsBefore).toBe(0);
    const fanOuts = hub.counters.fanOuts - fanOutsBefore;
    // One leading fan-out plus one per started tick, whatever the 25 subscribers and N notifications.
    expect(hub.counters.notifications - notificationsBefore).toBeGreaterThanOrEqual(1);
    expect(fanOuts).toBeLessThanOrEqual(Math.ceil((elapsed + TICK_MS) / TICK_MS) + 2);
    expect(fanOuts).toBeLessThan(N / 4);
    for (const s of streams) {
      expect(s.seen.length).toBeLessThanOrEqual(fanOuts + 1);
      expect(s.seen.every(sumRuleHolds)).toBe(true);
      // Never back in time.
      for (let i = 1; i < s.seen.length; i++) expect(s.seen[i].completed).toBeGreaterThan(s.seen[i - 1].completed);
      expect(s.seen.at(-1)).toMatchObject({ queued: 0, completed: N });
    }
    for (const s of subscribers) await s.return!();
    for (const s of streams) await s.done;
  });

  it('keeps only the latest value for a subscriber that does not read', async () => {
    const { batch } = await insertBatch(t.deps, a, { contacts: 20, status: 'running', callOverrides: () => ({ status: 'queued' }) });
    const slow = await hub.batchProgress(a.account, batch.id);
    const fast = collect(await hub.batchProgress(a.account, batch.id));
    for (let i = 0; i < 20; i++) {
      await completeOne(batch.id);
      // Every fifth change waits until the reading subscriber has it, so it sees several values.
      if (i % 5 === 4) await until(() => fast.seen.at(-1)?.completed === i + 1);
    }
    await until(() => fast.seen.at(-1)?.completed === 20);
    // The fast one saw several values; the slow one has only the newest waiting, nothing else.
    expect(fast.seen.length).toBeGreaterThan(2);
    const first = await slow.next();
    expect(first.value).toMatchObject({ completed: 20, queued: 0 });
    // Whatever the hub had yet to hand out about the batch is out once a later change of another
    // batch has reached its subscriber (notifications in commit order, a fan-out per tick): then a
    // value still waiting for the slow reader would come at once, within a turn of the event loop.
    const { batch: marker } = await insertBatch(t.deps, a, { contacts: 1, status: 'running', callOverrides: () => ({ status: 'queued' }) });
    const markerProgress = await hub.batchProgress(a.account, marker.id);
    const markerSeen = collect(markerProgress);
    await until(() => markerSeen.seen.length === 1);
    await completeOne(marker.id);
    await until(() => markerSeen.seen.at(-1)?.completed === 1);
    const next = slow.next().then(() => 'value');
    const nothing = await Promise.race([next, new Promise((r) => setImmediate(() => r('none')))]);
    expect(nothing).toBe('none');
    await slow.return!();
    await markerProgress.return!();
  });
});

describe('a batch channel', () => {
  const progress = (progressSeq: number, completed: number): BatchSnapshot => ({
    ...({} as BatchSnapshot),
    id: 'b1',
    accountId: 'a1',
    status: 'running',
    queued: 10 - completed,
    inProgress: 0,
    completed,
    failed: 0,
    cancelled: 0,
    callbacks: 0,
    acceptedContacts: 10,
    startedAt: null,
    completedAt: null,
    progressSeq,
  });

  it('keeps the newest value by progress_seq, however late an older one arrives', async () => {
    const sent: BatchSnapshot[] = [];
    const host: ChannelHost = { db: t.deps.db, counters: { batchReads: 0, fanOuts: 0 }, toAccount: (s) => sent.push(s), fannedOut: () => {} };
    const ch = new BatchChannel(
      host,
      'b1',
      () => 0,
      (e) => {
        throw e;
      },
    );
    try {
      ch.offer(progress(5, 5));
      ch.offer(progress(3, 3));
      ch.offer(progress(5, 5));
      expect(ch.snapshot).toMatchObject({ progressSeq: 5, completed: 5 });
      await until(() => !!ch.current);
      ch.offer(progress(4, 4));
      ch.offer(progress(6, 6));
      await until(() => ch.current?.progressSeq === 6);
      expect(sent.map((s) => s.completed)).toEqual([5, 6]);
    } finally {
      ch.close();
    }
  });
});

describe('triggers', () => {
  it('announce status and counter changes, not bookkeeping', async () => {
    const { batch } = await insertBatch(t.deps, a, { contacts: 3, status: 'running', callOverrides: () => ({ status: 'queued' }) });
    const sub = collect(await hub.batchProgress(a.account, batch.id));
    await until(() => sub.seen.length === 1);
    const before = hub.counters.notifications;
    await t.deps.db.prisma.$executeRaw`UPDATE batches SET metadata = '{"x":1}'::jsonb WHERE id = ${batch.id}`;
    await t.deps.db.prisma.$executeRaw`UPDATE calls SET lease_expires_at = now() WHERE batch_id = ${batch.id}`;
    await t.deps.db.prisma.$executeRaw`UPDATE batches SET status = 'paused' WHERE id = ${batch.id}`;
    await until(() => sub.seen.at(-1)?.status === 'paused');
    // Notifications arrive in commit order: any of the bookkeeping updates' would have come first.
    expect(hub.counters.notifications).toBe(before + 1);
    await hub.close().then(() => undefined);
    await sub.done;
    hub = new EventHub(t.deps.db, t.deps.logger, { tickMs: TICK_MS });
    await hub.ready;
  });

  it('stamp updated_at on a call whose status changed without it', async () => {
    const { calls } = await insertBatch(t.deps, a, {
      contacts: 1,
      status: 'running',
      createdAt: new Date('2020-01-01T00:00:00Z'),
      callOverrides: () => ({ status: 'queued', updatedAt: new Date('2020-01-01T00:00:00Z') }),
    });
    await t.deps.db.prisma.$executeRaw`UPDATE calls SET status = 'ringing' WHERE id = ${calls[0].id}`;
    const row = await t.deps.db.prisma.call.findUniqueOrThrow({ where: { id: calls[0].id } });
    expect(row.updatedAt.getTime()).toBeGreaterThan(Date.now() - 60_000);
  });
});

describe('accountBatches', () => {
  it("receives the account's batches only", async () => {
    const mine = collect(await hub.accountBatches(a.account));
    const { batch: other } = await insertBatch(t.deps, b, { contacts: 2, status: 'running', callOverrides: () => ({ status: 'queued' }) });
    const { batch } = await insertBatch(t.deps, a, { contacts: 2, status: 'running', callOverrides: () => ({ status: 'queued' }) });
    await completeOne(other.id);
    await completeOne(batch.id);
    await until(() => mine.seen.some((s) => s.id === batch.id && s.completed === 1));
    // The other account's changes committed first, so their notifications came first.
    expect(mine.seen.some((s) => s.id === other.id)).toBe(false);
  });
});

describe.skipIf(!TEST_DATABASE_URL)('the PostgreSQL LISTEN session', () => {
  it('reconnects after being killed and re-reads what it watches', async () => {
    const { batch } = await insertBatch(t.deps, a, { contacts: 5, status: 'running', callOverrides: () => ({ status: 'queued' }) });
    const sub = collect(await hub.batchProgress(a.account, batch.id));
    await until(() => sub.seen.length === 1);
    await t.deps.db.prisma.$executeRawUnsafe(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'call-batch-events' AND datname = current_database()`,
    );
    // A change while the session is down is picked up by the re-read after reconnecting.
    await completeOne(batch.id);
    await until(() => sub.seen.at(-1)?.completed === 1);
    // And notifications flow again.
    await completeOne(batch.id);
    await until(() => sub.seen.at(-1)?.completed === 2);
  });
});
