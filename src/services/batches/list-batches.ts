// The account's batches, newest first, with the contract's filters.
import type { AppDeps } from '../../deps.ts';
import { ACTIVE_FILTER_STATUSES } from '../../domain/batch-state.ts';
import { Prisma, type Account, type Batch } from '../../generated/prisma/client.ts';
import type { BatchQuery } from './get-batch.ts';
import { readPage, type PageSource } from '../page-rows.ts';
import {
  BATCH_LIST_PAGE,
  clampBound,
  pageIssues,
  pageRequest,
  pagination,
  reasons,
  throwIfIssues,
  type FieldIssue,
  type PageArgs,
  type Pagination,
} from '../pagination.ts';

/** Values of the list's `status` filter (the contract's, not the stored statuses). */
export const BATCH_LIST_STATUS_FILTERS = ['pending', 'active', 'completed', 'cancelled'] as const;
export type BatchListStatusFilter = (typeof BATCH_LIST_STATUS_FILTERS)[number];

export function isBatchListStatusFilter(v: unknown): v is BatchListStatusFilter {
  return typeof v === 'string' && (BATCH_LIST_STATUS_FILTERS as readonly string[]).includes(v);
}

const STORED_STATUSES: Record<BatchListStatusFilter, readonly string[]> = {
  pending: ['pending'],
  active: ACTIVE_FILTER_STATUSES,
  completed: ['completed'],
  cancelled: ['cancelled'],
};

export interface BatchFilter {
  agentId?: string | null;
  status?: string | null;
  /** Inclusive bounds on created_at. */
  createdAtFrom?: Date | null;
  createdAtTo?: Date | null;
}

export function batchFilterIssues(filter: BatchFilter): FieldIssue[] {
  if (filter.status != null && !isBatchListStatusFilter(filter.status)) {
    return [{ field: 'status', reason: reasons.oneOf(BATCH_LIST_STATUS_FILTERS) }];
  }
  return [];
}

export function batchWhere(account: Account, filter: BatchFilter): Prisma.BatchWhereInput {
  const where: Prisma.BatchWhereInput = { accountId: account.id };
  if (filter.agentId != null) where.agentId = filter.agentId;
  if (filter.status != null) {
    const statuses = STORED_STATUSES[filter.status as BatchListStatusFilter];
    where.status = statuses.length === 1 ? statuses[0] : { in: [...statuses] };
  }
  if (filter.createdAtFrom || filter.createdAtTo) {
    where.createdAt = {
      ...(filter.createdAtFrom ? { gte: clampBound(filter.createdAtFrom) } : {}),
      ...(filter.createdAtTo ? { lte: clampBound(filter.createdAtTo) } : {}),
    };
  }
  return where;
}

/** batchWhere in SQL on `batches b` (the offset page, read by statement). */
function batchConditions(account: Account, filter: BatchFilter): Prisma.Sql {
  const conditions = [Prisma.sql`b.account_id = ${account.id}`];
  if (filter.agentId != null) conditions.push(Prisma.sql`b.agent_id = ${filter.agentId}`);
  if (filter.status != null) conditions.push(Prisma.sql`b.status = ANY(${[...STORED_STATUSES[filter.status as BatchListStatusFilter]]}::text[])`);
  if (filter.createdAtFrom) conditions.push(Prisma.sql`b.created_at >= ${clampBound(filter.createdAtFrom).toISOString()}::timestamptz`);
  if (filter.createdAtTo) conditions.push(Prisma.sql`b.created_at <= ${clampBound(filter.createdAtTo).toISOString()}::timestamptz`);
  return Prisma.join(conditions, ' AND ');
}

/** Newest first; the id breaks ties between batches created in the same millisecond. */
export const BATCH_ORDER: Prisma.BatchOrderByWithRelationInput[] = [{ createdAt: 'desc' }, { id: 'desc' }];

export async function listBatches(
  deps: AppDeps,
  account: Account,
  input: BatchFilter & PageArgs,
  query: BatchQuery = {},
): Promise<{ items: Batch[]; pagination: Pagination }> {
  throwIfIssues([...batchFilterIssues(input), ...pageIssues(input, BATCH_LIST_PAGE)]);
  const req = pageRequest(input, BATCH_LIST_PAGE);
  const source: PageSource<Batch> = {
    model: 'Batch',
    table: 'batches',
    alias: 'b',
    where: batchConditions(account, input),
    // BATCH_ORDER
    orderBy: 'b.created_at DESC, b.id DESC',
    relations: {
      findPage: async (skip, take) => (await deps.db.prisma.batch.findMany({ ...query, where: batchWhere(account, input), orderBy: BATCH_ORDER, skip, take })) as Batch[],
      count: () => deps.db.prisma.batch.count({ where: batchWhere(account, input) }),
    },
  };
  const { items, total } = await readPage(deps.db, source, req, query);
  return { items, pagination: pagination(req, total) };
}

/** Rows for a relay connection: the plugin's query carries take/skip/cursor. */
export async function batchesForConnection(
  deps: AppDeps,
  account: Account,
  filter: BatchFilter,
  query: BatchQuery & { take?: number; skip?: number; cursor?: Prisma.BatchWhereUniqueInput },
): Promise<Batch[]> {
  throwIfIssues(batchFilterIssues(filter));
  return (await deps.db.prisma.batch.findMany({ ...query, where: batchWhere(account, filter), orderBy: BATCH_ORDER })) as Batch[];
}

export async function countBatches(deps: AppDeps, account: Account, filter: BatchFilter): Promise<number> {
  return deps.db.prisma.batch.count({ where: batchWhere(account, filter) });
}
