// Call records are read through their batches. A batch's calls are created with it, in its
// transaction: they share its account, agent and created_at, and are numbered 1..accepted_contacts
// (seq) in the order of their ids. So an account's calls newest first are its batches newest
// first, each batch's calls by seq descending, and any page of them is a few ranges of seq found
// from the batches' sizes alone. `calls` then needs no index by account: two fewer index entries
// for every created call (docs/indexes.md), and a count is a sum over batches, not over calls.
import type { Database } from '../../db/client.ts';
import { selectList } from '../../db/model-columns.ts';
import { runStatement } from '../../db/sql-statement.ts';
import { Prisma } from '../../generated/prisma/client.ts';

/** Which batches' calls are records: conditions on `batches b`. */
export interface RecordsRange {
  accountId: string;
  from: Date;
  /** The last millisecond of the end day (timestamps are stored at millisecond precision), so that 9999-12-31 needs no year 10000. */
  to: Date;
  agentIds: string[];
}

/** `take` calls of one batch from seq `edge` on: downwards (newest first) or upwards. */
export interface SeqRange {
  batchId: string;
  edge: number;
  take: number;
}

export type Direction = 'newest' | 'oldest';

function batchConditions(range: RecordsRange): Prisma.Sql {
  const conditions = [
    Prisma.sql`b.account_id = ${range.accountId}`,
    // Never false for a committed batch; it keeps an empty one from taking a page's place.
    Prisma.sql`b.accepted_contacts > 0`,
    Prisma.sql`b.created_at >= ${range.from.toISOString()}::timestamptz`,
    Prisma.sql`b.created_at <= ${range.to.toISOString()}::timestamptz`,
  ];
  if (range.agentIds.length === 1) conditions.push(Prisma.sql`b.agent_id = ${range.agentIds[0]}`);
  else if (range.agentIds.length > 1) conditions.push(Prisma.sql`b.agent_id = ANY(${range.agentIds}::text[])`);
  return Prisma.join(conditions, ' AND ');
}

/**
 * The number of call records in the range: the counters of migration call_record_counts over its
 * UTC days (a range is whole days), one row per day and agent with records, not one per batch.
 */
export async function countRecords(db: Database, range: RecordsRange): Promise<number> {
  const conditions = [
    Prisma.sql`account_id = ${range.accountId}`,
    Prisma.sql`day BETWEEN (${range.from.toISOString()}::timestamptz AT TIME ZONE 'UTC')::date AND (${range.to.toISOString()}::timestamptz AT TIME ZONE 'UTC')::date`,
  ];
  if (range.agentIds.length) conditions.push(Prisma.sql`agent_id = ANY(${range.agentIds}::text[])`);
  const sql = Prisma.sql`SELECT COALESCE(sum(count), 0)::bigint AS n FROM call_record_counts WHERE ${Prisma.join(conditions, ' AND ')}`;
  const [row] = await runStatement<{ n: unknown }>(db, sql.text, sql.values);
  return Number(row.n);
}

/**
 * The ranges of an offset page and the range's total. A running sum over the batches newest first
 * finds the batches the page overlaps (at most `limit` of them: none is empty); the scan stops at the
 * page, so page 1 reads one page's batches (the total is the counters', countRecords).
 */
export async function offsetPageRanges(
  db: Database,
  range: RecordsRange,
  offset: number,
  limit: number,
): Promise<{ ranges: SeqRange[]; total: number }> {
  const sql = Prisma.sql`
    SELECT r.id, r.n, r.upto FROM (
      SELECT b.id, b.accepted_contacts AS n,
             sum(b.accepted_contacts) OVER (ORDER BY b.created_at DESC, b.id DESC ROWS UNBOUNDED PRECEDING) AS upto
        FROM batches b WHERE ${batchConditions(range)}
       ORDER BY b.created_at DESC, b.id DESC) r
     WHERE r.upto > ${offset}
     LIMIT ${limit}`;
  const [rows, total] = await Promise.all([
    runStatement<{ id: string; n: number; upto: unknown }>(db, sql.text, sql.values),
    countRecords(db, range),
  ]);
  const ranges: SeqRange[] = [];
  let wanted = limit;
  for (const row of rows) {
    if (wanted === 0) break;
    const before = Number(row.upto) - row.n;
    const skipped = Math.max(0, offset - before);
    const take = Math.min(row.n - skipped, wanted);
    ranges.push({ batchId: row.id, edge: row.n - skipped, take });
    wanted -= take;
  }
  return { ranges, total };
}

