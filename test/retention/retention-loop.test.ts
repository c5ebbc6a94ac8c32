// Provider event retention (PROVIDER_EVENT_RETENTION_DAYS) and the worker's retention loop, which
// runs every retention that is on and counts what it deleted in callbatch_retention_deleted_total.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { insertBatch } from '../helpers/fixtures.ts';
import { waitFor } from '../helpers/wait.ts';
import { loadConfig } from '../../src/config.ts';
import { pruneProviderEvents } from '../../src/services/retention/prune-provider-events.ts';
import { startRetention } from '../../src/services/retention/retention-loop.ts';

const NOW = new Date('2031-09-10T10:00:00.000Z');
const DAY = 86_400_000;
const daysAgo = (d: number) => new Date(NOW.getTime() - d * DAY);

let t: TestApp;
let a: SeededAccount;
beforeAll(async () => {
  t = await createTestApp({ config: { PROVIDER_EVENT_RETENTION_DAYS: '7', BATCH_RETENTION_DAYS: '30', RECORDING_RETENTION_DAYS: '10' } });
  a = await t.seedAccount();
});
afterAll(() => t.close());

/** One stored Retell event per [received days ago, processed days ago or null]; returns their ids. */
async function events(rows: [received: number, processed: number | null][]): Promise<string[]> {
  const ids = rows.map(() => `retell:call_${crypto.randomUUID()}:call_ended`);
  await t.deps.db.prisma.providerEvent.createMany({
    data: rows.map(([received, processed], i) => ({
      id: ids[i]!,
      provider: 'retell',
      callId: null,
      eventType: 'call_ended',
      payload: { event: 'call_ended', call: { call_id: ids[i] } },
      receivedAt: daysAgo(received),
      processedAt: processed === null ? null : daysAgo(processed),
    })),
  });
  return ids;
}
const remaining = async (ids: string[]) =>
  new Set((await t.deps.db.prisma.providerEvent.findMany({ where: { id: { in: ids } }, select: { id: true } })).map((e) => e.id));

describe('provider event retention', () => {
  it('deletes events processed, or received and never processed, before the retention; keeps the rest', async () => {
    expect(loadConfig({}).PROVIDER_EVENT_RETENTION_DAYS).toBe(7);
    t.clock.set(NOW);
    const old = await events([
      [9, 8], // processed 8 days ago
      [400, 399],
      [8, null], // never taken by a worker
      [7.01, null],
    ]);
    const kept = await events([
      [9, 6], // arrived long ago, processed within the retention
      [6.99, null],
      [0, 0],
      [0, null],
    ]);
    expect(await pruneProviderEvents(t.deps, { chunk: 1 })).toBe(old.length);
    expect(await remaining([...old, ...kept])).toEqual(new Set(kept));
    expect(await pruneProviderEvents(t.deps)).toBe(0);
    expect(await pruneProviderEvents({ ...t.deps, config: { ...t.deps.config, PROVIDER_EVENT_RETENTION_DAYS: 0 } })).toBe(0);
  });
});

describe('the retention loop', () => {
  it('runs every retention in the background and counts what it deleted', async () => {
    t.clock.set(NOW);
    const [event] = await events([[30, 30]]);
    // Ended 40 days ago: the batch goes, and with it its calls.
    const { batch: old } = await insertBatch(t.deps, a, {
      contacts: 2,
      status: 'completed',
      createdAt: daysAgo(41),
      callOverrides: () => ({ status: 'completed' }),
    });
    await t.deps.db.prisma.batch.update({ where: { id: old.id }, data: { completedAt: daysAgo(40) } });
    // Ended 20 days ago: the batch stays, its 15-day-old recording goes.
    const { batch: kept, calls } = await insertBatch(t.deps, a, {
      contacts: 1,
      status: 'completed',
      createdAt: daysAgo(21),
      callOverrides: () => ({ status: 'completed', recordingAvailable: true }),
    });
    await t.deps.db.prisma.batch.update({ where: { id: kept.id }, data: { completedAt: daysAgo(20) } });
    await t.deps.db.prisma.$executeRaw`
      INSERT INTO recordings (call_id, account_id, content_type, data, created_at)
      VALUES (${calls[0]!.id}, ${a.account.id}, 'audio/wav', decode('UklGRg==', 'base64'), ${daysAgo(15)})`;

    const loop = startRetention(t.deps, { firstAfterMs: 0 });
    try {
      await waitFor(async () => (await t.deps.db.prisma.batch.count({ where: { id: old.id } })) === 0, { what: 'the old batch deleted' });
    } finally {
      await loop.stop();
    }
    expect(await remaining([event!])).toEqual(new Set());
    expect(await t.deps.db.prisma.recording.count({ where: { callId: calls[0]!.id } })).toBe(0);
    expect((await t.deps.db.prisma.call.findUniqueOrThrow({ where: { id: calls[0]!.id } })).recordingAvailable).toBe(false);
    expect(await t.deps.db.prisma.batch.count({ where: { id: kept.id } })).toBe(1);

    const text = await t.deps.metrics.registry.metrics();
    const counted = (table: string) => Number(new RegExp(`^callbatch_retention_deleted_total\\{table="${table}"\\} (\\d+)$`, 'm').exec(text)?.[1]);
    expect({
      batches: counted('batches'),
      calls: counted('calls'),
      recordings: counted('recordings'),
      provider_events: counted('provider_events'),
    }).toEqual({
      batches: 1,
      calls: 2,
      recordings: 1,
      provider_events: 1,
    });
  });
});
