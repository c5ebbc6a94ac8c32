// Use case: the account's do-not-call list, newest first (then by number). A list holds up to
// 1,000,000 numbers, so every read is a range of the index on (account_id, created_at DESC,
// phone_number) and costs one page: offset pages reach the first MAX_SUPPRESSIONS_OFFSET numbers
// (an OFFSET walks the index up to it), a cursor (the page's next_cursor) any depth. The total is
// the counter the triggers keep (migration suppression_list_order), not a count of the list.
import type { AppDeps } from '../../deps.ts';
import { fixedStatement, runStatement } from '../../db/sql-statement.ts';
import { withSqlTransaction } from '../../db/sql-transaction.ts';
import { suppressionNumber } from '../../domain/suppressions.ts';
import type { Account, Suppression } from '../../generated/prisma/client.ts';
import {
  offsetOf,
  pageIssues,
  pageRequest,
  SUPPRESSIONS_PAGE,
  throwIfIssues,
  type FieldIssue,
  type PageArgs,
  type PageRequest,
  type Pagination,
} from '../pagination.ts';
import { decodeCursor, encodeCursor, type ListPosition } from './list-cursor.ts';

/** Rows an offset page may skip: at most this many index entries walked before the page. */
export const MAX_SUPPRESSIONS_OFFSET = 10_000;

export interface SuppressionFilter {
  /** One number, in any form the phone rules read; one they refuse matches nothing. */
  phoneNumber?: string | null;
}

export interface SuppressionPageArgs extends PageArgs {
  /** A page's `nextCursor`: the page after it, at any depth. Not with a page other than 1. */
  cursor?: string | null;
}

export interface SuppressionList {
  items: Suppression[];
  pagination: Pagination;
  /** Reads the next page; null on the last one. */
  nextCursor: string | null;
}

const COLUMNS = `account_id AS "accountId", phone_number AS "phoneNumber", reason, source, created_at AS "createdAt"`;
const ORDER = 'created_at DESC, phone_number';

const OFFSET_PAGE_SQL = `SELECT ${COLUMNS} FROM suppressions WHERE account_id = $1 ORDER BY ${ORDER} LIMIT $2 OFFSET $3`;

// Two exact index ranges (the rest of the cursor's timestamp, then older ones), each cut to a page
// before they are merged: a single `created_at <= $2` range would walk and drop every entry
// sharing that timestamp before the cursor (an add of 1,000 numbers shares one).
const AFTER_CURSOR_SQL = `
(SELECT ${COLUMNS} FROM suppressions WHERE account_id = $1 AND created_at = $2::timestamptz AND phone_number > $3 ORDER BY ${ORDER} LIMIT $4)
UNION ALL
(SELECT ${COLUMNS} FROM suppressions WHERE account_id = $1 AND created_at < $2::timestamptz ORDER BY ${ORDER} LIMIT $4)
ORDER BY "createdAt" DESC, "phoneNumber" LIMIT $4`;

/**
 * A page's rows. PGlite never analyses a table (no autovacuum in its single-user mode): without
 * statistics its planner guessed a few hundred rows per account and, for an offset or a cursor
 * range past that guess, read and sorted the whole list (1.5 s at 200,000 numbers) instead of
 * walking the index. The index gives the order, so on PGlite sorting is ruled out for the page's
 * statement (the cursor's merge of two page-sized ranges still sorts them: no other plan does it).
 * PostgreSQL's autovacuum keeps statistics, and it walks the index unaided.
 */
async function pageRows(deps: AppDeps, sql: string, params: unknown[]): Promise<Suppression[]> {
  if (deps.db.kind !== 'pglite') return runStatement<Suppression>(deps.db, sql, params);
  return withSqlTransaction(deps.db, async (tx) => {
    await tx.query('SET LOCAL enable_sort = off');
    return tx.query<Suppression>(sql, params);
  });
}

