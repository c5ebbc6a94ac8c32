// Offset pagination shared by every list use case (REST pages and the GraphQL offset fields).
import { requestValidation } from '../errors.ts';
import { MAX_INT } from '../domain/limits.ts';

export interface PageSpec {
  defaultLimit: number;
  maxLimit: number;
}

/** Page sizes from the contract's Limits table. */
export const BATCH_LIST_PAGE: PageSpec = { defaultLimit: 50, maxLimit: 200 };
export const BATCH_CALLS_PAGE: PageSpec = { defaultLimit: 100, maxLimit: 200 };
export const BATCH_RESULTS_PAGE: PageSpec = { defaultLimit: 100, maxLimit: 200 };
export const CALL_RECORDS_PAGE: PageSpec = { defaultLimit: 50, maxLimit: 200 };
export const SUPPRESSIONS_PAGE: PageSpec = { defaultLimit: 50, maxLimit: 200 };

/**
 * Largest accepted page number. Pages travel as GraphQL `Int` (32-bit); anything above can't be a
 * real page anyway (it would skip more rows than a table holds).
 */
export const MAX_PAGE = MAX_INT;

/** A problem with one input field, in pydantic's wording; the surface adds the location prefix. */
export interface FieldIssue {
  field: string;
  reason: string;
}

export const reasons = {
  required: 'Field required',
  integer: 'Input should be a valid integer, unable to parse string as an integer',
  ge: (n: number) => `Input should be greater than or equal to ${n}`,
  le: (n: number) => `Input should be less than or equal to ${n}`,
  oneOf: (values: readonly string[]) =>
    `Input should be ${
      values.length > 1
        ? values
            .slice(0, -1)
            .map((v) => `'${v}'`)
            .join(', ') + ` or '${values.at(-1)}'`
        : `'${values[0]}'`
    }`,
};

export function integerRangeIssues(field: string, value: number, min: number, max: number | null): FieldIssue[] {
  if (value < min) return [{ field, reason: reasons.ge(min) }];
  if (max !== null && value > max) return [{ field, reason: reasons.le(max) }];
  return [];
}

/** Throws the contract's 422 envelope for the collected issues (none: no-op). */
export function throwIfIssues(issues: FieldIssue[], prefix = ''): void {
  if (issues.length) throw requestValidation(issues.map((i) => `${prefix}${i.field}: ${i.reason}`));
}

const FIRST_MS = new Date('0001-01-01T00:00:00.000Z').getTime();
const LAST_MS = new Date('9999-12-31T23:59:59.999Z').getTime();

/**
 * A timestamp filter bound inside years 0001–9999: outside them JavaScript writes extended ISO
 * years (`+010000-…`) that PostgreSQL rejects, and no row is stored there anyway.
 */
export function clampBound(d: Date): Date {
  const ms = d.getTime();
  return ms < FIRST_MS ? new Date(FIRST_MS) : ms > LAST_MS ? new Date(LAST_MS) : d;
}

export interface PageRequest {
  page: number;
  limit: number;
}

export interface Pagination {
  page: number;
  limit: number;
  total: number;
  hasMore: boolean;
}

export interface PageArgs {
  page?: number | null;
  limit?: number | null;
}

/**
 * Applies defaults and checks ranges. `limitMax: false` leaves the upper bound to the caller
 * (call records report it in a different error form).
 */
export function pageIssues(
  args: PageArgs,
  spec: PageSpec,
  names: { page: string; limit: string } = { page: 'page', limit: 'limit' },
  opts: { limitMax?: boolean } = {},
): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (args.page != null) issues.push(...integerRangeIssues(names.page, args.page, 1, MAX_PAGE));
  if (args.limit != null) {
    issues.push(...integerRangeIssues(names.limit, args.limit, 1, opts.limitMax === false ? null : spec.maxLimit));
  }
  return issues;
}

export function pageRequest(args: PageArgs, spec: PageSpec): PageRequest {
  return { page: args.page ?? 1, limit: args.limit ?? spec.defaultLimit };
}

export function offsetOf(req: PageRequest): number {
  return (req.page - 1) * req.limit;
}

export function pagination(req: PageRequest, total: number): Pagination {
  return { page: req.page, limit: req.limit, total, hasMore: offsetOf(req) + req.limit < total };
}
