// Reads against the live feed: a read overtaken by a live update shows the update's progress,
// never the older counters it read (the dashboard once stayed at "1 in progress" after a cancel
// because the cancel's answer, read before the last call ended, arrived after the final update).
import { describe, expect, it } from 'vitest';
import { liveReads } from '../../src/web/live-reads.ts';
import type { DashboardBatchFragment } from '../../src/codegen/graphql.ts';

const batch = (id: string, inProgress: number, status = 'running'): DashboardBatchFragment => ({
  id,
  status,
  startMode: 'immediate',
  agentId: 'agt-1',
  versionId: 'pmt-1',
  agent: { name: 'A' },
  scheduledAt: '2026-11-25T00:00:00.000Z',
  timezone: 'UTC',
  concurrency: 5,
  totalContacts: 3,
  acceptedContacts: 3,
  rejectedContacts: 0,
  queued: 0,
  inProgress,
  completed: 3 - inProgress,
  failed: 0,
  cancelled: 0,
  callbacks: 0,
  createdAt: '2026-11-25T00:00:00.000Z',
  startedAt: '2026-11-25T00:00:01.000Z',
  completedAt: null,
  retry: null,
  expiresAt: null,
  callingWindow: null,
  enforcedCallingWindow: null,
  label: null,
});

const progress = (b: DashboardBatchFragment) => ({ ...b, batchId: b.id, updatedAt: '2026-11-25T00:00:02.000Z' });

function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('liveReads', () => {
  it('lays the progress of an update that arrived during the read over what the read answered', async () => {
    const live = liveReads();
    const answer = deferred<DashboardBatchFragment>();
    const pending = live.read(answer.promise);
    live.seen(progress({ ...batch('b1', 0, 'cancelled'), completedAt: '2026-11-25T00:00:03.000Z' }));
    answer.resolve(batch('b1', 1, 'cancelled'));
    const { value, fresh } = await pending;
    expect(value.inProgress).toBe(1);
    expect(fresh(value)).toMatchObject({ inProgress: 0, completed: 3, completedAt: '2026-11-25T00:00:03.000Z', agent: { name: 'A' } });
  });

  it('keeps a read as it is when no update for that batch came during it', async () => {
    const live = liveReads();
    live.seen(progress(batch('b1', 2)));
    const answer = deferred<DashboardBatchFragment[]>();
    const pending = live.read(answer.promise);
    live.seen(progress(batch('b2', 0)));
    answer.resolve([batch('b1', 1), batch('b2', 2)]);
    const { value, fresh } = await pending;
    expect(value.map(fresh).map((b) => b.inProgress)).toEqual([1, 0]);
  });

  it('forgets updates once no read is under way, and a later read is not overlaid with them', async () => {
    const live = liveReads();
    const first = deferred<DashboardBatchFragment>();
    const a = live.read(first.promise);
    live.seen(progress(batch('b1', 2)));
    first.resolve(batch('b1', 3));
    await a;
    const { fresh } = await live.read(Promise.resolve(batch('b1', 1)));
    expect(fresh(batch('b1', 1)).inProgress).toBe(1);
  });
});
