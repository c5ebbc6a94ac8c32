// A database of its own for one bench run on a PostgreSQL server, dropped afterwards.
import crypto from 'node:crypto';
import pg from 'pg';
import { openDatabase, type Database } from '../src/db/client.ts';

/** Creates `<prefix>_<random>` on the server at `baseUrl`; its URL and how to drop it. */
export async function throwawayDatabase(baseUrl: string, prefix: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `${prefix}_${crypto.randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const u = new URL(baseUrl);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: baseUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

/** A throwaway database opened as the service opens one; null when the server does not answer. */
export async function openThrowawayDatabase(
  baseUrl: string,
  prefix: string,
  poolSize: number,
): Promise<{ db: Database; drop(): Promise<void> } | null> {
  let created: { url: string; drop(): Promise<void> };
  try {
    created = await throwawayDatabase(baseUrl, prefix);
  } catch {
    return null;
  }
  const db = await openDatabase({ databaseUrl: created.url, poolSize });
  return {
    db,
    async drop() {
      await db.close();
      await created.drop();
    },
  };
}
