// How many of a batch's calls hold each outcome value: a first look at a campaign's results. The
// count walks every call's outcomes, so it is read at most once per batch every OUTCOME_TTL_MS per
// process, and callers asking meanwhile (the dashboard's viewers, aliases in one query) share it.
import type { AppDeps } from '../../deps.ts';

export interface OutcomeCount {
  key: string;
  value: string;
  calls: number;
}

/** Most common key/value pairs returned; the rest are left out. */
export const MAX_OUTCOME_PAIRS = 50;
export const OUTCOME_TTL_MS = 10_000;
/** Batches whose counts one process keeps at once (at most 50 pairs of ≤ 1,100 characters each); the oldest goes first. */
const MAX_CACHED_BATCHES = 200;

export interface OutcomeBreakdowns {
  /** The counts of a batch the caller has already read under its account. */
  of(batchId: string): Promise<OutcomeCount[]>;
}

async function countOutcomes(deps: AppDeps, batchId: string): Promise<OutcomeCount[]> {
  // A stored outcomes value that is not an object (null, or a provider's odd answer) counts nothing.
  return deps.db.prisma.$queryRaw<OutcomeCount[]>`
    SELECT o.key, o.value, count(*)::int AS calls
    FROM calls c
    CROSS JOIN LATERAL jsonb_each_text(CASE WHEN jsonb_typeof(c.outcomes) = 'object' THEN c.outcomes ELSE '{}'::jsonb END) AS o(key, value)
    WHERE c.batch_id = ${batchId} AND o.value IS NOT NULL
    GROUP BY o.key, o.value
    ORDER BY calls DESC, o.key, o.value
    LIMIT ${MAX_OUTCOME_PAIRS}`;
}

export function createOutcomeBreakdowns(deps: AppDeps): OutcomeBreakdowns {
  const counted = new Map<string, { at: number; counts: Promise<OutcomeCount[]> }>();
  return {
    of(batchId) {
      const now = deps.clock.now().getTime();
      const cached = counted.get(batchId);
      if (cached && now - cached.at < OUTCOME_TTL_MS) return cached.counts;
      const counts = countOutcomes(deps, batchId);
      counted.delete(batchId);
      counted.set(batchId, { at: now, counts });
      if (counted.size > MAX_CACHED_BATCHES) counted.delete(counted.keys().next().value!);
      // A failed count is not kept: the next caller tries again.
      counts.catch(() => counted.get(batchId)?.counts === counts && counted.delete(batchId));
      return counts;
    },
  };
}
