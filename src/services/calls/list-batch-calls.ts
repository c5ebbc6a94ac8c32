// Calls of one batch in submission order (seq), with the contract's filters: their conditions and
// sources (a batch's page of them is batches/batch-calls-page.ts, which knows the batch's counters).
import type { AppDeps } from '../../deps.ts';
import { CALL_STATUSES, isCallStatus, TRANSCRIPT_STATUSES } from '../../domain/call-state.ts';
import { Prisma, type Call } from '../../generated/prisma/client.ts';
import type { PageSource } from '../page-rows.ts';
import { reasons, type FieldIssue } from '../pagination.ts';

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

/** callWhere in SQL, on `calls c` (the offset pages read by statement, src/services/page-rows.ts; the CSV export). */
export function callConditions(batchId: string, filter: CallFilter): Prisma.Sql {
  const conditions = [Prisma.sql`c.batch_id = ${batchId}`];
  if (filter.status != null) conditions.push(Prisma.sql`c.status = ${filter.status}`);
  if (filter.externalId != null) conditions.push(Prisma.sql`c.external_id = ${filter.externalId}`);
  if (filter.transcriptStatus != null) conditions.push(Prisma.sql`c.transcript_status = ${transcriptStatusValue(filter.transcriptStatus)}`);
  return Prisma.join(conditions, ' AND ');
}

/**
 * A page source over `calls c` (CALL_ORDER is `c.seq`); `prisma` the same conditions and order in
 * Prisma's terms, for a selection with relations; null when Prisma can't express them (the page's
 * ids are then picked by SQL and their rows loaded by Prisma).
 */
export function callsSource(
  deps: AppDeps,
  sql: { where: Prisma.Sql; orderBy: 'c.seq' },
  prisma: { where: Prisma.CallWhereInput; orderBy: Prisma.CallOrderByWithRelationInput | Prisma.CallOrderByWithRelationInput[] } | null,
  query: CallQuery,
): PageSource<Call> {
  const calls = deps.db.prisma.call;
  return {
    model: 'Call',
    table: 'calls',
    alias: 'c',
    ...sql,
    seek: { columns: [{ expr: 'c.seq', type: 'int' }], op: '>' },
    relations: prisma
      ? {
          findPage: async (skip, take) => (await calls.findMany({ ...query, where: prisma.where, orderBy: prisma.orderBy, skip, take })) as Call[],
          count: () => calls.count({ where: prisma.where }),
        }
      : { loadByIds: callsByIds(deps, query) },
  };
}

/** Loads calls by id with a selection that loads relations (Prisma plans it); order not kept. */
export function callsByIds(deps: AppDeps, query: CallQuery): (ids: string[]) => Promise<Call[]> {
  return async (ids) => (await deps.db.prisma.call.findMany({ ...query, where: { id: { in: ids } } })) as Call[];
}

export function hasFilter(filter: CallFilter & { outcome?: string | null }): boolean {
  return filter.status != null || filter.externalId != null || filter.transcriptStatus != null || filter.outcome != null;
}
