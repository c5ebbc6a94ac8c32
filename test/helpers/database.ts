import crypto from 'node:crypto';
import fs from 'node:fs';
import pg from 'pg';
import { inject } from 'vitest';
import { openDatabase, type Database } from '../../src/db/client.ts';
import { migrate } from '../../src/db/migrate.ts';

/** TEST_DATABASE_URL selects PostgreSQL; otherwise every suite gets its own in-memory PGlite. */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || undefined;

export interface TestDatabase {
  db: Database;
  /** Connection string of this suite's throwaway PostgreSQL database (undefined on PGlite). */
  url?: string;
  drop(): Promise<void>;
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/** A throwaway PostgreSQL database, created from the server at `baseUrl` (a copy of `template` when given). */
export async function createPgDatabase(baseUrl: string, template?: string): Promise<{ name: string; url: string; drop(): Promise<void> }> {
  const name = `cbs_test_${crypto.randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
  } finally {
    await admin.end();
  }
  return {
    name,
    url: withDatabase(baseUrl, name),
    async drop() {
      const c = new pg.Client({ connectionString: baseUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

/**
 * The suite's own database: a clone of the run's migrated template (test/helpers/global-setup.ts),
 * or, when the run has none (another config), a new one migrated here.
 */
export async function createTestDatabase(opts: { postgres?: boolean } = {}): Promise<TestDatabase> {
  const baseUrl = opts.postgres === false ? undefined : TEST_DATABASE_URL;
  if (baseUrl) {
    const template = inject('pgTemplate');
    const pgdb = await createPgDatabase(baseUrl, template);
    const db = await openDatabase({ databaseUrl: pgdb.url, poolSize: 10 });
    if (!template) await migrate(db);
    return {
      db,
      url: pgdb.url,
      async drop() {
        await db.close();
        await pgdb.drop();
      },
    };
  }
  const tarball = inject('pgliteTemplate');
  const db = await openDatabase({ inMemory: true, loadDataDir: tarball ? new Blob([fs.readFileSync(tarball)]) : undefined });
  if (!tarball) await migrate(db);
  return { db, drop: () => db.close() };
}
