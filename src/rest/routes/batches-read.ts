// Read endpoints of the contract: batch details, batch list, a batch's calls and results, and the
// account's call records. Query strings are checked in query-params.ts; the rest is the GraphQL
// operation in operations/batches-read.graphql and the contract's mappers (services/representations.ts).
import type { RestRoute, RouteInput } from '../router.ts';
import type {
  BatchesReadPaginationFragment,
  RestBatchCallsQuery,
  RestBatchCallsQueryVariables,
  RestBatchesQuery,
  RestBatchesQueryVariables,
  RestBatchQuery,
  RestBatchResultsQuery,
  RestBatchResultsQueryVariables,
  RestCallRecordsQuery,
  RestCallRecordsQueryVariables,
} from '../../codegen/graphql.ts';
import { QueryReader } from '../query-params.ts';
import { batchDetails, callRecord } from '../../services/representations.ts';
import { CALL_STATUSES } from '../../domain/call-state.ts';
import { BATCH_LIST_STATUS_FILTERS } from '../../services/batches/list-batches.ts';
import { TRANSCRIPT_STATUS_FILTERS } from '../../services/calls/list-batch-calls.ts';
import { BATCH_CALLS_PAGE, BATCH_LIST_PAGE, BATCH_RESULTS_PAGE } from '../../services/pagination.ts';
import { MAX_INT } from '../../domain/limits.ts';

const BASE = '/api/v1/public';

function paginationOut(p: BatchesReadPaginationFragment) {
  return { page: p.page, limit: p.limit, total: p.total, has_more: p.hasMore };
}

function batchesVariables({ query }: RouteInput): RestBatchesQueryVariables {
  const q = new QueryReader(query);
  const agentId = q.string('agent_id');
  const status = q.oneOf('status', BATCH_LIST_STATUS_FILTERS);
  const createdAtFrom = q.datetime('created_at_from');
  const createdAtTo = q.datetime('created_at_to');
  const limit = q.int('limit', { min: 1, max: BATCH_LIST_PAGE.maxLimit });
  const page = q.page();
  q.done();
  return { filter: { agentId, status, createdAtFrom, createdAtTo }, page, limit };
}

function callsVariables({ query, params }: RouteInput): RestBatchCallsQueryVariables {
  const q = new QueryReader(query);
  const status = q.oneOf('status', CALL_STATUSES);
  const externalId = q.string('external_id');
  const limit = q.int('limit', { min: 1, max: BATCH_CALLS_PAGE.maxLimit });
  const page = q.page();
  q.done();
  return { batchId: params.batch_id, filter: { status, externalId }, page, limit };
}

function resultsVariables({ query, params }: RouteInput): RestBatchResultsQueryVariables {
  const q = new QueryReader(query);
  const outcome = q.string('outcome');
  const status = q.oneOf('status', CALL_STATUSES);
  const transcriptStatus = q.oneOf('transcript_status', TRANSCRIPT_STATUS_FILTERS);
  const limit = q.int('limit', { min: 1, max: BATCH_RESULTS_PAGE.maxLimit });
  const page = q.page();
  q.done();
  return {
    batchId: params.batch_id,
    filter: { outcome, status, transcriptStatus },
    page,
    limit,
  };
}

function callRecordsVariables({ query }: RouteInput): RestCallRecordsQueryVariables {
  const q = new QueryReader(query);
  const startDate = q.date('start_date', { required: true });
  const endDate = q.date('end_date', { required: true });
  const agentIds = q.strings('agent_id');
  const page = q.page();
  // Above 200 is not an envelope error: the service answers it in the contract's `detail` form,
  // however large (clamped to what a GraphQL Int carries, still above 200).
  const pageSize = q.int('page_size', { min: 1, max: Infinity });
  q.done();
  return {
    filter: { startDate: startDate!, endDate: endDate!, agentIds: agentIds.length ? agentIds : undefined },
    page,
    pageSize: pageSize === undefined ? undefined : Math.min(pageSize, MAX_INT),
  };
}

export const batchesReadRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: `${BASE}/call-batches`,
    operation: 'RestBatches',
    variables: batchesVariables,
    respond: (data: RestBatchesQuery) => ({
      message: 'Call batches fetched successfully',
      data: {
        items: data.batches.items.map((b) => ({
          batch_id: b.id,
          agent_id: b.agentId,
          version_id: b.versionId,
          status: b.status,
          total_contacts: b.totalContacts,
          queued: b.queued,
          in_progress: b.inProgress,
          completed: b.completed,
          failed: b.failed,
          cancelled: b.cancelled,
          created_at: b.createdAt,
        })),
        pagination: paginationOut(data.batches.pagination),
      },
    }),
  },
  {
    method: 'GET',
    path: `${BASE}/call-batches/:batch_id`,
    operation: 'RestBatch',
    variables: ({ params }) => ({ id: params.batch_id }),
    respond: ({ batch: b }: RestBatchQuery) => ({
      message: 'Call batch fetched successfully',
      data: batchDetails(b),
    }),
  },
  {
    method: 'GET',
    path: `${BASE}/call-batches/:batch_id/calls`,
    operation: 'RestBatchCalls',
    variables: callsVariables,
    respond: (data: RestBatchCallsQuery) => ({
      message: 'Batch calls fetched successfully',
      data: { items: data.calls.items.map(callRecord), pagination: paginationOut(data.calls.pagination) },
    }),
  },
  {
    method: 'GET',
    path: `${BASE}/call-batches/:batch_id/results`,
    operation: 'RestBatchResults',
    variables: resultsVariables,
    respond: (data: RestBatchResultsQuery) => ({
      message: 'Batch results fetched successfully',
      data: {
        status: data.results.status,
        items: data.results.items.map(callRecord),
        pagination: paginationOut(data.results.pagination),
      },
    }),
  },
  {
    method: 'GET',
    path: `${BASE}/call-records`,
    operation: 'RestCallRecords',
    variables: callRecordsVariables,
    respond: (data: RestCallRecordsQuery) => ({
      message: 'Call records fetched successfully',
      data: { items: data.callRecords.items.map(callRecord), pagination: paginationOut(data.callRecords.pagination) },
    }),
  },
];
