// Imports of the national do-not-call registry's files and of reassigned-number results
// (docs/campaigns.md "National do-not-call registry", docs/operations.md). Streamed: a byte stream
// is split into lines in place, numbers set bits of per-NPA-NXX blocks held in memory (at most
// FLUSH_BLOCKS of 1,250 bytes), and full blocks are merged into the table in one statement each
// flush. Bad lines are counted, the first few named. Imports of one table should not run at once.
import { withSqlTransaction } from '../../db/sql-transaction.ts';
import type { Database } from '../../db/client.ts';
import {
  BLOCK_BYTES,
  bitOf,
  blockOf,
  isHeaderOrBlank,
  MAX_LISTED_BAD_LINES,
  parseReassignedLine,
  parseRegistryBytes,
  setBit,
  type RegistryImportMode,
} from '../../domain/registry.ts';
import { LineSplitter } from './line-splitter.ts';

/** Blocks held before a flush: 4,096 × 1,250 bytes ≈ 5 MB, and one statement of ≈ 10 MB of hex. */
export const FLUSH_BLOCKS = 4_096;
/** Reassigned numbers per statement. */
const REASSIGNED_CHUNK = 10_000;

export interface BadLine {
  line: number;
  text: string;
}

export interface RegistryImportResult {
  /** Lines read (blank and header lines included). */
  lines: number;
  /** Valid numbers read (a number repeated in the file counts each time). */
  numbers: number;
  badLines: number;
  /** The first MAX_LISTED_BAD_LINES bad lines, by line number (counted from `firstLine`). */
  badLineSamples: BadLine[];
  /** Distinct NPA-NXX blocks written. */
  blocks: number;
  /** Area codes seen, ascending (a full import's finish removes the others' blocks of these). */
  areaCodes: number[];
}

export interface RegistryImportOptions {
  mode: RegistryImportMode;
  /** `full`: blocks not written since this moment (registryClock's text, to the microsecond) are replaced, not merged. */
  since?: string;
  /** The file line of the stream's first line (a CLI part of a larger file). */
  firstLine?: number;
}

const MERGE: Record<'add' | 'full', string> = {
  add: `INSERT INTO dnc_registry_blocks (prefix, bits, updated_at)
        SELECT t.p, ('x' || t.h)::bit(10000), now() FROM unnest($1::int[], $2::text[]) AS t(p, h)
        ON CONFLICT (prefix) DO UPDATE SET bits = dnc_registry_blocks.bits | EXCLUDED.bits, updated_at = EXCLUDED.updated_at`,
  // A block last written before this import began is replaced by the file's; after, merged.
  full: `INSERT INTO dnc_registry_blocks (prefix, bits, updated_at)
         SELECT t.p, ('x' || t.h)::bit(10000), now() FROM unnest($1::int[], $2::text[]) AS t(p, h)
         ON CONFLICT (prefix) DO UPDATE SET
           bits = CASE WHEN dnc_registry_blocks.updated_at < $3::timestamptz THEN EXCLUDED.bits ELSE dnc_registry_blocks.bits | EXCLUDED.bits END,
           updated_at = EXCLUDED.updated_at`,
};
const REMOVE = `UPDATE dnc_registry_blocks b SET bits = b.bits & ~(('x' || t.h)::bit(10000)), updated_at = now()
                  FROM unnest($1::int[], $2::text[]) AS t(p, h) WHERE b.prefix = t.p`;
// A second statement: one statement's CTE and its main part cannot both change a row.
const DROP_EMPTY = `DELETE FROM dnc_registry_blocks WHERE prefix = ANY($1::int[]) AND bit_count(bits) = 0`;

/**
 * The database's clock, where a full import's `since` comes from (the blocks' updated_at is its too),
 * as ISO text to the microsecond: cut to a JavaScript Date's millisecond it could fall before a block
 * written in the same millisecond just before, which would then count as written during the import.
 */
export async function registryClock(db: Database): Promise<string> {
  const [row] = await withSqlTransaction(db, (tx) =>
    tx.query<{ now: string }>(`SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS now`),
  );
  return row.now;
}

