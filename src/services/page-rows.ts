// The rows and the total of one offset page, by SQL conditions on one table. A Prisma model query
// compiles on every call and maps every column of every row itself (Prisma 6): on a page of 200
// calls that was ~6 ms of CPU, more than reading and serialising the page costs. So a selection of
// plain columns (what the REST pages ask for) is one statement on the driver, rows keyed like
// Prisma's, the count riding along; a selection that loads relations (dashboards, GraphQL clients)
// is Prisma's to plan: the same conditions in Prisma's terms, or the page's ids picked here when
// Prisma can't express them (the results' outcome filter).
import type { Database } from '../db/client.ts';
import { plainFields, scalarFields, selectList, type ModelQuery } from '../db/model-columns.ts';
import { runStatement } from '../db/sql-statement.ts';
import { Prisma } from '../generated/prisma/client.ts';
import { offsetOf, type PageRequest } from './pagination.ts';

export interface PageSource<T> {
  model: 'Call' | 'Batch';
  /** `calls c`: the table and the alias the conditions and order use. */
  table: 'calls' | 'batches';
  alias: string;
  where: Prisma.Sql;
  /** Ends with a unique column, so pages never overlap. */
  orderBy: string;
  /** For a selection that loads relations. */
  relations: PrismaPage<T> | { loadByIds(ids: string[]): Promise<T[]> };
}

/** The same page through Prisma (where and order as above, in Prisma's terms), with the selection. */
export interface PrismaPage<T> {
  findPage(skip: number, take: number): Promise<T[]>;
  count(): Promise<number>;
}

const SCALARS = { Call: scalarFields('Call'), Batch: scalarFields('Batch') };

/** The count rides on the page's rows (an InitPlan run once), saving a statement's round trip. */
const TOTAL = 'pageTotal';

/**
 * The page's rows, and the number of rows the conditions match: `knownTotal` when the caller has
 * it (a batch's counters), else counted in the same statement. Rows read by statement carry that
 * count as one more property (`pageTotal`), which no field reads.
 */
export async function readPage<T extends { id: string }>(
  db: Database,
  source: PageSource<T>,
  req: PageRequest,
  query: ModelQuery,
  knownTotal: number | null = null,
): Promise<{ items: T[]; total: number }> {
  // A page past the end would still walk the index up to its offset; with the total known, skip it.
  if (knownTotal !== null && offsetOf(req) >= knownTotal) return { items: [], total: knownTotal };
  const fields = plainFields(source.model, query, SCALARS[source.model]);
  const { relations } = source;
  if (!fields && 'findPage' in relations) {
    const [items, total] = await Promise.all([relations.findPage(offsetOf(req), req.limit), knownTotal ?? relations.count()]);
    return { items, total };
  }
  const from = Prisma.raw(`${source.table} ${source.alias}`);
  const columns = [fields ? selectList(fields, source.alias) : `${source.alias}.id AS "id"`];
  // The subquery's alias shadows the outer one, so the same conditions read its own rows.
  const count = knownTotal === null ? Prisma.sql`, (SELECT count(*)::int FROM ${from} WHERE ${source.where}) AS "${Prisma.raw(TOTAL)}"` : Prisma.empty;
  const sql = Prisma.sql`SELECT ${Prisma.raw(columns.join(', '))}${count} FROM ${from} WHERE ${source.where}
    ORDER BY ${Prisma.raw(source.orderBy)} LIMIT ${req.limit} OFFSET ${offsetOf(req)}`;
  const rows = await runStatement<T & { [TOTAL]?: number }>(db, sql.text, sql.values);
  const total = knownTotal ?? rows[0]?.[TOTAL] ?? (offsetOf(req) > 0 ? await countRows(db, source) : 0);
  if (fields || rows.length === 0 || !('loadByIds' in relations)) return { items: rows, total };
  return { items: await loadInOrder(rows.map((r) => r.id), relations.loadByIds), total };
}

/** The rows of `ids` in that order, loaded by `load`; a row gone meanwhile is left out. */
export async function loadInOrder<T extends { id: string }>(ids: string[], load: (ids: string[]) => Promise<T[]>): Promise<T[]> {
  if (ids.length === 0) return [];
  const byId = new Map((await load(ids)).map((r) => [r.id, r]));
  return ids.map((id) => byId.get(id)).filter((r): r is T => r !== undefined);
}

export async function countRows(db: Database, source: Pick<PageSource<unknown>, 'table' | 'alias' | 'where'>): Promise<number> {
  const sql = Prisma.sql`SELECT count(*)::int AS n FROM ${Prisma.raw(`${source.table} ${source.alias}`)} WHERE ${source.where}`;
  const [row] = await runStatement<{ n: number }>(db, sql.text, sql.values);
  return row.n;
}
