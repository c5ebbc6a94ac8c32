import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '../generated/prisma/client.ts';
import { takeTurns } from './pglite-turns.ts';
import { initPgliteDataDir, lockDataDir, PGLITE_DIR, tightenDataDir } from './pglite-data-dir.ts';
import { parseTimestamptz, TIMESTAMPTZ_OID } from './timestamp-parser.ts';

export type { PrismaClient };

/**
 * A connected database: the Prisma client plus the raw driver underneath it, which the few hot
 * paths that Prisma can't express well (bulk unnest inserts, SKIP LOCKED leasing, LISTEN/NOTIFY) use.
 */
export interface Database {
  kind: 'pglite' | 'postgres';
  prisma: PrismaClient;
  pglite?: PGlite;
  pool?: pg.Pool;
  /** Connection string, when PostgreSQL (other processes and LISTEN clients need it). */
  url?: string;
  /** PostgreSQL: how long opening a connection may take, the pool's and the LISTEN client's (DB_CONNECT_TIMEOUT_MS). */
  connectTimeoutMs?: number;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl?: string;
  dataDir?: string;
  /** `memory://` PGlite, for tests that don't need a directory. */
  inMemory?: boolean;
  /** With inMemory: start from this `dumpDataDir()` tarball, skipping initdb (tests clone one migrated database). */
  loadDataDir?: Blob;
  /** Told once when an existing DATA_DIR had entries others could read or write (they are made private). */
  onLooseModes?: (entries: number, dataDir: string) => void;
  poolSize?: number;
  /** PostgreSQL: how long opening a pooled connection may take (pg's connectionTimeoutMillis; default 5 s). */
  connectTimeoutMs?: number;
}

// PostgreSQL returns BIGINT/NUMERIC as strings by default; counts we select are small.
pg.types.setTypeParser(20, (v) => Number(v));
pg.types.setTypeParser(TIMESTAMPTZ_OID, parseTimestamptz);

/**
 * The embedded database's buffer cache, inside the process's WebAssembly memory: PostgreSQL's
 * default 128 MB fills up on a large create and stays resident, while PGlite's data files also sit
 * in the OS page cache, outside the process. 32 MB kept a 100k-contact create ~90 MB lower
 * (bench/create-batch, docs/operations.md "Memory").
 */
const PGLITE_SHARED_BUFFERS = '32MB';
const PGLITE_START_PARAMS = [...PGlite.defaultStartParams, '-c', `shared_buffers=${PGLITE_SHARED_BUFFERS}`];

export async function openDatabase(opts: DatabaseOptions): Promise<Database> {
  if (opts.databaseUrl) {
    // Without a connect timeout a query waits forever on a server that does not answer (pg's default).
    const connectTimeoutMs = opts.connectTimeoutMs ?? 5_000;
    const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: opts.poolSize ?? 10, connectionTimeoutMillis: connectTimeoutMs });
    // An idle client erroring (server restart) must not crash the process; the pool replaces it.
    pool.on('error', () => {});
    const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
    return {
      kind: 'postgres',
      prisma,
      pool,
      url: opts.databaseUrl,
      connectTimeoutMs,
      async close() {
        await prisma.$disconnect();
        await pool.end().catch(() => {});
      },
    };
  }
  let dataDir: string | undefined;
  let unlock = () => {};
  const root = path.resolve(opts.dataDir ?? './data');
  if (!opts.inMemory) {
    dataDir = path.join(root, PGLITE_DIR);
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    unlock = await lockDataDir(dataDir);
  }
  let pglite: PGlite;
  try {
    const existed = dataDir !== undefined && fs.existsSync(path.join(dataDir, 'PG_VERSION'));
    if (dataDir) await initPgliteDataDir(dataDir);
    pglite = await PGlite.create({
      ...(dataDir ? { dataDir } : { loadDataDir: opts.loadDataDir }),
      startParams: PGLITE_START_PARAMS,
      // PGlite's own reading of timestamptz text (`new Date(text)`) makes years 0001-0099 1950-2049.
      parsers: { [TIMESTAMPTZ_OID]: parseTimestamptz },
    });
    if (dataDir) {
      // A new database is written 0666 by PGlite: tightened silently. An existing one found loose is reported.
      const loosened = tightenDataDir(root);
      if (existed && loosened > 0) opts.onLooseModes?.(loosened, root);
    }
  } catch (e) {
    unlock();
    throw e;
  }
  // Statements (Prisma's too) take turns with the event loop, bulk ones behind the rest (pglite-turns.ts).
  takeTurns(pglite);
  // pglite-prisma-adapter is typed against an older driver-adapter-utils; the runtime protocol matches.
  const prisma = new PrismaClient({ adapter: new PrismaPGlite(pglite) as never });
  return {
    kind: 'pglite',
    prisma,
    pglite,
    async close() {
      await prisma.$disconnect();
      // Closing flushes PGlite's WAL to disk; skipping it risks an unreadable data dir.
      if (!pglite.closed) await pglite.close();
      unlock();
    },
  };
}
