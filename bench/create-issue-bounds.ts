// The bounds of issue 35 for bench/create-batch.ts, on PostgreSQL: what inserting a create's rows
// costs when nothing but the insert runs, into the issue's minimal table (id, batch, account,
// contact id, name, phone, jsonb metadata, status, created_at; its one index the primary key):
//   unnest  one INSERT … SELECT FROM unnest(...) of all rows (the issue's bound, the judged one);
//   copy    one binary COPY of all rows, built the way the service builds its own (src/db/copy-rows.ts);
// and, for the split of the create's time, a floor that is no bound of the issue:
//   calls-copy  the service's own insertCalls (its chunks, its binary COPY) into the `calls` table
//         (its indexes), the contacts already screened: what the create's writing costs alone.
// Each runs in this (client) process on its own connection, in a transaction; connecting is not
// timed, building the statement's parameters or the COPY data is (the service builds its own).
import fs from 'node:fs';
import { finished } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFromStdin } from 'pg-copy-streams';
import { CopyBinary } from '../src/db/copy-rows.ts';
import { newId, newIds } from '../src/domain/ids.ts';
import { copyRowsPg } from '../src/db/copy-rows.ts';
import type { SqlTransaction } from '../src/db/sql-transaction.ts';
import { CALL_CHUNK_SIZE, callChunkSizes, FIRST_CALL_CHUNK_SIZE, insertCalls, type NewCall } from '../src/services/batches/insert-calls.ts';

export const ISSUE_TABLE = 'bench_issue_calls';

export const ISSUE_TABLE_DDL = `CREATE TABLE ${ISSUE_TABLE} (
  id text PRIMARY KEY, batch_id text NOT NULL, account_id text NOT NULL, external_id text, name text,
  phone_number text NOT NULL, metadata jsonb NOT NULL, status text NOT NULL, created_at timestamptz NOT NULL)`;

export interface BoundContact {
  contact_id: string;
  name: string;
  phone_number: string;
  metadata: Record<string, unknown>;
}

export interface BoundResult {
  ms: number;
  /** This process's CPU plus its backend's (Linux /proc), or null where the backend can't be read. */
  cpuMs: number | null;
}

export type IssueBound = 'unnest' | 'copy' | 'calls-copy';

/** The ids a `calls` row carries besides its contact's fields. */
export interface CallOwnerIds {
  accountId: string;
  agentId: string;
  versionId: string;
}

const UNNEST_SQL = `INSERT INTO ${ISSUE_TABLE} (id, batch_id, account_id, external_id, name, phone_number, metadata, status, created_at)
  SELECT c.id, $1, $2, c.ext, c.name, c.phone, c.meta, 'pending', $3::timestamptz
  FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::jsonb[]) AS c(id, ext, name, phone, meta)`;

const COPY_SQL = `COPY ${ISSUE_TABLE} (id, batch_id, account_id, external_id, name, phone_number, metadata, status, created_at) FROM STDIN WITH (FORMAT binary)`;

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

function backendCpuMs(pid: number): number | null {
  try {
    return Number(fs.readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return null;
  }
}

/** Inserts `contacts` into the issue's table by `bound`, on a connection of its own to `url`. */
export async function issueBound(url: string, owner: CallOwnerIds, contacts: BoundContact[], bound: IssueBound): Promise<BoundResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const [{ pid }] = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows;
    const t0 = performance.now();
    const c0 = cpuMs();
    const b0 = backendCpuMs(pid);
    await client.query('BEGIN');
    const batchId = newId('batch');
    const now = new Date();
    if (bound === 'unnest') await insertByUnnest(client, batchId, owner.accountId, now, contacts);
    else if (bound === 'copy') await insertByCopy(client, batchId, owner.accountId, now, contacts);
    else await insertCallsAlone(client, { ...owner, batchId, promptVersionId: owner.versionId, createdAt: now }, contacts);
    await client.query('COMMIT');
    const ms = performance.now() - t0;
    const b1 = backendCpuMs(pid);
    return { ms, cpuMs: b0 === null || b1 === null ? null : cpuMs() - c0 + (b1 - b0) };
  } finally {
    await client.end();
  }
}

async function insertByUnnest(client: pg.Client, batchId: string, accountId: string, now: Date, contacts: BoundContact[]): Promise<void> {
  await client.query(UNNEST_SQL, [
    batchId,
    accountId,
    now.toISOString(),
    newIds('call', contacts.length),
    contacts.map((c) => c.contact_id),
    contacts.map((c) => c.name),
    contacts.map((c) => c.phone_number),
    contacts.map((c) => JSON.stringify(c.metadata)),
  ]);
}

async function insertByCopy(client: pg.Client, batchId: string, accountId: string, now: Date, contacts: BoundContact[]): Promise<void> {
  const ids = newIds('call', contacts.length);
  const out = new CopyBinary(contacts.length * 200);
  for (let i = 0; i < contacts.length; i++) {
    const c = contacts[i];
    out.row(9).text(ids[i]).text(batchId).text(accountId).text(c.contact_id).text(c.name).text(c.phone_number);
    out.jsonb(JSON.stringify(c.metadata)).text('pending').timestamptz(now);
  }
  const stream = client.query(copyFromStdin(COPY_SQL));
  stream.end(out.end());
  await finished(stream);
}

/** The service's insert of screened calls, in its chunks (the first smaller), with no screening to wait for. */
async function insertCallsAlone(
  client: pg.Client,
  owner: { accountId: string; batchId: string; agentId: string; promptVersionId: string; createdAt: Date },
  contacts: BoundContact[],
): Promise<void> {
  const calls: NewCall[] = contacts.map((c, i) => ({
    contact: { index: i + 1, externalId: c.contact_id, name: c.name, phoneNumber: c.phone_number, alternatePhone: null, metadata: c.metadata },
    status: 'pending',
    window: null,
  }));
  const chunks: NewCall[][] = [];
  let from = 0;
  for (const size of callChunkSizes(calls.length, FIRST_CALL_CHUNK_SIZE, CALL_CHUNK_SIZE.postgres)) chunks.push(calls.slice(from, (from += size)));
  // insertCalls uses only the transaction's COPY.
  const tx = { copyRows: copyRowsPg(client) } as unknown as SqlTransaction;
  await insertCalls(tx, owner, chunks);
}
