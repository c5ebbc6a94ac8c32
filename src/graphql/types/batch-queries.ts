// Read side of batches and calls: offset pages (the REST contract's shape, for parity) and relay
// connections (for dashboards). Nested Prisma selections are planned from the document, so a page
// of calls with agent, version and batch voice costs a fixed number of queries.
import { queryFromInfo } from '@pothos/plugin-prisma';
import type { GraphQLResolveInfo } from 'graphql';
import { builder } from '../builder.ts';
import type { GraphQLContext } from '../context.ts';
import { primeBatchLabels } from '../loaders.ts';
import { selectsAny } from '../selection.ts';
import { BATCH_DETAIL_FIELDS } from './batch-columns.ts';
import { CallBatchType } from './batch.ts';
import { CallType } from './call.ts';
import type { Batch, Call } from '../../generated/prisma/client.ts';
import { CALL_STATUSES } from '../../domain/call-state.ts';
import { getBatch, withDetailColumns } from '../../services/batches/get-batch.ts';
import { getCall } from '../../services/calls/get-call.ts';
import { BATCH_LIST_STATUS_FILTERS, batchesForConnection, countBatches, listBatches, type BatchFilter } from '../../services/batches/list-batches.ts';
import { callFilterIssues, callFilterWhere, CALL_ORDER, TRANSCRIPT_STATUS_FILTERS, type CallFilter } from '../../services/calls/list-batch-calls.ts';
import { batchResults, type BatchResults } from '../../services/batches/batch-results.ts';
import { listBatchCalls } from '../../services/batches/batch-calls-page.ts';
import { callRecordsForConnection, countCallRecords, listCallRecords, type CallRecordsInput } from '../../services/calls/list-call-records.ts';
import {
  BATCH_CALLS_PAGE,
  BATCH_LIST_PAGE,
  BATCH_RESULTS_PAGE,
  CALL_RECORDS_PAGE,
  throwIfIssues,
  type Pagination,
} from '../../services/pagination.ts';

// Enum values are the wire values of the REST contract, so both surfaces spell filters alike.
const BatchListStatus = builder.enumType('BatchListStatus', {
  description: '`active` matches every in-flight batch state',
  values: BATCH_LIST_STATUS_FILTERS,
});
const CallStatusFilter = builder.enumType('CallStatusFilter', { values: CALL_STATUSES });
const TranscriptStatusFilter = builder.enumType('TranscriptStatusFilter', {
  description: '`completed` is an alias of `ready` (one sample of the contract uses it)',
  values: TRANSCRIPT_STATUS_FILTERS,
});
const BatchResultsStatus = builder.enumType('BatchResultsStatus', { values: ['pending', 'completed', 'cancelled'] as const });

const CallBatchFilter = builder.inputType('CallBatchFilter', {
  fields: (t) => ({
    agentId: t.id(),
    status: t.field({ type: BatchListStatus }),
    createdAtFrom: t.field({ type: 'DateTime', description: 'Inclusive' }),
    createdAtTo: t.field({ type: 'DateTime', description: 'Inclusive' }),
  }),
});

const BatchCallFilter = builder.inputType('BatchCallFilter', {
  fields: (t) => ({
    status: t.field({ type: CallStatusFilter }),
    externalId: t.string({ description: "The caller's contact id" }),
    transcriptStatus: t.field({ type: TranscriptStatusFilter }),
  }),
});

const BatchResultFilter = builder.inputType('BatchResultFilter', {
  fields: (t) => ({
    outcome: t.string({
      description:
        "Matches calls whose extracted outcomes hold this value. Reads every call of the batch: an account's requests read two at once per server (RATE_LIMITED beyond); one document's such fields count once",
    }),
    status: t.field({ type: CallStatusFilter }),
    transcriptStatus: t.field({ type: TranscriptStatusFilter }),
  }),
});

const CallRecordFilter = builder.inputType('CallRecordFilter', {
  fields: (t) => ({
    startDate: t.string({ required: true, description: 'Inclusive UTC day, YYYY-MM-DD (on created_at)' }),
    endDate: t.string({ required: true, description: 'Inclusive UTC day, YYYY-MM-DD' }),
    agentIds: t.idList({ description: 'Records of any of these agents' }),
  }),
});