export async function importRegistryNumbers(
  db: Database,
  bytes: AsyncIterable<Uint8Array>,
  opts: RegistryImportOptions,
): Promise<RegistryImportResult> {
  if (opts.mode === 'full' && !opts.since) throw new Error('a full import needs its start (registryClock)');
  const offset = (opts.firstLine ?? 1) - 1;
  const result: RegistryImportResult = { lines: 0, numbers: 0, badLines: 0, badLineSamples: [], blocks: 0, areaCodes: [] };
  const areaCodes = new Set<number>();
  const written = new Set<number>();
  let held = new Map<number, Uint8Array>();
  const bad = (bytesOf: Uint8Array, start: number, end: number, lineNo: number) => {
    result.badLines++;
    if (result.badLineSamples.length < MAX_LISTED_BAD_LINES) {
      result.badLineSamples.push({ line: offset + lineNo, text: Buffer.from(bytesOf.subarray(start, end)).toString('latin1') });
    }
  };
  const splitter = new LineSplitter((b, start, end, lineNo, tooLong) => {
    if (tooLong) return bad(b, start, end, lineNo);
    const n = parseRegistryBytes(b, start, end);
    if (n === null) {
      if (!isHeaderOrBlank(Buffer.from(b.subarray(start, end)).toString('latin1'))) bad(b, start, end, lineNo);
      return;
    }
    result.numbers++;
    const prefix = blockOf(n);
    let block = held.get(prefix);
    if (!block) held.set(prefix, (block = new Uint8Array(BLOCK_BYTES)));
    setBit(block, bitOf(n));
  });
  const flush = async () => {
    if (held.size === 0) return;
    const prefixes = [...held.keys()];
    const hex = prefixes.map((p) => Buffer.from(held.get(p)!).toString('hex'));
    held = new Map();
    for (const p of prefixes) {
      written.add(p);
      areaCodes.add(Math.floor(p / 1000));
    }
    await withSqlTransaction(db, async (tx) => {
      if (opts.mode !== 'remove') return tx.query(MERGE[opts.mode], opts.mode === 'full' ? [prefixes, hex, opts.since!] : [prefixes, hex]);
      await tx.query(REMOVE, [prefixes, hex]);
      return tx.query(DROP_EMPTY, [prefixes]);
    });
  };
  for await (const chunk of bytes) {
    splitter.push(chunk);
    if (held.size >= FLUSH_BLOCKS) await flush();
  }
  splitter.end();
  await flush();
  result.lines = splitter.lineNo;
  result.blocks = written.size;
  result.areaCodes = [...areaCodes].sort((a, b) => a - b);
  return result;
}

/**
 * The end of a full import: blocks of `areaCodes` not written since `since` hold numbers the new
 * files no longer list, and are removed. Returns how many were.
 */
export async function finishFullImport(db: Database, since: string, areaCodes: readonly number[]): Promise<number> {
  if (areaCodes.length === 0) return 0;
  const rows = await withSqlTransaction(db, (tx) =>
    tx.query<{ n: number }>(
      `WITH gone AS (DELETE FROM dnc_registry_blocks b USING unnest($1::int[]) AS a(npa)
                      WHERE b.prefix BETWEEN a.npa * 1000 AND a.npa * 1000 + 999 AND b.updated_at < $2::timestamptz
                      RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      [areaCodes, since],
    ),
  );
  return rows[0].n;
}

export interface ReassignedImportResult {
  lines: number;
  numbers: number;
  badLines: number;
  badLineSamples: BadLine[];
}

/**
 * Reassigned-number results, one `<number>,<YYYY-MM-DD>` a line (a header line without digits is
 * skipped): each number keeps the latest reassignment date it was given.
 */
export async function importReassignedNumbers(
  db: Database,
  bytes: AsyncIterable<Uint8Array>,
  opts: { firstLine?: number } = {},
): Promise<ReassignedImportResult> {
  const offset = (opts.firstLine ?? 1) - 1;
  const result: ReassignedImportResult = { lines: 0, numbers: 0, badLines: 0, badLineSamples: [] };
  let held = new Map<number, string>();
  const splitter = new LineSplitter((b, start, end, lineNo, tooLong) => {
    const text = Buffer.from(b.subarray(start, end)).toString('latin1');
    const parsed = tooLong ? null : parseReassignedLine(text);
    if (parsed === null) {
      if (tooLong || !isHeaderOrBlank(text)) {
        result.badLines++;
        if (result.badLineSamples.length < MAX_LISTED_BAD_LINES) result.badLineSamples.push({ line: offset + lineNo, text });
      }
      return;
    }
    result.numbers++;
    const before = held.get(parsed.number);
    if (before === undefined || before < parsed.reassignedOn) held.set(parsed.number, parsed.reassignedOn);
  });
  const flush = async () => {
    if (held.size === 0) return;
    // In key order: the primary key's pages are then visited once each, in order.
    const numbers = [...held.keys()].sort((x, y) => x - y);
    const days = numbers.map((n) => held.get(n)!);
    held = new Map();
    await withSqlTransaction(db, (tx) =>
      tx.query(
        `INSERT INTO reassigned_numbers (number, reassigned_on, updated_at)
         SELECT t.n, t.d, now() FROM unnest($1::bigint[], $2::date[]) AS t(n, d)
         ON CONFLICT (number) DO UPDATE SET reassigned_on = GREATEST(reassigned_numbers.reassigned_on, EXCLUDED.reassigned_on),
                                            updated_at = EXCLUDED.updated_at`,
        [numbers, days],
      ),
    );
  };
  for await (const chunk of bytes) {
    splitter.push(chunk);
    if (held.size >= REASSIGNED_CHUNK) await flush();
  }
  splitter.end();
  await flush();
  result.lines = splitter.lineNo;
  return result;
}
