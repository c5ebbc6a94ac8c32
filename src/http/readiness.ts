// GET /readyz: whether this process should get traffic. Every check answers null (fine) or why not;
// any reason makes it a 503 listing them. /healthz stays the cheap liveness answer. The endpoint
// needs no key, so checks run at most once per `cacheMs` whatever the request rate: concurrent and
// repeated requests share one result.
import type { Database } from '../db/client.ts';
import { pendingMigrations } from '../db/migrate.ts';
import { runStatement } from '../db/sql-statement.ts';
import { json } from './responses.ts';

export type ReadinessCheck = () => Promise<string | null> | string | null;

function withinMs<T>(ms: number, work: Promise<T>, late: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(late)), ms)));
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

const reasonOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** The database answers a query within `timeoutMs`. */
export function databaseCheck(db: Database, timeoutMs: number): ReadinessCheck {
  return async () => {
    try {
      await withinMs(timeoutMs, runStatement(db, 'SELECT 1'), `no answer within ${timeoutMs} ms`);
      return null;
    } catch (e) {
      return `database: ${reasonOf(e)}`;
    }
  };
}

/** Every migration this code ships with has been applied. */
export function migrationsCheck(db: Database, timeoutMs: number): ReadinessCheck {
  return async () => {
    try {
      const pending = await withinMs(timeoutMs, pendingMigrations(db), `no answer within ${timeoutMs} ms`);
      return pending.length ? `migrations: ${pending.length} not applied (${pending.slice(0, 3).join(', ')}${pending.length > 3 ? ', …' : ''})` : null;
    } catch (e) {
      return `migrations: ${reasonOf(e)}`;
    }
  };
}

export function createReadiness(checks: ReadinessCheck[], cacheMs = 1000): () => Promise<Response> {
  let last: { at: number; reasons: Promise<string[]> } | undefined;
  const run = async () => (await Promise.all(checks.map(async (c) => c()))).filter((r): r is string => r !== null);
  return async () => {
    if (!last || Date.now() - last.at >= cacheMs) last = { at: Date.now(), reasons: run() };
    const reasons = await last.reasons;
    return reasons.length ? json(503, { status: 'unavailable', reasons }) : json(200, { status: 'ready' });
  };
}
