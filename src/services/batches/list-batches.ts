// The account's batches, newest first, with the contract's filters.
import type { AppDeps } from '../../deps.ts';
import { ACTIVE_FILTER_STATUSES } from '../../domain/batch-state.ts';
import { Prisma, type Account, type Batch } from '../../generated/prisma/client.ts';
import type { BatchQuery } from './get-batch.ts';
import { loadInOrder, readPage, type PageSource } from '../page-rows.ts';
import { runStatement } from '../../db/sql-statement.ts';
import { withSqlTransaction } from '../../db/sql-transaction.ts';
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
    seek: {
      columns: [
        { expr: 'b.created_at', type: 'timestamptz' },
        { expr: 'b.id', type: 'text' },
      ],
      op: '<',
    },
    relations: {
      findPage: async (skip, take) =>
        (await deps.db.prisma.batch.findMany({ ...query, where: batchWhere(account, input), orderBy: BATCH_ORDER, skip, take })) as Batch[],
      count: () => deps.db.prisma.batch.count({ where: batchWhere(account, input) }),
    },
  };
  const { items, total } = await readPage(deps.db, source, req, query, await countedTotal(deps, account, input));
  return { items, pagination: pagination(req, total) };
}

/**
 * The total from the counters the triggers of migration batch_counts keep (one row per account and
 * stored status), when the filter is by status or nothing; null when it needs the list counted
 * (agent, created_at range: an index range of the account's batches, docs/indexes.md).
 */
async function countedTotal(deps: AppDeps, account: Account, filter: BatchFilter): Promise<number | null> {
  if (filter.agentId != null || filter.createdAtFrom || filter.createdAtTo) return null;
  const statuses = filter.status == null ? null : [...STORED_STATUSES[filter.status as BatchListStatusFilter]];
  const [row] = await runStatement<{ n: number }>(
    deps.db,
    'SELECT COALESCE(sum(count), 0)::int AS n FROM batch_counts WHERE account_id = $1 AND ($2::text[] IS NULL OR status = ANY($2::text[]))',
    [account.id, statuses],
  );
  return row?.n ?? 0;
}

/** Rows for a relay connection: the plugin's query carries take/skip/cursor. */
export async function batchesForConnection(
  deps: AppDeps,
  account: Account,
  filter: BatchFilter,
  query: BatchQuery & { take?: number; skip?: number; cursor?: Prisma.BatchWhereUniqueInput },
): Promise<Batch[]> {
  throwIfIssues(batchFilterIssues(filter));
  const { take, skip, cursor, ...selection } = query;
  if (cursor?.id == null || take == null) {
    return (await deps.db.prisma.batch.findMany({ ...query, where: batchWhere(account, filter), orderBy: BATCH_ORDER })) as Batch[];
  }
  const ids = await idsFromCursor(deps, account, filter, cursor.id, take, skip ?? 0);
  return loadInOrder(
    ids,
    async (page) => (await deps.db.prisma.batch.findMany({ ...selection, where: { accountId: account.id, id: { in: page } } })) as Batch[],
  );
}

/**
 * The ids of a connection's page from its cursor (`skip` rows past it, the cursor's own first; a
 * negative `take` reads backwards), in BATCH_ORDER. Prisma writes the
 * cursor as `created_at = c AND id <= i OR created_at < c`, which no index range starts at, so a
 * page cost the depth of its cursor (90 ms at the 99,000th batch); a row comparison is a range of
 * (account_id, created_at DESC, id DESC) from the cursor. A cursor not of the account reads nothing.
 */
async function idsFromCursor(deps: AppDeps, account: Account, filter: BatchFilter, cursorId: string, take: number, skip: number): Promise<string[]> {
  const back = take < 0;
  // Prisma skips the first row, the cursor's only when the filter keeps it; a strict bound skips the
  // cursor's row and nothing else.
  const strict = skip > 0 ? '' : '=';
  const at = Prisma.sql`((SELECT c.created_at FROM batches c WHERE c.id = ${cursorId} AND c.account_id = ${account.id}), ${cursorId}::text)`;
  const sql = Prisma.sql`SELECT b.id FROM batches b WHERE ${batchConditions(account, filter)}
    AND (b.created_at, b.id) ${Prisma.raw((back ? '>' : '<') + strict)} ${at}
    ORDER BY ${Prisma.raw(back ? 'b.created_at, b.id' : 'b.created_at DESC, b.id DESC')} LIMIT ${Math.abs(take)} OFFSET ${Math.max(skip - 1, 0)}`;
  const rows = await pageStatement(deps, sql);
  const ids = rows.map((r) => r.id);
  return back ? ids.reverse() : ids;
}

/**
 * PGlite keeps no statistics until its worker analyses the table, and without them its planner may
 * read and sort a range past its guess of the account's batches; the index gives the order, so
 * sorting is ruled out there (as for the do-not-call list).
 */
async function pageStatement(deps: AppDeps, sql: Prisma.Sql): Promise<{ id: string }[]> {
  if (deps.db.kind !== 'pglite') return runStatement<{ id: string }>(deps.db, sql.text, sql.values);
  return withSqlTransaction(deps.db, async (tx) => {
    await tx.query('SET LOCAL enable_sort = off');
    return tx.query<{ id: string }>(sql.text, sql.values);
  });
}

export async function countBatches(deps: AppDeps, account: Account, filter: BatchFilter): Promise<number> {
  return (await countedTotal(deps, account, filter)) ?? deps.db.prisma.batch.count({ where: batchWhere(account, filter) });
}
