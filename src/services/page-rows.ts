// The rows and the total of one offset page, by SQL conditions on one table. A Prisma model query
// compiles on every call and maps every column of every row itself (Prisma 6): on a page of 200
// calls that was ~6 ms of CPU, more than reading and serialising the page costs. So a selection of
// plain columns (what the REST pages ask for) is one statement on the driver, rows keyed like
// Prisma's, the count riding along; a selection that loads relations (dashboards, GraphQL clients)
// is Prisma's to plan: the same conditions in Prisma's terms, or the page's ids picked here when
// Prisma can't express them (the results' outcome filter).
import type { Database } from '../db/client.ts';
import { plainFields, scalarFields, selectList, type ModelQuery } from '../db/model-columns.ts';
import { inBulkLane } from '../db/pglite-turns.ts';
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
  /** The order's columns, so a deep offset can be reached in steps (seekPast). */
  seek?: PageSeek;
}

/** `orderBy`'s columns with their SQL types, and `<` when it is descending (`>` ascending). */
export interface PageSeek {
  columns: ReadonlyArray<{ expr: string; type: string }>;
  op: '<' | '>';
}

/**
 * An offset is walked in statements of at most this many index entries, the event loop getting a
 * turn between them: one deep page on PGlite (same thread) would otherwise hold every other request.
 */
export const SEEK_STEP = 2_000;

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
  const start = await seekPast(db, source, offsetOf(req));
  if (start === null) return { items: [], total: knownTotal ?? (await countRows(db, source)) };
  const columns = [fields ? selectList(fields, source.alias) : `${source.alias}.id AS "id"`];
  // The subquery's alias shadows the outer one, so the same conditions read its own rows.
  const count =
    knownTotal === null ? Prisma.sql`, (SELECT count(*)::int FROM ${from} WHERE ${source.where}) AS "${Prisma.raw(TOTAL)}"` : Prisma.empty;
  const sql = Prisma.sql`SELECT ${Prisma.raw(columns.join(', '))}${count} FROM ${from} WHERE ${source.where} AND ${start.after}
    ORDER BY ${Prisma.raw(source.orderBy)} LIMIT ${req.limit} OFFSET ${start.offset}`;
  const rows = await runStatement<T & { [TOTAL]?: number }>(db, sql.text, sql.values);
  const total = knownTotal ?? rows[0]?.[TOTAL] ?? (offsetOf(req) > 0 ? await countRows(db, source) : 0);
  if (fields || rows.length === 0 || !('loadByIds' in relations)) return { items: rows, total };
  return {
    items: await loadInOrder(
      rows.map((r) => r.id),
      relations.loadByIds,
    ),
    total,
  };
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Where a page `offset` rows deep starts: a condition past the last row of the whole steps before
 * it, and the offset left within the last step; null when the rows end before it. Each step reads
 * one key SEEK_STEP entries further, so the walk stays O(offset) but no statement is longer than a
 * step's.
 */
async function seekPast(db: Database, source: PageSource<unknown>, offset: number): Promise<{ after: Prisma.Sql; offset: number } | null> {
  let after: Prisma.Sql = Prisma.sql`TRUE`;
  const { seek } = source;
  if (!seek) return { after, offset };
  const keys = Prisma.raw(seek.columns.map((c, i) => `${c.expr}::text AS k${i}`).join(', '));
  const tuple = Prisma.raw(`(${seek.columns.map((c) => c.expr).join(', ')})`);
  let left = offset;
  while (left > SEEK_STEP) {
    const sql = Prisma.sql`SELECT ${keys} FROM ${Prisma.raw(`${source.table} ${source.alias}`)} WHERE ${source.where} AND ${after}
      ORDER BY ${Prisma.raw(source.orderBy)} LIMIT 1 OFFSET ${SEEK_STEP - 1}`;
    const [row] = await inBulkLane(() => runStatement<Record<string, string>>(db, sql.text, sql.values));
    if (!row) return null;
    const values = seek.columns.map((c, i) => Prisma.sql`${row[`k${i}`]}::${Prisma.raw(c.type)}`);
    after = Prisma.sql`${tuple} ${Prisma.raw(seek.op)} (${Prisma.join(values)})`;
    left -= SEEK_STEP;
    await nextTurn();
  }
  return { after, offset: left };
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
