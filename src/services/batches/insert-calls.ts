// Bulk insert of a new batch's calls: one COPY per chunk of rows, inside the caller's
// transaction. Prisma's createMany (≈7k rows/s) and row-by-row inserts are far too slow for
// batches of 100k contacts; COPY also beats INSERT … SELECT FROM unnest(...) (no per-row executor
// work, heap pages written a thousand rows at a time; bench/create-batch), and chunks keep each
// statement's text, and what the embedded database holds of it at once, small.
import type { NormalizedContact } from '../../domain/contacts.ts';
import type { CallWindowPlacement } from '../../domain/call-windows.ts';
import { newIds } from '../../domain/ids.ts';
import { CopyBinary } from '../../db/copy-rows.ts';
import type { SqlTransaction, SqlTx } from '../../db/sql-transaction.ts';
import type { MarkPhase } from '../../phase-timer.ts';

/**
 * Contacts per COPY. On PostgreSQL large enough to amortise round trips, small enough to bound what one
 * holds; 2,000 measured as 5,000 from a client (a 10k create 182-193 ms against 186-191, alternating
 * runs of bench:create): a shorter last COPY, which no screening overlaps, but more statements for
 * the database. PGlite has no round trips, and every chunk's text is copied into the embedded
 * database's memory (a blob, its file, the WebAssembly heap it grows): 1,000 kept a 100k-contact
 * create ~35 MB lower than 5,000, at the same speed (bench/create-batch).
 */
export const CALL_CHUNK_SIZE = { postgres: 5_000, pglite: 1_000 } as const;

/**
 * Contacts in the first chunk, when that is smaller: the database starts writing once it is
 * screened, and the later, larger chunks are screened while it writes (screen-contacts.ts).
 */
export const FIRST_CALL_CHUNK_SIZE = 500;

/**
 * Each chunk after the first is this much larger than the one before it, up to the chunk size.
 * Screening a contact takes about 2/3 of the time the database takes to write it
 * (bench/create-batch), so a chunk 1.5 times the last is ready about when that one is written:
 * neither side waits for the other. A second chunk of 5,000 after a first of 1,000 left the
 * database idle ~35 ms of a 10k create.
 */
export const CALL_CHUNK_GROWTH = 1.5;

/** The sizes of the chunks `total` contacts are screened and written in, in order. */
export function callChunkSizes(total: number, firstChunkSize: number, chunkSize: number): number[] {
  const sizes: number[] = [];
  for (let from = 0, size = firstChunkSize; from < total; from += size, size = Math.min(chunkSize, Math.ceil(size * CALL_CHUNK_GROWTH)))
    sizes.push(Math.min(size, total - from));
  return sizes;
}

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
  /**
   * Test seam: runs after each chunk, inside the transaction, which it may use (a throw, or a
   * failing statement, rolls everything back). It must not use Prisma (see withSqlTransaction).
   */
  afterChunk?: (chunkIndex: number, tx: SqlTx) => void | Promise<void>;
  /**
   * Ends each phase as it is done: `screen` (waiting for the next chunk), `rows` (its COPY data),
   * `copy-wait` (the previous COPY), `copy-send`; each adds up over the chunks.
   */
  mark?: MarkPhase;
}

const CALL_COLUMNS = [
  'id',
  'seq',
  'account_id',
  'batch_id',
  'agent_id',
  'prompt_version_id',
  'created_at',
  'updated_at',
  'external_id',
  'name',
  'phone_number',
  'alternate_phone',
  'metadata',
  'status',
  'timezone',
  'next_attempt_at',
  'window_closes_at',
  'contact_timezone',
  'consent_source',
  'consent_at',
  'consent_text',
  'consent_reference',
] as const;

/**
 * Inserts the chunks' calls in order, one COPY each; seq is the 1-based position among all of
 * them. The next chunk is asked for only once this one's COPY is under way, so the work that
 * produces it (screen-contacts.ts) runs while the database writes: on PostgreSQL the two
 * processes work side by side instead of taking turns.
 * Returns the number of calls inserted.
 */
export async function insertCalls(
  tx: SqlTransaction,
  owner: CallsOwner,
  chunks: AsyncIterable<NewCall[]> | Iterable<NewCall[]>,
  opts: InsertCallsOptions = {},
): Promise<number> {
  // The fields every row of the batch shares, between its seq and its external id.
  const shared = new CopyBinary(256)
    .text(owner.accountId)
    .text(owner.batchId)
    .text(owner.agentId)
    .text(owner.promptVersionId)
    .timestamptz(owner.createdAt)
    .timestamptz(owner.createdAt)
    .fields();
  let inFlight: Promise<unknown> | null = null;
  let chunk = 0;
  let inserted = 0;
  const mark = opts.mark;
  try {
    for await (const calls of chunks) {
      mark?.('screen');
      if (calls.length === 0) continue;
      const rows = chunkRows(calls, inserted, shared);
      inserted += calls.length;
      mark?.('rows');
      if (inFlight) {
        await inFlight;
        await opts.afterChunk?.(chunk++, tx);
        mark?.('copy-wait');
      }
      const copy = tx.copyRows('calls', CALL_COLUMNS, rows);
      inFlight = copy.done;
      // Observed at once: it may fail while the next chunk is screened, before it is awaited.
      inFlight.catch(() => {});
      // The next chunk's synchronous work would hold the rows back until they are sent.
      await copy.sent;
      mark?.('copy-send');
    }
    if (inFlight) {
      await inFlight;
      await opts.afterChunk?.(chunk, tx);
      mark?.('copy-wait');
    }
  } catch (e) {
    // A failed COPY is the cause; a lookup queued behind it only failed because it did.
    const copyError = await inFlight?.then(
      () => null,
      (err: unknown) => err,
    );
    throw copyError ?? e;
  }
  return inserted;
}

/** The calls as COPY rows in CALL_COLUMNS order, seq from `before` + 1; the window columns null in a plain batch. */
function chunkRows(calls: NewCall[], before: number, shared: Uint8Array): Uint8Array<ArrayBuffer> {
  const ids = newIds('call', calls.length);
  const out = new CopyBinary(calls.length * (ROW_BYTES + shared.length));
  for (let i = 0; i < calls.length; i++) {
    const { contact, status, window } = calls[i];
    out
      .row(CALL_COLUMNS.length)
      .text(ids[i])
      .int4(before + i + 1)
      .raw(shared);
    out.text(contact.externalId).text(contact.name).text(contact.phoneNumber).text(contact.alternatePhone);
    out.jsonb(JSON.stringify(contact.metadata)).text(status);
    out
      .text(window?.timezone ?? null)
      .timestamptz(window?.nextAttemptAt ?? null)
      .timestamptz(window?.windowClosesAt ?? null);
    out.text(window?.contactTimezone ?? null);
    const consent = contact.consent ?? null;
    out
      .text(consent?.source ?? null)
      .timestamptz(consent?.at ?? null)
      .text(consent?.text ?? null)
      .text(consent?.reference ?? null);
  }
  return out.end();
}

/** A guess at a row's bytes besides the shared fields, so that a chunk's buffer seldom grows. */
const ROW_BYTES = 250;
