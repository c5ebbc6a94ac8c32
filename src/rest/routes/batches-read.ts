// Read endpoints of the contract: batch details, batch list, a batch's calls and results, and the
// account's call records. Query strings are checked in query-params.ts; the rest is the GraphQL
// operation in operations/batches-read.graphql and the contract's mappers (services/representations.ts).
import type { RestRoute, RouteInput } from '../router.ts';
import type {
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
import { batchListItem, paginationOut } from '../mappers.ts';
import { batchDetails, callRecord } from '../../services/representations.ts';
import { CALL_STATUSES } from '../../domain/call-state.ts';
import { BATCH_LIST_STATUS_FILTERS } from '../../services/batches/list-batches.ts';
import { TRANSCRIPT_STATUS_FILTERS } from '../../services/calls/list-batch-calls.ts';
import { BATCH_CALLS_PAGE, BATCH_LIST_PAGE, BATCH_RESULTS_PAGE, CALL_RECORDS_PAGE } from '../../services/pagination.ts';
import { MAX_INT } from '../../domain/limits.ts';
import { oneOfStrings, pageOf, pageParams, ref, str } from '../openapi/json-schema.ts';
import { batchDetailsExample, batchListItemExample, callRecordExample, paginationExample } from '../openapi/examples.ts';
import type { QueryParamDoc } from '../openapi/route-doc.ts';

const BASE = '/api/v1/public';

const MESSAGES = {
  list: 'Call batches fetched successfully',
  details: 'Call batch fetched successfully',
  calls: 'Batch calls fetched successfully',
  results: 'Batch results fetched successfully',
  records: 'Call records fetched successfully',
};

const callStatusParam: QueryParamDoc = { name: 'status', description: 'Only calls in this status', schema: oneOfStrings(CALL_STATUSES) };
/** The results filters, shared with the CSV export (batch-export.ts). */
export const resultFilterParams: QueryParamDoc[] = [
  { name: 'outcome', description: 'Only calls with this value among their outcomes', schema: str() },
  callStatusParam,
  { name: 'transcript_status', description: 'Only calls whose transcript is in this state', schema: oneOfStrings(TRANSCRIPT_STATUS_FILTERS) },
];
const timestampParam = (name: string, description: string): QueryParamDoc => ({
  name,
  description: `${description}; ISO 8601 (also read: a date alone, or no offset, as UTC)`,
  schema: str(undefined, { format: 'date-time', examples: ['2026-11-24T00:00:00Z'] }),
});
const dayParam = (name: string, description: string): QueryParamDoc => ({
  name,
  description,
  required: true,
  schema: str('YYYY-MM-DD', { format: 'date', examples: ['2026-11-24'] }),
});
const callsPage = (total: number) => ({ items: [callRecordExample], pagination: paginationExample(total) });

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
    compiled: true,
    variables: batchesVariables,
    respond: (data: RestBatchesQuery) => ({
      message: MESSAGES.list,
      data: {
        items: data.batches.items.map(batchListItem),
        pagination: paginationOut(data.batches.pagination),
      },
    }),
    doc: {
      operationId: 'listCallBatches',
      tag: 'Batches',
      summary: "The account's batches, newest first",
      description: 'Filters combine; `created_at_from` and `created_at_to` bound the creation time, both inclusive.',
      query: [
        { name: 'agent_id', description: 'Only batches of this agent', schema: str() },
        { name: 'status', description: '`active` matches every in-flight state', schema: oneOfStrings(BATCH_LIST_STATUS_FILTERS) },
        timestampParam('created_at_from', 'Batches created at or after'),
        timestampParam('created_at_to', 'Batches created at or before'),
        ...pageParams('limit', BATCH_LIST_PAGE),
      ],
      success: [{ status: 200, messages: [MESSAGES.list] }],
      data: pageOf('BatchListItem'),
      example: { items: [batchListItemExample], pagination: paginationExample(1) },
    },
  },
  {
    method: 'GET',
    path: `${BASE}/call-batches/:batch_id`,
    operation: 'RestBatch',
    compiled: true,
    variables: ({ params }) => ({ id: params.batch_id }),
    respond: ({ batch: b }: RestBatchQuery) => ({
      message: MESSAGES.details,
      data: batchDetails(b),
    }),
    doc: {
      operationId: 'getCallBatch',
      tag: 'Batches',
      summary: 'A batch with its counters',
      description:
        "The batch's settings, its status and the count of its calls in each state. A batch of another account is 404, as one that does not exist.",
      success: [{ status: 200, messages: [MESSAGES.details] }],
      data: ref('BatchDetails'),
      example: batchDetailsExample,
      errors: ['NOT_FOUND'],
    },
  },
  {
    method: 'GET',
    path: `${BASE}/call-batches/:batch_id/calls`,
    operation: 'RestBatchCalls',
    compiled: true,
    variables: callsVariables,
    respond: (data: RestBatchCallsQuery) => ({
      message: MESSAGES.calls,
      data: { items: data.calls.items.map(callRecord), pagination: paginationOut(data.calls.pagination) },
    }),
    doc: {
      operationId: 'listBatchCalls',
      tag: 'Calls',
      summary: "A batch's calls, in submission order",
      description: 'Each call as a call record; `status` and `external_id` narrow the page.',
      query: [
        callStatusParam,
        { name: 'external_id', description: 'Only the calls of this contact_id', schema: str() },
        ...pageParams('limit', BATCH_CALLS_PAGE),
      ],
      success: [{ status: 200, messages: [MESSAGES.calls] }],
      data: pageOf('CallRecord'),
      example: callsPage(1),
      errors: ['NOT_FOUND'],
    },
  },
  {
    method: 'GET',
    path: `${BASE}/call-batches/:batch_id/results`,
    operation: 'RestBatchResults',
    compiled: true,
    variables: resultsVariables,
    respond: (data: RestBatchResultsQuery) => ({
      message: MESSAGES.results,
      data: {
        status: data.results.status,
        items: data.results.items.map(callRecord),
        pagination: paginationOut(data.results.pagination),
      },
    }),
    doc: {
      operationId: 'getBatchResults',
      tag: 'Calls',
      summary: "A batch's calls with their AI results (summary, outcomes, transcript, recording)",
      description:
        'With `outcome`, the page reads every call of the batch: 429 also when the account or the server runs too many such reads at once.',
      query: [...resultFilterParams, ...pageParams('limit', BATCH_RESULTS_PAGE)],
      success: [{ status: 200, messages: [MESSAGES.results] }],
      data: pageOf('CallRecord', {
        status: oneOfStrings(
          ['pending', 'completed', 'cancelled'],
          '`pending` while any call awaits a result, `completed` when all are in, `cancelled` for a cancelled batch',
        ),
      }),
      example: { status: 'pending', ...callsPage(1) },
      errors: ['NOT_FOUND'],
    },
  },
  {
    method: 'GET',
    path: `${BASE}/call-records`,
    operation: 'RestCallRecords',
    compiled: true,
    variables: callRecordsVariables,
    respond: (data: RestCallRecordsQuery) => ({
      message: MESSAGES.records,
      data: { items: data.callRecords.items.map(callRecord), pagination: paginationOut(data.callRecords.pagination) },
    }),
    doc: {
      operationId: 'listCallRecords',
      tag: 'Calls',
      summary: "The account's calls across batches, by the UTC day their batch was created, newest first",
      description: 'A page_size above 200, or a start_date after end_date, is 422 in the detail form.',
      query: [
        dayParam('start_date', 'First UTC day, inclusive'),
        dayParam('end_date', 'Last UTC day, inclusive'),
        { name: 'agent_id', description: 'Only calls of these agents (repeat the parameter)', schema: str(), repeated: true },
        // The contract answers a page_size above the maximum in its detail form (the description says so).
        ...pageParams('page_size', CALL_RECORDS_PAGE),
      ],
      success: [{ status: 200, messages: [MESSAGES.records] }],
      data: pageOf('CallRecord'),
      example: callsPage(1),
      errors: ['UNPROCESSABLE'],
      detailExamples: { 422: 'start_date must be on or before end_date' },
    },
  },
];
