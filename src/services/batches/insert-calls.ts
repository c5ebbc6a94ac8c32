// Bulk insert of a new batch's calls: one COPY per chunk of rows, inside the caller's
// transaction. Prisma's createMany (≈7k rows/s) and row-by-row inserts are far too slow for
// batches of 100k contacts; COPY also beats INSERT … SELECT FROM unnest(...) (no per-row executor
// work, heap pages written a thousand rows at a time; bench/create-batch), and chunks keep each
// statement's text, and what the embedded database holds of it at once, small.
import type { NormalizedContact } from '../../domain/contacts.ts';
import type { CallWindowPlacement } from '../../domain/call-windows.ts';
import { newIds } from '../../domain/ids.ts';
import { copyField } from '../../db/copy-rows.ts';
import type { SqlTransaction, SqlTx } from '../../db/sql-transaction.ts';

/**
 * Rows per COPY. On PostgreSQL large enough to amortise round trips, small enough to bound what one
 * holds. PGlite has no round trips, and every chunk's text is copied into the embedded database's
 * memory (a blob, its file, the WebAssembly heap it grows): 1,000 kept a 100k-contact create ~35 MB
 * lower than 5,000, at the same speed (bench/create-batch).
 */
export const CALL_CHUNK_SIZE = { postgres: 5_000, pglite: 1_000 } as const;

export type InitialCallStatus = 'pending' | 'queued';

export interface NewCall {
  contact: NormalizedContact;
  status: InitialCallStatus;
  /** Its zones and first opening, in a windowed batch. */
  window?: CallWindowPlacement | null;
}

export interface CallsOwner {
  accountId: string;
  batchId: string;
  agentId: string;
  promptVersionId: string;
  createdAt: Date;
}

export interface InsertCallsOptions {
  /** Default CALL_CHUNK_SIZE.postgres. */
  chunkSize?: number;
  /**
   * Test seam: runs after each chunk, inside the transaction, which it may use (a throw, or a
   * failing statement, rolls everything back). It must not use Prisma (see withSqlTransaction).
   */
  afterChunk?: (chunkIndex: number, tx: SqlTx) => void | Promise<void>;
}

const CALL_COLUMNS = [
  'id', 'seq', 'account_id', 'batch_id', 'agent_id', 'prompt_version_id', 'created_at', 'updated_at', 'external_id', 'name',
  'phone_number', 'alternate_phone', 'metadata', 'status', 'timezone', 'next_attempt_at', 'window_closes_at',
] as const;

/**
 * Inserts `calls` in submission order; seq is the 1-based position among them. While one chunk
 * is written by the database, the next one's rows are built, so on PostgreSQL the two processes
 * work side by side instead of taking turns.
 */
export async function insertCalls(tx: SqlTransaction, owner: CallsOwner, calls: NewCall[], opts: InsertCallsOptions = {}): Promise<void> {
  const chunkSize = Math.max(1, opts.chunkSize ?? CALL_CHUNK_SIZE.postgres);
  const createdAt = owner.createdAt.toISOString();
  // The columns every row of the batch shares, between its seq and its external id.
  const shared = [owner.accountId, owner.batchId, owner.agentId, owner.promptVersionId].map(copyField).join('\t') + `\t${createdAt}\t${createdAt}`;
  let inFlight: Promise<unknown> | null = null;
  let chunk = 0;
  try {
    for (let start = 0; start < calls.length; start += chunkSize) {
      const rows = chunkRows(calls, start, Math.min(start + chunkSize, calls.length), shared);
      if (inFlight) {
        await inFlight;
        await opts.afterChunk?.(chunk++, tx);
      }
      inFlight = tx.copyRows('calls', CALL_COLUMNS, rows);
    }
    if (inFlight) {
      await inFlight;
      await opts.afterChunk?.(chunk, tx);
    }
  } catch (e) {
    // Never leave a statement running unobserved: its failure would be an unhandled rejection.
    await inFlight?.catch(() => {});
    throw e;
  }
}

/** calls[start, end) as COPY text rows in CALL_COLUMNS order; the window columns null in a plain batch. */
function chunkRows(calls: NewCall[], start: number, end: number, shared: string): string {
  const ids = newIds('call', end - start);
  let out = '';
  for (let i = start; i < end; i++) {
    const { contact, status, window } = calls[i];
    out +=
      `${ids[i - start]}\t${i + 1}\t${shared}\t${copyField(contact.externalId)}\t${copyField(contact.name)}\t` +
      `${copyField(contact.phoneNumber)}\t${copyField(contact.alternatePhone)}\t${copyField(JSON.stringify(contact.metadata))}\t${status}\t` +
      (window
        ? `${copyField(window.timezone)}\t${window.nextAttemptAt?.toISOString() ?? '\\N'}\t${window.windowClosesAt.toISOString()}\n`
        : '\\N\t\\N\t\\N\n');
  }
  return out;
}