export const PaginationType = builder.objectRef<Pagination>('Pagination').implement({
  fields: (t) => ({
    page: t.exposeInt('page'),
    limit: t.exposeInt('limit'),
    total: t.exposeInt('total'),
    hasMore: t.exposeBoolean('hasMore'),
  }),
});

interface Page<T> {
  items: T[];
  pagination: Pagination;
}

const CallBatchPage = builder.objectRef<Page<Batch>>('CallBatchPage').implement({
  fields: (t) => ({
    items: t.field({ type: [CallBatchType], resolve: (p) => p.items }),
    pagination: t.field({ type: PaginationType, resolve: (p) => p.pagination }),
  }),
});

const CallPage = builder.objectRef<Page<Call>>('CallPage').implement({
  fields: (t) => ({
    items: t.field({ type: [CallType], resolve: (p) => p.items }),
    pagination: t.field({ type: PaginationType, resolve: (p) => p.pagination }),
  }),
});

const BatchResultsType = builder.objectRef<BatchResults>('BatchResults').implement({
  fields: (t) => ({
    status: t.field({
      type: BatchResultsStatus,
      description: '`pending` while any call is not terminal, else `completed`; `cancelled` for a cancelled batch',
      resolve: (r) => r.status,
    }),
    items: t.field({ type: [CallType], resolve: (r) => r.items }),
    pagination: t.field({ type: PaginationType, resolve: (r) => r.pagination }),
  }),
});

/** The Call fields that show a label of the call's batch (call.ts). */
const CALL_LABEL_FIELDS: ReadonlySet<string> = new Set(['agentName', 'versionName', 'voice']);

/** The Prisma include/select the document asks for under `items`, loaded with the page itself. */
function itemsQuery(ctx: GraphQLContext, info: GraphQLResolveInfo) {
  return queryFromInfo({ context: ctx, info, path: ['items'] });
}

type BatchFilterArg = { agentId?: string | number | null; status?: string | null; createdAtFrom?: Date | null; createdAtTo?: Date | null };

function batchFilter(f: BatchFilterArg | null | undefined): BatchFilter {
  return { ...f, agentId: f?.agentId == null ? null : String(f.agentId) };
}

function recordsFilter(f: {
  startDate: string;
  endDate: string;
  agentIds?: (string | number)[] | null;
}): Omit<CallRecordsInput, 'page' | 'pageSize'> {
  return { startDate: f.startDate, endDate: f.endDate, agentIds: f.agentIds?.map(String) };
}

