// Calls of one batch in submission order (seq), with the contract's filters.
import type { AppDeps } from '../../deps.ts';
import { CALL_STATUSES, isCallStatus, TRANSCRIPT_STATUSES } from '../../domain/call-state.ts';
import type { Account, Call, Prisma } from '../../generated/prisma/client.ts';
import { batchScope, callCount, type BatchScope } from '../batches/get-batch.ts';
import {
  BATCH_CALLS_PAGE,
  offsetOf,
  pageIssues,
  pageRequest,
  pagination,
  reasons,
  throwIfIssues,
  type FieldIssue,
  type PageArgs,
  type PageRequest,
  type Pagination,
} from '../pagination.ts';

export interface CallQuery {
  include?: Prisma.CallInclude;
  select?: Prisma.CallSelect;
}

export interface CallFilter {
  status?: string | null;
  externalId?: string | null;
  transcriptStatus?: string | null;
}

// One sample of the contract shows `completed` where the others show `ready`; clients copying it
// get the finished transcripts rather than an error.
export const TRANSCRIPT_STATUS_FILTERS = [...TRANSCRIPT_STATUSES, 'completed'] as const;
const TRANSCRIPT_ALIASES: Readonly<Record<string, string>> = { completed: 'ready' };

export function callFilterIssues(filter: CallFilter): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (filter.status != null && !isCallStatus(filter.status)) {
    issues.push({ field: 'status', reason: reasons.oneOf(CALL_STATUSES) });
  }
  if (filter.transcriptStatus != null && !(TRANSCRIPT_STATUS_FILTERS as readonly string[]).includes(filter.transcriptStatus)) {
    issues.push({ field: 'transcriptStatus', reason: reasons.oneOf(TRANSCRIPT_STATUS_FILTERS) });
  }
  return issues;
}

export function transcriptStatusValue(filter: string): string {
  return TRANSCRIPT_ALIASES[filter] ?? filter;
}

// The batch was checked to belong to the account, so batch_id alone scopes the rows; leaving
// account_id out keeps the (batch_id, …) indexes usable for index-only counts.
export function callWhere(batchId: string, filter: CallFilter): Prisma.CallWhereInput {
  return { batchId, ...callFilterWhere(filter) };
}

/** The filter alone, for places where the batch is already fixed (a batch's calls relation). */
export function callFilterWhere(filter: CallFilter): Prisma.CallWhereInput {
  const where: Prisma.CallWhereInput = {};
  if (filter.status != null) where.status = filter.status;
  if (filter.externalId != null) where.externalId = filter.externalId;
  if (filter.transcriptStatus != null) where.transcriptStatus = transcriptStatusValue(filter.transcriptStatus);
  return where;
}

export const CALL_ORDER: Prisma.CallOrderByWithRelationInput = { seq: 'asc' };

function hasFilter(filter: CallFilter): boolean {
  return filter.status != null || filter.externalId != null || filter.transcriptStatus != null;
}

/** One page of a batch's calls; the total comes from the counters when nothing is filtered. */
export async function pageOfBatchCalls(
  deps: AppDeps,
  batch: BatchScope,
  filter: CallFilter,
  req: PageRequest,
  query: CallQuery,
): Promise<{ items: Call[]; pagination: Pagination }> {
  const where = callWhere(batch.id, filter);
  const known = hasFilter(filter) ? null : callCount(batch);
  // A page past the end would still walk the index up to its offset; with the total known, skip it.
  const pastEnd = known !== null && offsetOf(req) >= known;
  const [items, total] = await Promise.all([
    pastEnd ? [] : deps.db.prisma.call.findMany({ ...query, where, orderBy: CALL_ORDER, skip: offsetOf(req), take: req.limit }),
    known ?? deps.db.prisma.call.count({ where }),
  ]);
  return { items: items as Call[], pagination: pagination(req, total) };
}

export async function listBatchCalls(
  deps: AppDeps,
  account: Account,
  batchId: string,
  input: CallFilter & PageArgs,
  query: CallQuery = {},
): Promise<{ items: Call[]; pagination: Pagination; batch: BatchScope }> {
  const filter: CallFilter = { status: input.status, externalId: input.externalId, transcriptStatus: input.transcriptStatus };
  throwIfIssues([...callFilterIssues(filter), ...pageIssues(input, BATCH_CALLS_PAGE)]);
  const batch = await batchScope(deps, account, batchId);
  return { ...(await pageOfBatchCalls(deps, batch, filter, pageRequest(input, BATCH_CALLS_PAGE), query)), batch };
}
