// One page of a batch's calls (calls/list-batch-calls.ts has their filters and sources): the batch
// read first, its counters giving the total when nothing is filtered.
import type { AppDeps } from '../../deps.ts';
import type { Account, Call, Prisma } from '../../generated/prisma/client.ts';
import {
  CALL_ORDER,
  callConditions,
  callFilterIssues,
  callsSource,
  callWhere,
  hasFilter,
  type CallFilter,
  type CallQuery,
} from '../calls/list-batch-calls.ts';
import { readPage } from '../page-rows.ts';
import {
  BATCH_CALLS_PAGE,
  pageIssues,
  pageRequest,
  pagination,
  throwIfIssues,
  type PageArgs,
  type PageRequest,
  type Pagination,
} from '../pagination.ts';
import { batchScope, callCount, type BatchScope } from './get-batch.ts';

/**
 * One page of a batch's calls; the total comes from the counters when nothing is filtered.
 * `where` (SQL on `calls c`) is the results' outcome filter's own conditions, else the filter's;
 * `total`, the number of calls they match when the caller has it (the outcome counters).
 */
export async function pageOfBatchCalls(
  deps: AppDeps,
  batch: BatchScope,
  filter: CallFilter & { outcome?: string | null },
  req: PageRequest,
  query: CallQuery,
  where?: Prisma.Sql,
  total: number | null = null,
): Promise<{ items: Call[]; pagination: Pagination }> {
  const source = where
    ? callsSource(deps, { where, orderBy: 'c.seq' }, null, query)
    : callsSource(
        deps,
        { where: callConditions(batch.id, filter), orderBy: 'c.seq' },
        { where: callWhere(batch.id, filter), orderBy: CALL_ORDER },
        query,
      );
  const known = total ?? (hasFilter(filter) ? null : callCount(batch));
  const { items, total: matched } = await readPage(deps.db, source, req, query, known);
  return { items, pagination: pagination(req, matched) };
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