const COUNT_SQL = fixedStatement('SELECT count FROM suppression_counts WHERE account_id = $1');

const ONE_SQL = `SELECT ${COLUMNS} FROM suppressions WHERE account_id = $1 AND phone_number = $2`;

/** Problems with the paging arguments, checked before anything is read (REST reports them as `query.*`). */
export function suppressionPageIssues(args: SuppressionPageArgs): FieldIssue[] {
  const issues = pageIssues(args, SUPPRESSIONS_PAGE);
  if (issues.length) return issues;
  const req = pageRequest(args, SUPPRESSIONS_PAGE);
  if (args.cursor != null) {
    if (req.page !== 1) return [{ field: 'cursor', reason: 'Use either page or cursor, not both' }];
    if (decodeCursor(args.cursor) === null) return [{ field: 'cursor', reason: 'Invalid cursor: pass a next_cursor as it was given' }];
    return [];
  }
  if (offsetOf(req) > MAX_SUPPRESSIONS_OFFSET) {
    const maxPage = Math.floor(MAX_SUPPRESSIONS_OFFSET / req.limit) + 1;
    return [
      {
        field: 'page',
        reason: `Input should be less than or equal to ${maxPage} at limit ${req.limit}: pages reach the first ${MAX_SUPPRESSIONS_OFFSET} numbers; read further with cursor (a page's next_cursor)`,
      },
    ];
  }
  return [];
}

const positionOf = (s: Suppression, page: number): ListPosition => ({ createdAtMs: s.createdAt.getTime(), phoneNumber: s.phoneNumber, page });

/** Whether `s` comes after `p` in the list's order. */
const isAfter = (s: Suppression, p: ListPosition) =>
  s.createdAt.getTime() < p.createdAtMs || (s.createdAt.getTime() === p.createdAtMs && s.phoneNumber > p.phoneNumber);

export async function listSuppressions(deps: AppDeps, account: Account, input: SuppressionFilter & SuppressionPageArgs): Promise<SuppressionList> {
  throwIfIssues(suppressionPageIssues(input));
  const req = pageRequest(input, SUPPRESSIONS_PAGE);
  const after = input.cursor != null ? decodeCursor(input.cursor) : null;
  const page: PageRequest = { page: after?.page ?? req.page, limit: req.limit };
  if (input.phoneNumber != null) return oneNumber(deps, account, input.phoneNumber, page, after);

  // One row more than the page says whether another follows.
  const rowsP = after
    ? pageRows(deps, AFTER_CURSOR_SQL, [account.id, new Date(after.createdAtMs).toISOString(), after.phoneNumber, page.limit + 1])
    : pageRows(deps, OFFSET_PAGE_SQL, [account.id, page.limit + 1, offsetOf(page)]);
  const [rows, counted] = await Promise.all([rowsP, runStatement<{ count: number }>(deps.db, COUNT_SQL, [account.id])]);
  const more = rows.length > page.limit;
  const items = more ? rows.slice(0, page.limit) : rows;
  return {
    items,
    pagination: { page: page.page, limit: page.limit, total: counted[0]?.count ?? 0, hasMore: more },
    nextCursor: more ? encodeCursor(positionOf(items[items.length - 1], page.page + 1)) : null,
  };
}

/** The `phone_number` filter: the entry or nothing, by primary key, paged like the whole list. */
async function oneNumber(deps: AppDeps, account: Account, raw: string, page: PageRequest, after: ListPosition | null): Promise<SuppressionList> {
  const r = suppressionNumber(raw);
  const rows = 'reason' in r ? [] : await runStatement<Suppression>(deps.db, ONE_SQL, [account.id, r.number]);
  const onPage = after ? rows.filter((s) => isAfter(s, after)) : offsetOf(page) === 0 ? rows : [];
  return { items: onPage, pagination: { page: page.page, limit: page.limit, total: rows.length, hasMore: false }, nextCursor: null };
}
