// Call records of the whole account over an inclusive range of UTC days, newest first.
import type { AppDeps } from '../../deps.ts';
import { unprocessable } from '../../errors.ts';
import type { Account, Call } from '../../generated/prisma/client.ts';
import { plainFields } from '../../db/model-columns.ts';
import { callsByIds, type CallQuery } from './list-batch-calls.ts';
import { loadInOrder } from '../page-rows.ts';
import {
  countRecords,
  findCursorCall,
  offsetPageRanges,
  readRanges,
  walkRanges,
  type CursorCall,
  type Direction,
  type RecordsRange,
  type SeqRange,
} from './call-record-ranges.ts';
import {
  CALL_RECORDS_PAGE,
  offsetOf,
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

/** Validates the request and returns what selects its rows; both error forms of the contract live here. */
function recordsRange(account: Account, input: CallRecordsInput): RecordsRange {
  throwIfIssues(callRecordsIssues(input));
  const start = (parseUtcDay(input.startDate) as { date: Date }).date;
  const end = (parseUtcDay(input.endDate) as { date: Date }).date;
  if (start > end) throw unprocessable('start_date must be on or before end_date');
  return { accountId: account.id, from: start, to: new Date(end.getTime() + DAY_MS - 1), agentIds: [...new Set(input.agentIds ?? [])] };
}

/**
 * The calls of the ranges in their order: plain columns by statement, or, for a selection that
 * loads relations, the ids by statement and the rows through Prisma.
 */
async function callsOfRanges(deps: AppDeps, ranges: SeqRange[], direction: Direction, query: CallQuery): Promise<Call[]> {
  const fields = plainFields('Call', query);
  if (fields) return readRanges<Call>(deps.db, ranges, direction, fields);
  const ids = (await readRanges<{ id: string }>(deps.db, ranges, direction, null)).map((r) => r.id);
  return loadInOrder(ids, callsByIds(deps, query));
}

/** Newest first: batches by (created_at, id) descending, a batch's calls by seq descending (call-record-ranges.ts). */
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
  const { ranges, total } = await offsetPageRanges(deps.db, range, offsetOf(req), req.limit);
  return { items: await callsOfRanges(deps, ranges, 'newest', query), pagination: pagination(req, total) };
}

/**
 * Rows for a relay connection over the same records, as Prisma's cursor pagination returns them:
 * from the cursor call (inclusive) or an end, `skip` rows skipped, `take` rows (negative: backwards,
 * returned in order). A cursor that is not one of the account's calls gives no rows.
 */
export async function callRecordsForConnection(
  deps: AppDeps,
  account: Account,
  input: Omit<CallRecordsInput, 'page' | 'pageSize'>,
  { take = 0, skip = 0, cursor, ...query }: CallQuery & { take?: number; skip?: number; cursor?: { id?: string } },
): Promise<Call[]> {
  const range = recordsRange(account, input);
  let at: CursorCall | null = null;
  if (cursor) {
    at = cursor.id ? await findCursorCall(deps.db, account.id, cursor.id) : null;
    if (!at) return [];
  }
  const direction: Direction = take < 0 ? 'oldest' : 'newest';
  const ranges = await walkRanges(deps.db, range, direction, at, skip, Math.abs(take));
  const rows = await callsOfRanges(deps, ranges, direction, query);
  return direction === 'oldest' ? rows.reverse() : rows;
}

export async function countCallRecords(deps: AppDeps, account: Account, input: Omit<CallRecordsInput, 'page' | 'pageSize'>): Promise<number> {
  return countRecords(deps.db, recordsRange(account, input));
}
