import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Database } from './client.ts';
import { runStatement } from './sql-statement.ts';

export const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../prisma/migrations');

interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

export function listMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && fs.existsSync(path.join(dir, d.name, 'migration.sql')))
    .map((d) => d.name)
    .sort()
    .map((name) => {
      const sql = fs.readFileSync(path.join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: crypto.createHash('sha256').update(sql).digest('hex') };
    });
}

// Same shape as Prisma's own table, so `prisma migrate status` stays meaningful on PostgreSQL.
const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum" VARCHAR(64) NOT NULL,
  "finished_at" TIMESTAMPTZ,
  "migration_name" VARCHAR(255) NOT NULL,
  "logs" TEXT,
  "rolled_back_at" TIMESTAMPTZ,
  "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`;

/** A driver-level session: the migration files hold several statements, which Prisma won't run at once. */
interface SqlSession {
  exec(sql: string): Promise<void>;
  query<T>(sql: string, params?: unknown[]): Promise<T[]>;
  transaction(fn: (s: SqlSession) => Promise<void>): Promise<void>;
  release(): Promise<void>;
}

async function openSession(db: Database): Promise<SqlSession> {
  if (db.pglite) {
    const lite = db.pglite;
    const wrap = (q: Pick<typeof lite, 'exec' | 'query'>): Omit<SqlSession, 'transaction' | 'release'> => ({
      exec: async (sql) => void (await q.exec(sql)),
      query: async <T>(sql: string, params?: unknown[]) => (await q.query<T>(sql, params)).rows,
    });
    return {
      ...wrap(lite),
      transaction: async (fn) =>
        void (await lite.transaction(async (tx) =>
          fn({ ...wrap(tx), transaction: () => Promise.reject(new Error('nested')), release: async () => {} }),
        )),
      release: async () => {},
    };
  }
  const client = await db.pool!.connect();
  const s: SqlSession = {
    exec: async (sql) => void (await client.query(sql)),
    query: async <T>(sql: string, params?: unknown[]) => (await client.query(sql, params)).rows as T[],
    transaction: async (fn) => {
      await client.query('BEGIN');
      try {
        await fn(s);
        await client.query('COMMIT');
      } catch (e) {
        await client.query('ROLLBACK');
        throw e;
      }
    },
    release: async () => client.release(),
  };
  return s;
}

const APPLIED_SQL = 'SELECT migration_name, checksum FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL';

/** Of the migrations `shipped` (names), those the database has not applied (all without a migrations table). */
export async function pendingMigrations(db: Database, shipped: string[]): Promise<string[]> {
  const [table] = await runStatement<{ name: string | null }>(db, `SELECT to_regclass('"_prisma_migrations"')::text AS name`);
  const done = table?.name ? new Set((await runStatement<{ migration_name: string }>(db, APPLIED_SQL)).map((r) => r.migration_name)) : new Set();
  return shipped.filter((name) => !done.has(name));
}

/**
 * Applies pending migrations in order, each in its own transaction, under an advisory lock so that
 * several processes starting at once on one PostgreSQL don't race. Returns the names applied.
 */
export async function migrate(db: Database, dir = MIGRATIONS_DIR): Promise<string[]> {
  const migrations = listMigrations(dir);
  const s = await openSession(db);
  const applied: string[] = [];
  try {
    await s.query('SELECT pg_advisory_lock(727274)');
    try {
      await s.exec(CREATE_TABLE);
      const done = await s.query<{ migration_name: string; checksum: string }>(APPLIED_SQL);
      const doneByName = new Map(done.map((r) => [r.migration_name, r.checksum]));
      for (const m of migrations) {
        const prior = doneByName.get(m.name);
        if (prior) {
          if (prior !== m.checksum) throw new Error(`Migration ${m.name} was edited after it was applied`);
          continue;
        }
        await s.transaction(async (tx) => {
          await tx.exec(m.sql);
          await tx.query(
            `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, applied_steps_count)
             VALUES ($1, $2, now(), $3, 1)`,
            [crypto.randomUUID(), m.checksum, m.name],
          );
        });
        applied.push(m.name);
      }
    } finally {
      await s.query('SELECT pg_advisory_unlock(727274)');
    }
  } finally {
    await s.release();
  }
  return applied;
}
