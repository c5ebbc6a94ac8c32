// COPY … FROM of rows in PostgreSQL's binary format, on either driver. A bulk insert by COPY skips
// the executor's per-row work of INSERT … SELECT and writes heap pages a thousand rows at a time
// (bench/create-batch). pg streams the bytes with pg-copy-streams; PGlite reads them as a blob.
import { finished } from 'node:stream/promises';
import type pg from 'pg';
import type { Transaction } from '@electric-sql/pglite';
import { from as copyFromStdin } from 'pg-copy-streams';

/** A COPY under way. */
export interface CopyInFlight {
  /**
   * Settles once the rows are in the connection's hands: the database answered the COPY and the
   * bytes went to the socket. Until then they wait on this process's event loop, so work that
   * holds the loop should wait for this first.
   */
  sent: Promise<void>;
  /** Settles once the database has written every row (rejects with its error). */
  done: Promise<void>;
}

/** `COPY <table> (<columns>) FROM …` of `rows` in the binary format (CopyBinary). */
export type CopyRows = (table: string, columns: readonly string[], rows: Uint8Array<ArrayBuffer>) => CopyInFlight;

const copySql = (table: string, columns: readonly string[], source: string) =>
  `COPY ${table} (${columns.join(', ')}) FROM ${source} WITH (FORMAT binary)`;

export function copyRowsPg(client: pg.PoolClient | pg.Client): CopyRows {
  return (table, columns, rows) => {
    const stream = client.query(copyFromStdin(copySql(table, columns, 'STDIN')));
    const done = finished(stream);
    // pg-copy-streams holds written bytes until the database's CopyInResponse, then calls back.
    const written = new Promise<void>((resolve) => stream.write(rows, () => resolve()));
    stream.end();
    return { sent: Promise.race([written, done.then(noop, noop)]), done };
  };
}

export function copyRowsPglite(tx: Pick<Transaction, 'query'>): CopyRows {
  return (table, columns, rows) => {
    // The embedded database runs on this thread: nothing is sent before it is done.
    const done = tx.query(copySql(table, columns, `'/dev/blob'`), [], { blob: new Blob([rows]) }).then(noop);
    return { sent: done.then(noop, noop), done };
  };
}

const noop = () => {};

/** PostgreSQL's timestamps count microseconds from 2000-01-01T00:00:00Z. */
const PG_EPOCH_MS = Date.UTC(2000, 0, 1);
const HEADER = Buffer.from('PGCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\0', 'latin1');
const JSONB_VERSION = 1;

/**
 * Rows in COPY's binary format, written field by field into one growing buffer: the database
 * parses no text (no escapes, timestamps or numbers to read: ~10 % of its work on a bulk insert of
 * calls, bench/create-batch), and a row costs this process no intermediate strings.
 */
export class CopyBinary {
  private buf: Buffer;
  private length = 0;

  constructor(expectedBytes: number) {
    this.buf = Buffer.allocUnsafe(Math.max(expectedBytes, 1024));
    this.raw(HEADER);
  }

  /** Starts a row of `fields` fields; each is then written in the COPY's column order. */
  row(fields: number): this {
    this.reserve(2);
    this.length = this.buf.writeInt16BE(fields, this.length);
    return this;
  }

  text(value: string | null): this {
    if (value === null) return this.nullField();
    this.reserve(4 + value.length * 3);
    const bytes = this.buf.write(value, this.length + 4, 'utf8');
    this.buf.writeInt32BE(bytes, this.length);
    this.length += 4 + bytes;
    return this;
  }

  int4(value: number): this {
    this.reserve(8);
    this.buf.writeInt32BE(4, this.length);
    this.length = this.buf.writeInt32BE(value, this.length + 4);
    return this;
  }

  timestamptz(value: Date | null): this {
    if (value === null) return this.nullField();
    this.reserve(12);
    this.buf.writeInt32BE(8, this.length);
    this.length = this.buf.writeBigInt64BE(BigInt(value.getTime() - PG_EPOCH_MS) * 1000n, this.length + 4);
    return this;
  }

  /** JSON text as jsonb. */
  jsonb(json: string): this {
    this.reserve(5 + json.length * 3);
    const bytes = this.buf.write(json, this.length + 5, 'utf8');
    this.buf.writeInt32BE(bytes + 1, this.length);
    this.buf[this.length + 4] = JSONB_VERSION;
    this.length += 5 + bytes;
    return this;
  }

  /** Fields already encoded (several rows' shared fields, from a CopyBinary's `fields()`). */
  raw(bytes: Uint8Array): this {
    this.reserve(bytes.length);
    this.buf.set(bytes, this.length);
    this.length += bytes.length;
    return this;
  }

  /** What was written after the header: fields to repeat in other rows with `raw`. */
  fields(): Buffer {
    return Buffer.from(this.buf.subarray(HEADER.length, this.length));
  }

  /** The whole COPY data, trailer included. */
  end(): Uint8Array<ArrayBuffer> {
    this.reserve(2);
    this.length = this.buf.writeInt16BE(-1, this.length);
    // Buffer.allocUnsafe's memory is an ArrayBuffer, never shared.
    return new Uint8Array(this.buf.buffer as ArrayBuffer, this.buf.byteOffset, this.length);
  }

  private nullField(): this {
    this.reserve(4);
    this.length = this.buf.writeInt32BE(-1, this.length);
    return this;
  }

  private reserve(bytes: number): void {
    if (this.length + bytes <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.length + bytes));
    this.buf.copy(grown, 0, 0, this.length);
    this.buf = grown;
  }
}
