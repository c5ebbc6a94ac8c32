import crypto from 'node:crypto';
import pg from 'pg';
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

/** A throwaway PostgreSQL database, created from the server at `baseUrl`. */
export async function createPgDatabase(baseUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `cbs_test_${crypto.randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  return {
    url: withDatabase(baseUrl, name),
    async drop() {
      const c = new pg.Client({ connectionString: baseUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

export async function createTestDatabase(opts: { postgres?: boolean } = {}): Promise<TestDatabase> {
  const baseUrl = opts.postgres === false ? undefined : TEST_DATABASE_URL;
  if (baseUrl) {
    const pgdb = await createPgDatabase(baseUrl);
    const db = await openDatabase({ databaseUrl: pgdb.url, poolSize: 10 });
    await migrate(db);
    return {
      db,
      url: pgdb.url,
      async drop() {
        await db.close();
        await pgdb.drop();
      },
    };
  }
  const db = await openDatabase({ inMemory: true });
  await migrate(db);
  return { db, drop: () => db.close() };
}
