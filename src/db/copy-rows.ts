// COPY … FROM of rows in PostgreSQL's text format, on either driver. A bulk insert by COPY skips
// the executor's per-row work of INSERT … SELECT and writes heap pages a thousand rows at a time
// (bench/create-batch). pg streams the text with pg-copy-streams; PGlite reads it as a blob.
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import type { Transaction } from '@electric-sql/pglite';
import { from as copyFromStdin } from 'pg-copy-streams';

/** `COPY <table> (<columns>) FROM …` of `text`: rows of tab-separated fields, each ending in \n. */
export type CopyRows = (table: string, columns: readonly string[], text: string) => Promise<void>;

const copySql = (table: string, columns: readonly string[], source: string) =>
  `COPY ${table} (${columns.join(', ')}) FROM ${source}`;

export function copyRowsPg(client: pg.PoolClient | pg.Client): CopyRows {
  return async (table, columns, text) => {
    await pipeline(Readable.from([text]), client.query(copyFromStdin(copySql(table, columns, 'STDIN'))));
  };
}

export function copyRowsPglite(tx: Pick<Transaction, 'query'>): CopyRows {
  return async (table, columns, text) => {
    await tx.query(copySql(table, columns, `'/dev/blob'`), [], { blob: new Blob([text]) });
  };
}

const SPECIAL = /[\\\t\n\r]/;
const SPECIALS = /[\\\t\n\r]/g;
const ESCAPES: Readonly<Record<string, string>> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** One field of the text format: `\N` for null; backslash, tab, newline and carriage return escaped. */
export function copyField(value: string | null): string {
  if (value === null) return '\\N';
  return SPECIAL.test(value) ? value.replace(SPECIALS, (c) => ESCAPES[c]) : value;
}
