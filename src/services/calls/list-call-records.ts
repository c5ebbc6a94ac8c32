// Call records of the whole account over an inclusive range of UTC days, newest first.
import type { AppDeps } from '../../deps.ts';
import { unprocessable } from '../../errors.ts';
import { Prisma, type Account, type Call } from '../../generated/prisma/client.ts';
import { callsSource, type CallQuery } from './list-batch-calls.ts';
import { readPage } from '../page-rows.ts';
import {
  CALL_RECORDS_PAGE,
  pageIssues,
  pageRequest,
  pagination,
  reasons,
  throwIfIssues,
  type FieldIssue,
  type Pagination,
} from '../pagination.ts';

const DAY_MS = 86_400_000;

/**
 * A `YYYY-MM-DD` calendar day as UTC midnight, or the reason it isn't one (pydantic's wording,
 * `Input should be a valid date in the format YYYY-MM-DD, <why>`).
 */
export function parseUtcDay(value: string): { date: Date } | { reason: string } {
  const bad = (why: string) => ({ reason: `Input should be a valid date in the format YYYY-MM-DD, ${why}` });
  const digits = (from: number, to: number) => /^\d+$/.test(value.slice(from, to));
  if (value.length < 10) return bad('input is too short');
  if (!digits(0, 4)) return bad('invalid character in year');
  if (value[4] !== '-') return bad('invalid date separator, expected `-`');
  if (!digits(5, 7)) return bad('invalid character in month');
  if (value[7] !== '-') return bad('invalid date separator, expected `-`');
  if (!digits(8, 10)) return bad('invalid character in day');
  if (value.length > 10) return bad('unexpected extra characters at the end of the input');
  const [y, m, d] = [Number(value.slice(0, 4)), Number(value.slice(5, 7)), Number(value.slice(8, 10))];
  if (y < 1) return bad('year value is outside expected range of 1-9999');
  if (m < 1 || m > 12) return bad('month value is outside expected range of 1-12');
  // setUTCFullYear, unlike Date.UTC, keeps years below 100 as written.
  const date = new Date(0);
  date.setUTCFullYear(y, m - 1, d);
  if (d < 1 || date.getUTCMonth() !== m - 1) return bad('day value is outside expected range');
  return { date };
}

export interface CallRecordsInput {
  /** `YYYY-MM-DD`, inclusive, UTC. */
  startDate: string;
  endDate: string;
  agentIds?: readonly string[] | null;
  page?: number | null;
  pageSize?: number | null;
}

/** Format problems of the inputs (the 422 envelope); the range and page-size rules come later. */
export function callRecordsIssues(
  input: Partial<CallRecordsInput>,
  names = { startDate: 'startDate', endDate: 'endDate', page: 'page', pageSize: 'pageSize' },
): FieldIssue[] {
  const issues: FieldIssue[] = [];
  for (const key of ['startDate', 'endDate'] as const) {
    const v = input[key];
    if (v == null) issues.push({ field: names[key], reason: reasons.required });
    else {
      const parsed = parseUtcDay(v);
      if ('reason' in parsed) issues.push({ field: names[key], reason: parsed.reason });
    }
  }
  issues.push(
    ...pageIssues({ page: input.page, limit: input.pageSize }, CALL_RECORDS_PAGE, { page: names.page, limit: names.pageSize }, { limitMax: false }),
  );
  return issues;
}

interface RecordsRange {
  accountId: string;
  from: Date;
  /** The last millisecond of the end day (timestamps are stored at millisecond precision), so that 9999-12-31 needs no year 10000. */
  to: Date;
  agentIds: string[];
}

/** Validates the request and returns what selects its rows; both error forms of the contract live here. */
function recordsRange(account: Account, input: CallRecordsInput): RecordsRange {
  throwIfIssues(callRecordsIssues(input));
  const start = (parseUtcDay(input.startDate) as { date: Date }).date;
  const end = (parseUtcDay(input.endDate) as { date: Date }).date;
  if (start > end) throw unprocessable('start_date must be on or before end_date');
  return { accountId: account.id, from: start, to: new Date(end.getTime() + DAY_MS - 1), agentIds: [...new Set(input.agentIds ?? [])] };
}

/** The rows' filter for Prisma (the relay connection and its count). */
export function callRecordsWhere(account: Account, input: CallRecordsInput): Prisma.CallWhereInput {
  return recordsPrismaWhere(recordsRange(account, input));
}

function recordsPrismaWhere(range: RecordsRange): Prisma.CallWhereInput {
  const where: Prisma.CallWhereInput = { accountId: range.accountId, createdAt: { gte: range.from, lte: range.to } };
  if (range.agentIds.length === 1) where.agentId = range.agentIds[0];
  else if (range.agentIds.length > 1) where.agentId = { in: range.agentIds };
  return where;
}

/** The same filter in SQL on `calls c` (the offset page, read by statement). */
function callRecordsConditions(range: RecordsRange): Prisma.Sql {
  const conditions = [
    Prisma.sql`c.account_id = ${range.accountId}`,
    Prisma.sql`c.created_at >= ${range.from.toISOString()}::timestamptz`,
    Prisma.sql`c.created_at <= ${range.to.toISOString()}::timestamptz`,
  ];
  if (range.agentIds.length === 1) conditions.push(Prisma.sql`c.agent_id = ${range.agentIds[0]}`);
  else if (range.agentIds.length > 1) conditions.push(Prisma.sql`c.agent_id = ANY(${range.agentIds}::text[])`);
  return Prisma.join(conditions, ' AND ');
}

/** Newest first; id (time-ordered) breaks ties between calls created together. */
export const CALL_RECORD_ORDER: Prisma.CallOrderByWithRelationInput[] = [{ createdAt: 'desc' }, { id: 'desc' }];

export async function listCallRecords(
  deps: AppDeps,
  account: Account,
  input: CallRecordsInput,
  query: CallQuery = {},
): Promise<{ items: Call[]; pagination: Pagination }> {
  const range = recordsRange(account, input);
  if (input.pageSize != null && input.pageSize > CALL_RECORDS_PAGE.maxLimit) {
    throw unprocessable(`page_size must be less than or equal to ${CALL_RECORDS_PAGE.maxLimit}`);
  }
  const req = pageRequest({ page: input.page, limit: input.pageSize }, CALL_RECORDS_PAGE);
  const source = callsSource(
    deps,
    // CALL_RECORD_ORDER in SQL.
    { where: callRecordsConditions(range), orderBy: 'c.created_at DESC, c.id DESC' },
    { where: recordsPrismaWhere(range), orderBy: CALL_RECORD_ORDER },
    query,
  );
  const { items, total } = await readPage(deps.db, source, req, query);
  return { items, pagination: pagination(req, total) };
}

/** Rows for a relay connection over the same filter. */
export async function callRecordsForConnection(
  deps: AppDeps,
  account: Account,
  input: Omit<CallRecordsInput, 'page' | 'pageSize'>,
  query: CallQuery & { take?: number; skip?: number; cursor?: Prisma.CallWhereUniqueInput },
): Promise<Call[]> {
  const where = callRecordsWhere(account, input);
  return (await deps.db.prisma.call.findMany({ ...query, where, orderBy: CALL_RECORD_ORDER })) as Call[];
}

export async function countCallRecords(deps: AppDeps, account: Account, input: Omit<CallRecordsInput, 'page' | 'pageSize'>): Promise<number> {
  return deps.db.prisma.call.count({ where: callRecordsWhere(account, input) });
}
