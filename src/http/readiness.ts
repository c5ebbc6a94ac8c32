// GET /readyz: whether this process should get traffic. Every check answers null (fine) or why not;
// any reason makes it a 503 listing them. /healthz stays the cheap liveness answer. The endpoint
// needs no key, so checks run at most once per `cacheMs` whatever the request rate: concurrent and
// repeated requests share one result.
import type { Database } from '../db/client.ts';
import { listMigrations, pendingMigrations } from '../db/migrate.ts';
import { rejectAfter } from '../deadline.ts';
import { runStatement } from '../db/sql-statement.ts';
import { json } from './responses.ts';
import type { BodyBudget } from './body-budget.ts';

export type ReadinessCheck = () => Promise<string | null> | string | null;

const withinMs = <T>(ms: number, work: Promise<T>): Promise<T> => rejectAfter(work, ms, () => new Error(`no answer within ${ms} ms`));

const reasonOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** The database answers a query within `timeoutMs`. */
export function databaseCheck(db: Database, timeoutMs: number): ReadinessCheck {
  return async () => {
    try {
      await withinMs(timeoutMs, runStatement(db, 'SELECT 1'));
      return null;
    } catch (e) {
      return `database: ${reasonOf(e)}`;
    }
  };
}

/** Every migration this code ships with has been applied. */
export function migrationsCheck(db: Database, timeoutMs: number): ReadinessCheck {
  // The files do not change while the process runs: read them once.
  let shipped: string[] | undefined;
  return async () => {
    try {
      shipped ??= listMigrations().map((m) => m.name);
      const pending = await withinMs(timeoutMs, pendingMigrations(db, shipped));
      return pending.length
        ? `migrations: ${pending.length} not applied (${pending.slice(0, 3).join(', ')}${pending.length > 3 ? ', …' : ''})`
        : null;
    } catch (e) {
      return `migrations: ${reasonOf(e)}`;
    }
  };
}

/** Share of the body budget held past which new bodies are about to get 503s. */
const BODIES_NEARLY_FULL = 0.9;

const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

/** Request bodies leave room: a load balancer can send new uploads elsewhere while this process is full. */
export function bodyBudgetCheck(bodies: Pick<BodyBudget, 'held' | 'shares'>): ReadinessCheck {
  return () => {
    const held = bodies.held();
    const total = bodies.shares.total;
    return held >= total * BODIES_NEARLY_FULL
      ? `request bodies: ${mib(held)} of ${mib(total)} MiB held (MAX_BODY_BYTES_IN_FLIGHT); new bodies get 503`
      : null;
  };
}

/** How long /readyz waits for the database before calling it unavailable. */
const READINESS_TIMEOUT_MS = 2_000;

/** A process's /readyz: the database answers, its migrations are applied, and its own checks pass. */
export function processReadiness(db: Database, own: ReadinessCheck[] = []): () => Promise<Response> {
  return createReadiness([databaseCheck(db, READINESS_TIMEOUT_MS), migrationsCheck(db, READINESS_TIMEOUT_MS), ...own]);
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
