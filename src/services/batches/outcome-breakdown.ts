// How many of a batch's calls hold each outcome value: a first look at a campaign's results. The
// count walks every call's outcomes, so a process runs it at most once per batch every
// OUTCOME_TTL_MS (callers meanwhile, the dashboard's viewers and aliases in one query, share it),
// at most MAX_RUNNING_COUNTS at once, each within COUNT_TIMEOUT_MS.
import { LRUCache } from 'lru-cache';
import type { AppDeps } from '../../deps.ts';
import { withSqlTransaction } from '../../db/sql-transaction.ts';
import { AppError } from '../../errors.ts';

export interface OutcomeCount {
  key: string;
  value: string;
  calls: number;
}

/** Most common key/value pairs returned; the rest are left out. */
export const MAX_OUTCOME_PAIRS = 50;
/** How long a finished count is served before the next caller counts again. */
export const OUTCOME_TTL_MS = 10_000;
export const MAX_RUNNING_COUNTS = 4;
const COUNT_TIMEOUT_MS = 5_000;
/** Batches whose counts one process keeps at once (at most 50 pairs of ≤ 1,100 characters each); the least recently asked goes first. */
const MAX_CACHED_BATCHES = 200;

export interface OutcomeBreakdowns {
  /** The counts of a batch the caller has already read under its account. */
  of(batchId: string): Promise<OutcomeCount[]>;
}

// A stored outcomes value that is not an object (null, or a provider's odd answer) counts nothing.
const COUNT_SQL = `
  SELECT o.key, o.value, count(*)::int AS calls
  FROM calls c
  CROSS JOIN LATERAL jsonb_each_text(CASE WHEN jsonb_typeof(c.outcomes) = 'object' THEN c.outcomes ELSE '{}'::jsonb END) AS o(key, value)
  WHERE c.batch_id = $1 AND o.value IS NOT NULL
  GROUP BY o.key, o.value
  ORDER BY calls DESC, o.key, o.value
  LIMIT $2`;

/** PostgreSQL's "canceling statement due to statement timeout". */
const QUERY_CANCELED = '57014';

async function countOutcomes(deps: AppDeps, batchId: string): Promise<OutcomeCount[]> {
  try {
    return await withSqlTransaction(deps.db, async (tx) => {
      await tx.query(`SET LOCAL statement_timeout = ${COUNT_TIMEOUT_MS}`);
      return tx.query<OutcomeCount>(COUNT_SQL, [batchId, MAX_OUTCOME_PAIRS]);
    });
  } catch (e) {
    if ((e as { code?: string }).code === QUERY_CANCELED) throw new AppError('UNAVAILABLE', 'Counting the outcomes took too long; try again later');
    throw e;
  }
}

export function createOutcomeBreakdowns(deps: AppDeps): OutcomeBreakdowns {
  /**
   * `at`: when the count finished; undefined while it runs (callers then share it). Freshness is
   * checked here against the injected clock (lru-cache 10 reads the process's own).
   */
  const counted = new LRUCache<string, { at?: number; counts: Promise<OutcomeCount[]> }>({ max: MAX_CACHED_BATCHES });
  let running = 0;
  const now = () => deps.clock.now().getTime();

  return {
    of(batchId) {
      const cached = counted.get(batchId);
      if (cached && (cached.at === undefined || now() - cached.at < OUTCOME_TTL_MS)) return cached.counts;
      if (running >= MAX_RUNNING_COUNTS) {
        return Promise.reject(new AppError('RATE_LIMITED', 'Outcome counts are busy; try again in a few seconds', [], { 'retry-after': '5' }));
      }
      running++;
      const entry: { at?: number; counts: Promise<OutcomeCount[]> } = { counts: countOutcomes(deps, batchId) };
      counted.set(batchId, entry);
      entry.counts.then(
        () => {
          running--;
          entry.at = now();
        },
        () => {
          running--;
          // A failed count is not kept: the next caller tries again.
          if (counted.peek(batchId) === entry) counted.delete(batchId);
        },
      );
      return entry.counts;
    },
  };
}
