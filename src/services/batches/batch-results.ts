// Per-call results of one batch (summary, outcomes, transcript, recording) and the batch-level
// results status.
import { createHash } from 'node:crypto';
import type { AppDeps } from '../../deps.ts';
import { runStatement } from '../../db/sql-statement.ts';
import { isBatchStatus, resultsStatus } from '../../domain/batch-state.ts';
import { Prisma, type Account, type Call } from '../../generated/prisma/client.ts';
import { batchScope, type BatchScope } from './get-batch.ts';
import type { ScanSlots } from './scan-slots.ts';
import { callFilterIssues, transcriptStatusValue, type CallFilter, type CallQuery } from '../calls/list-batch-calls.ts';
import { pageOfBatchCalls } from './batch-calls-page.ts';
import { BATCH_RESULTS_PAGE, pageIssues, pageRequest, throwIfIssues, type PageArgs, type Pagination } from '../pagination.ts';

export type ResultsStatus = 'pending' | 'completed' | 'cancelled';

export interface ResultFilter extends Omit<CallFilter, 'externalId'> {
  /** Matches a call when any value of its outcomes object equals this string. */
  outcome?: string | null;
}

export interface BatchResults {
  status: ResultsStatus;
  items: Call[];
  pagination: Pagination;
  /** The batch as read for the page (its calls' labels included). */
  batch: BatchScope;
}

/** Non-terminal calls are exactly the queued and in_progress buckets, so no count is needed. */
export function batchResultsStatus(batch: BatchScope): ResultsStatus {
  if (!isBatchStatus(batch.status)) throw new Error(`Batch ${batch.id} has an unknown stored status ${batch.status}`);
  return resultsStatus(batch.status, batch.queued + batch.inProgress);
}

/** Lone surrogates would be escapes jsonpath rejects; no stored value contains them anyway. */
function wellFormed(s: string): string {
  return s.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
}

/** SQL conditions on `calls c` for a batch's results with an outcome filter (the CSV export pages them too). */
export function outcomeWhere(batchId: string, filter: ResultFilter & { outcome: string }): Prisma.Sql {
  const conditions = [Prisma.sql`c.batch_id = ${batchId}`];
  if (filter.status != null) conditions.push(Prisma.sql`c.status = ${filter.status}`);
  if (filter.transcriptStatus != null) {
    conditions.push(Prisma.sql`c.transcript_status = ${transcriptStatusValue(filter.transcriptStatus)}`);
  }
  // Lax jsonpath: `$.*` is every member value (array values are unwrapped), and a null or
  // non-object outcomes column simply doesn't match. The value is a literal of the path (a JSON
  // string literal is a jsonpath one), bound as one parameter. The batch's calls are read through
  // its own indexes: a GIN index of outcome values matched the whole table (docs/indexes.md).
  const path = `$.* ? (@ == ${JSON.stringify(wellFormed(filter.outcome))})`;
  conditions.push(Prisma.sql`c.outcomes @? ${path}::jsonpath`);
  return Prisma.join(conditions, ' AND ');
}

// The calls `outcomeWhere` matches, from the counters the triggers of migration outcome_counts keep
// per batch, value (its SHA-256), status and transcript status ('' for none): a few index entries
// instead of every call of the batch (docs/indexes.md).
const OUTCOME_TOTAL_SQL = `
SELECT COALESCE(sum(count), 0)::int AS total FROM call_outcome_counts
 WHERE batch_id = $1 AND value_hash = decode($2, 'hex')
   AND ($3::text IS NULL OR status = $3) AND ($4::text IS NULL OR transcript_status = $4)`;

/** How many of the batch's calls `outcomeWhere(batchId, filter)` matches, read from the outcome counters. */
export async function outcomeTotal(deps: Pick<AppDeps, 'db'>, batchId: string, filter: ResultFilter & { outcome: string }): Promise<number> {
  // The bytes the counters hash: the database's UTF-8 of the value the path compares with.
  const hash = createHash('sha256').update(wellFormed(filter.outcome), 'utf8').digest('hex');
  const transcript = filter.transcriptStatus == null ? null : transcriptStatusValue(filter.transcriptStatus);
  const rows = await runStatement<{ total: number }>(deps.db, OUTCOME_TOTAL_SQL, [batchId, hash, filter.status ?? null, transcript]);
  return rows[0]?.total ?? 0;
}

/** `outcomeReads`: an outcome-filtered page holds one while it reads (scan-slots.ts). */
export async function batchResults(
  deps: AppDeps,
  outcomeReads: ScanSlots,
  account: Account,
  batchId: string,
  input: ResultFilter & PageArgs,
  query: CallQuery = {},
): Promise<BatchResults> {
  const filter: ResultFilter = { outcome: input.outcome, status: input.status, transcriptStatus: input.transcriptStatus };
  throwIfIssues([...callFilterIssues(filter), ...pageIssues(input, BATCH_RESULTS_PAGE)]);
  const batch = await batchScope(deps, account, batchId);
  const req = pageRequest(input, BATCH_RESULTS_PAGE);
  // The outcome filter has its own conditions (a jsonpath on outcomes); its page walks the batch's
  // calls until it has its rows (all of them for a rare value), so it holds a slot while it reads.
  // Its total comes from the outcome counters; a page past it is not read at all.
  const outcome = filter.outcome != null ? { ...filter, outcome: filter.outcome } : null;
  const where = outcome ? outcomeWhere(batch.id, outcome) : undefined;
  const release = where ? outcomeReads.acquire(account.id) : null;
  try {
    const total = outcome ? await outcomeTotal(deps, batch.id, outcome) : null;
    const page = await pageOfBatchCalls(deps, batch, filter, req, query, where, total);
    return { status: batchResultsStatus(batch), ...page, batch };
  } finally {
    release?.();
  }
}