/** Where a relay cursor stands: its call's batch and seq. */
export interface CursorCall {
  batchId: string;
  seq: number;
  createdAt: Date;
}

/** The cursor call when it is one of the account's calls, else null (then the page is empty). */
export async function findCursorCall(db: Database, accountId: string, callId: string): Promise<CursorCall | null> {
  const [row] = await runStatement<{ batch_id: string; seq: number; created_at: Date }>(
    db,
    // A call's created_at is its batch's.
    'SELECT batch_id, seq, created_at FROM calls WHERE id = $1 AND account_id = $2',
    [callId, accountId],
  );
  return row ? { batchId: row.batch_id, seq: row.seq, createdAt: row.created_at } : null;
}

/**
 * The ranges of `take` records after `skip` of them, walking from the cursor call (inclusive) or
 * from the newest (`newest`) or oldest (`oldest`) end, as Prisma's cursor pagination does.
 */
export async function walkRanges(
  db: Database,
  range: RecordsRange,
  direction: Direction,
  at: CursorCall | null,
  skip: number,
  take: number,
): Promise<SeqRange[]> {
  const newest = direction === 'newest';
  const order = Prisma.raw(newest ? 'b.created_at DESC, b.id DESC' : 'b.created_at ASC, b.id ASC');
  const from = at
    ? Prisma.sql` AND (b.created_at, b.id) ${Prisma.raw(newest ? '<=' : '>=')} (${at.createdAt.toISOString()}::timestamptz, ${at.batchId})`
    : Prisma.empty;
  // Every batch has a call, so skip + take batches are always enough.
  const sql = Prisma.sql`SELECT b.id, b.accepted_contacts AS n FROM batches b WHERE ${batchConditions(range)}${from}
    ORDER BY ${order} LIMIT ${skip + take}`;
  const batches = await runStatement<{ id: string; n: number }>(db, sql.text, sql.values);
  const ranges: SeqRange[] = [];
  let toSkip = skip;
  let wanted = take;
  for (const b of batches) {
    if (wanted === 0) break;
    // The first and last seq of this batch in walking order.
    let first = newest ? b.n : 1;
    const last = newest ? 1 : b.n;
    if (at && b.id === at.batchId) first = at.seq;
    const size = Math.abs(last - first) + 1;
    const skipped = Math.min(toSkip, size);
    toSkip -= skipped;
    if (skipped === size) continue;
    const take = Math.min(size - skipped, wanted);
    ranges.push({ batchId: b.id, edge: newest ? first - skipped : first + skipped, take });
    wanted -= take;
  }
  return ranges;
}

/**
 * The calls of the ranges, in the ranges' order and each range's direction: the given columns
 * (`fields`, keyed like Prisma's rows) or only ids.
 */
export async function readRanges<T>(db: Database, ranges: SeqRange[], direction: Direction, fields: readonly string[] | null): Promise<T[]> {
  if (ranges.length === 0) return [];
  const newest = direction === 'newest';
  // Each range is a closed index range of (batch_id, seq): a batch whose calls the retention is
  // deleting yields fewer rows, never another page's.
  const seqs = newest ? 'BETWEEN s.edge - s.take + 1 AND s.edge' : 'BETWEEN s.edge AND s.edge + s.take - 1';
  const sql = `
    SELECT ${fields ? selectList(fields, 'c') : 'c.id AS "id"'}
      FROM unnest($1::text[], $2::int[], $3::int[]) WITH ORDINALITY AS s(batch_id, edge, take, ord)
     CROSS JOIN LATERAL (
       SELECT * FROM calls c WHERE c.batch_id = s.batch_id AND c.seq ${seqs}
        ORDER BY c.seq ${newest ? 'DESC' : 'ASC'}) c
     ORDER BY s.ord, c.seq ${newest ? 'DESC' : 'ASC'}`;
  return runStatement<T>(db, sql, [ranges.map((r) => r.batchId), ranges.map((r) => r.edge), ranges.map((r) => r.take)]);
}
