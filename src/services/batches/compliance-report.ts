// Use case: a batch's compliance report - its dials per local hour in each zone they were judged
// in (from dial_audits), and the calls held back or ended undialled by reason (from calls and, for
// alternate numbers refused, their history). Aggregates in SQL over the batch's own index ranges,
// never rows walked here; each list is bounded; the whole report runs within REPORT_TIMEOUT_MS
// (docs/campaigns.md "Compliance report" gives the cost).
import type { AppDeps } from '../../deps.ts';
import { withSqlTransaction } from '../../db/sql-transaction.ts';
import { AppError } from '../../errors.ts';
import { ALTERNATE_WINDOW_WAIT } from '../../domain/wait-reason.ts';
import { FREQUENCY_CAP_WAIT_REASON } from '../../domain/frequency-cap.ts';
import { NO_WINDOW_DISCONNECT_REASON } from '../../domain/calling-window.ts';
import { SUPPRESSED_DISCONNECT_REASON } from '../../domain/suppressions.ts';
import { EXPIRED_DISCONNECT_REASON } from '../../domain/retry-policy.ts';

/** Most (zone, hour) rows returned: 24 hours in 100 zones. */
export const MAX_REPORT_HOUR_ROWS = 2_400;
/** Most blocked-reason rows returned. */
export const MAX_REPORT_BLOCKED_ROWS = 50;
export const REPORT_TIMEOUT_MS = 5_000;

/**
 * Why a call was not dialled, as it ended: on the do-not-call list at the claim (`suppressed`),
 * no window left before it could be dialled (`no_calling_window`), the batch's `expires_at` passed
 * while it waited (`expired`).
 */
export const BLOCKED_END_REASONS = [SUPPRESSED_DISCONNECT_REASON, NO_WINDOW_DISCONNECT_REASON, EXPIRED_DISCONNECT_REASON] as const;

/**
 * `ended`: the call ended undialled (or undialled again) for this reason; `waiting`: it waits now,
 * held back by its calling window, the frequency cap or its caller-ID numbers' daily caps; `withheld`:
 * a dial the claim had taken was not placed (its history's `dial_withheld`: the check at the dial
 * refused it, or no provider of the route took it), and the call went back in line; `alternate`: its alternate number was not dialled for this reason (the
 * call ended with its primary's result). Each counts calls, a call once per stage and reason.
 */
export const BLOCKED_STAGES = ['ended', 'waiting', 'withheld', 'alternate'] as const;

/** The reasons each stage may name (GraphQL and OpenAPI describe `reason` with it). */
export const BLOCKED_REASONS_DESCRIPTION =
  'ended: suppressed, no_calling_window, expired; waiting: calling_window, frequency_cap, caller_id_cap; withheld: calling_window, frequency_cap, caller_id_cap, caller_id_check_failed, provider_unavailable; alternate: suppressed, calling_window, frequency_cap, caller_id_cap';
export type BlockedStage = (typeof BLOCKED_STAGES)[number];

export interface LocalHourDials {
  zone: string;
  /** 0-23, the local hour in `zone` at the dial. */
  hour: number;
  dials: number;
}

export interface BlockedCount {
  stage: BlockedStage;
  reason: string;
  calls: number;
}

export interface ComplianceReport {
  batchId: string;
  /** Dials recorded (entries of dial_audits). */
  dials: number;
  /** Dials of a batch without any window (allowed_by `no_window`). */
  unrestrictedDials: number;
  /** Dials with no zone to place them in (no window, and a number whose zone is unknown). */
  dialsWithoutZone: number;
  /** A dial judged in several zones counts once in each. */
  dialsByLocalHour: LocalHourDials[];
  /** More (zone, hour) pairs than MAX_REPORT_HOUR_ROWS: the rest are left out. */
  truncated: boolean;
  blocked: BlockedCount[];
}

/** Exported for the test that EXPLAINs them. */
export const TOTALS_SQL = `
SELECT count(*)::int AS dials,
       count(*) FILTER (WHERE allowed_by = 'no_window')::int AS unrestricted,
       count(*) FILTER (WHERE COALESCE(cardinality(zones), 0) = 0)::int AS without_zone
  FROM dial_audits WHERE batch_id = $1`;

