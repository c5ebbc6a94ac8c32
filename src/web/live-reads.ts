// A read (a query, a mutation's answer) and the live feed race: a read answered after a live update
// may hold an older state than the one on screen, and shown as is it would put the page back to
// those counters until the next change, which for a finished batch never comes. A read that live
// updates overtook therefore takes their progress: the latest update is at least as new as what
// the read saw, or a newer one is already on its way (every committed change is announced).
import type { DashboardBatchFragment, DashboardProgressFragment } from '../codegen/graphql.ts';

const PROGRESS_FIELDS = [
  'status',
  'queued',
  'inProgress',
  'completed',
  'failed',
  'cancelled',
  'acceptedContacts',
  'callbacks',
  'startedAt',
  'completedAt',
] as const satisfies readonly (keyof DashboardProgressFragment & keyof DashboardBatchFragment)[];

type Progress = Pick<DashboardProgressFragment, 'batchId' | (typeof PROGRESS_FIELDS)[number]>;

export interface LiveRead<T> {
  value: T;
  /** The batch as read, with the progress of any live update for it that arrived during the read. */
  fresh(b: DashboardBatchFragment): DashboardBatchFragment;
}

export function liveReads() {
  let count = 0;
  let reading = 0;
  // Only updates that arrive while a read is under way are kept, so this holds at most one entry per batch updated meanwhile.
  const during = new Map<string, { update: Progress; n: number }>();
  return {
    seen(update: Progress): void {
      count += 1;
      if (reading > 0) during.set(update.batchId, { update, n: count });
    },
    async read<T>(request: Promise<T>): Promise<LiveRead<T>> {
      const since = count;
      reading += 1;
      try {
        const value = await request;
        const newer = new Map([...during].filter(([, e]) => e.n > since).map(([id, e]) => [id, e.update]));
        return { value, fresh: (b) => overlay(b, newer.get(b.id)) };
      } finally {
        reading -= 1;
        if (reading === 0) during.clear();
      }
    },
  };
}

function overlay(b: DashboardBatchFragment, update: Progress | undefined): DashboardBatchFragment {
  if (!update) return b;
  const out = { ...b };
  for (const k of PROGRESS_FIELDS) (out as Record<string, unknown>)[k] = update[k];
  return out;
}