builder.queryFields((t) => ({
  batch: t.prismaField({
    type: 'Batch',
    description: 'A batch of the account; NOT_FOUND ("Call batch not found") when absent or foreign',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (query, _root, { id }, ctx) => getBatch(ctx.deps, await ctx.account(), String(id), query),
  }),

  call: t.prismaField({
    type: 'Call',
    description:
      'A call of the account; NOT_FOUND ("Call not found") when absent or foreign. Reads only what the document selects (node reads the whole row)',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (query, _root, { id }, ctx) => getCall(ctx.deps, await ctx.account(), String(id), query),
  }),

  batches: t.field({
    type: CallBatchPage,
    description: "The account's batches, newest first",
    args: {
      filter: t.arg({ type: CallBatchFilter }),
      page: t.arg.int({ defaultValue: 1, description: '1-indexed' }),
      limit: t.arg.int({ defaultValue: BATCH_LIST_PAGE.defaultLimit, description: 'Page size, at most 200' }),
    },
    resolve: async (_root, args, ctx, info) =>
      listBatches(
        ctx.deps,
        await ctx.account(),
        { ...batchFilter(args.filter), page: args.page, limit: args.limit },
        selectsAny(info, ['items'], BATCH_DETAIL_FIELDS) ? withDetailColumns(itemsQuery(ctx, info)) : itemsQuery(ctx, info),
      ),
  }),

  batchesConnection: t.prismaConnection({
    type: 'Batch',
    cursor: 'id',
    description: "The account's batches, newest first, as a relay connection",
    args: { filter: t.arg({ type: CallBatchFilter }) },
    maxSize: BATCH_LIST_PAGE.maxLimit,
    defaultSize: BATCH_LIST_PAGE.defaultLimit,
    totalCount: async (_conn, args, ctx) => countBatches(ctx.deps, await ctx.account(), batchFilter(args.filter)),
    resolve: async (query, _root, args, ctx) => batchesForConnection(ctx.deps, await ctx.account(), batchFilter(args.filter), query),
  }),

  calls: t.field({
    type: CallPage,
    description: 'Calls of one batch in submission order',
    args: {
      batchId: t.arg.id({ required: true }),
      filter: t.arg({ type: BatchCallFilter }),
      page: t.arg.int({ defaultValue: 1, description: '1-indexed' }),
      limit: t.arg.int({ defaultValue: BATCH_CALLS_PAGE.defaultLimit, description: 'Page size, at most 200' }),
    },
    resolve: async (_root, args, ctx, info) => {
      const page = await listBatchCalls(
        ctx.deps,
        await ctx.account(),
        String(args.batchId),
        { ...args.filter, page: args.page, limit: args.limit },
        itemsQuery(ctx, info),
      );
      primeBatchLabels(ctx.loaders, page.batch);
      return page;
    },
  }),

  results: t.field({
    type: BatchResultsType,
    description: 'Per-call results of one batch, in submission order',
    args: {
      batchId: t.arg.id({ required: true }),
      filter: t.arg({ type: BatchResultFilter }),
      page: t.arg.int({ defaultValue: 1, description: '1-indexed' }),
      limit: t.arg.int({ defaultValue: BATCH_RESULTS_PAGE.defaultLimit, description: 'Page size, at most 200' }),
    },
    resolve: async (_root, args, ctx, info) => {
      const results = await batchResults(
        ctx.deps,
        ctx.outcomeReads,
        await ctx.account(),
        String(args.batchId),
        { ...args.filter, page: args.page, limit: args.limit },
        itemsQuery(ctx, info),
      );
      primeBatchLabels(ctx.loaders, results.batch);
      return results;
    },
  }),

  callRecords: t.field({
    type: CallPage,
    description: 'Calls of every batch of the account created within the UTC days, newest first',
    args: {
      filter: t.arg({ type: CallRecordFilter, required: true }),
      page: t.arg.int({ defaultValue: 1, description: '1-indexed' }),
      pageSize: t.arg.int({ defaultValue: CALL_RECORDS_PAGE.defaultLimit, description: 'At most 200' }),
    },
    resolve: async (_root, args, ctx, info) => {
      const page = await listCallRecords(
        ctx.deps,
        await ctx.account(),
        { ...recordsFilter(args.filter), page: args.page, pageSize: args.pageSize },
        itemsQuery(ctx, info),
      );
      // The page's batches' labels in one statement before its items resolve, so each call's
      // agentName, versionName and voice answer synchronously (a promise each otherwise).
      if (page.items.length && selectsAny(info, ['items'], CALL_LABEL_FIELDS)) {
        await ctx.loaders.batchLabels.loadMany([...new Set(page.items.map((c) => c.batchId))]);
      }
      return page;
    },
  }),

  callRecordsConnection: t.prismaConnection({
    type: 'Call',
    cursor: 'id',
    description: 'Call records as a relay connection, newest first',
    args: { filter: t.arg({ type: CallRecordFilter, required: true }) },
    maxSize: CALL_RECORDS_PAGE.maxLimit,
    defaultSize: CALL_RECORDS_PAGE.defaultLimit,
    totalCount: async (_conn, args, ctx) => countCallRecords(ctx.deps, await ctx.account(), recordsFilter(args.filter)),
    resolve: async (query, _root, args, ctx) => callRecordsForConnection(ctx.deps, await ctx.account(), recordsFilter(args.filter), query),
  }),
}));

builder.prismaObjectFields('Batch', (t) => ({
  callsConnection: t.relatedConnection('calls', {
    cursor: 'id',
    description: 'Calls of the batch in submission order, as a relay connection',
    args: { filter: t.arg({ type: BatchCallFilter }) },
    maxSize: BATCH_CALLS_PAGE.maxLimit,
    defaultSize: BATCH_CALLS_PAGE.defaultLimit,
    totalCount: true,
    query: (args) => {
      const filter: CallFilter = { ...args.filter };
      throwIfIssues(callFilterIssues(filter));
      return { where: callFilterWhere(filter), orderBy: CALL_ORDER };
    },
  }),
}));