// One row per (zone, local hour); AT TIME ZONE applies each zone's own offset at that instant (DST).
export const HOURS_SQL = `
SELECT z.zone, extract(hour FROM a.dialled_at AT TIME ZONE z.zone)::int AS hour, count(*)::int AS dials
  FROM dial_audits a CROSS JOIN LATERAL unnest(a.zones) AS z(zone)
 WHERE a.batch_id = $1
 GROUP BY 1, 2
 ORDER BY 1, 2
 LIMIT $2`;

// Ranges of the batch's calls, each on an index of calls: (batch_id, status, seq) for those ended
// and those waiting; the history (call_id, id) of the batch's calls for withheld dials, and only of
// calls whose alternate went undialled for those.
const BLOCKED_SQL = `
(SELECT 'ended' AS stage, disconnect_reason AS reason, count(*)::int AS calls
   FROM calls WHERE batch_id = $1 AND status IN ('cancelled', 'failed') AND disconnect_reason = ANY($2::text[])
  GROUP BY disconnect_reason)
UNION ALL
(SELECT 'waiting', r.reason, count(*)::int FROM (
   SELECT CASE WHEN wait_reason = $3 THEN 'calling_window'
               WHEN wait_reason IS NOT NULL THEN wait_reason
               WHEN status = 'pending' AND timezone IS NOT NULL THEN 'calling_window' END AS reason
     FROM calls WHERE batch_id = $1 AND status IN ('pending', 'queued') AND next_attempt_at IS NOT NULL) r
  WHERE r.reason IN ('calling_window', $4)
  GROUP BY r.reason)
UNION ALL
(SELECT 'withheld', e.detail->>'reason', count(DISTINCT c.id)::int
   FROM calls c JOIN call_events e ON e.call_id = c.id
  WHERE c.batch_id = $1 AND e.detail->>'event' = 'dial_withheld'
  GROUP BY 2)
UNION ALL
(SELECT 'alternate', e.detail->>'alternate_not_dialled', count(DISTINCT c.id)::int
   FROM calls c JOIN call_events e ON e.call_id = c.id
  WHERE c.batch_id = $1 AND c.alternate_phone IS NOT NULL AND NOT c.used_alternate AND c.attempts > 0
    AND e.detail ? 'alternate_not_dialled'
  GROUP BY 2)
ORDER BY 1, 3 DESC, 2
LIMIT $5`;

/** PostgreSQL's "canceling statement due to statement timeout". */
const QUERY_CANCELED = '57014';

/** The report of a batch the caller has already read under its account. */
export async function complianceReport(deps: Pick<AppDeps, 'db'>, batchId: string): Promise<ComplianceReport> {
  try {
    return await withSqlTransaction(deps.db, async (tx) => {
      await tx.query(`SET LOCAL statement_timeout = ${REPORT_TIMEOUT_MS}`);
      const [totals] = await tx.query<{ dials: number; unrestricted: number; without_zone: number }>(TOTALS_SQL, [batchId]);
      const hours = await tx.query<LocalHourDials>(HOURS_SQL, [batchId, MAX_REPORT_HOUR_ROWS + 1]);
      const blocked = await tx.query<BlockedCount>(BLOCKED_SQL, [
        batchId,
        BLOCKED_END_REASONS,
        ALTERNATE_WINDOW_WAIT,
        FREQUENCY_CAP_WAIT_REASON,
        MAX_REPORT_BLOCKED_ROWS,
      ]);
      return {
        batchId,
        dials: totals?.dials ?? 0,
        unrestrictedDials: totals?.unrestricted ?? 0,
        dialsWithoutZone: totals?.without_zone ?? 0,
        dialsByLocalHour: hours.slice(0, MAX_REPORT_HOUR_ROWS),
        truncated: hours.length > MAX_REPORT_HOUR_ROWS,
        blocked,
      };
    });
  } catch (e) {
    if ((e as { code?: string }).code === QUERY_CANCELED) throw new AppError('UNAVAILABLE', 'The compliance report took too long; try again later');
    throw e;
  }
}
