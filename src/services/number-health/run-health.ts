// Use case: one run of number health over every account's caller-ID pool (docs/campaigns.md
// "Number health"). Each account in a transaction of its own, under an advisory lock on the
// account: two processes running the job at once judge each pool once (the other skips it), and
// every write is conditional besides. Metrics count what committed.
import type { AppDeps } from '../../deps.ts';
import { decidePool, windowStart, type HealthSettings } from '../../domain/number-health.ts';
import { runStatement } from '../../db/sql-statement.ts';
import { withSqlTransaction } from '../../db/sql-transaction.ts';
import type { Config } from '../../config.ts';
import { applyDecisions, type Applied } from './apply-decisions.ts';
import { queueNumberEvents } from './notify.ts';
import { loadPool } from './pool.ts';

export type HealthDeps = Pick<AppDeps, 'db' | 'config' | 'clock' | 'metrics' | 'logger'>;

export function healthSettings(config: Config): HealthSettings {
  return {
    windowDays: config.NUMBER_HEALTH_WINDOW_DAYS,
    minDials: config.NUMBER_HEALTH_MIN_DIALS,
    threshold: config.NUMBER_HEALTH_THRESHOLD,
    restMs: Math.round(config.NUMBER_HEALTH_REST_HOURS * 3_600_000),
  };
}

export interface HealthRun {
  accounts: number;
  rested: number;
  restored: number;
  webhooks: number;
}

async function judgeAccount(deps: HealthDeps, accountId: string, now: Date, s: HealthSettings): Promise<(Applied & { webhooks: number }) | null> {
  return withSqlTransaction(deps.db, async (tx) => {
    const [lock] = await tx.query<{ ok: boolean }>('SELECT pg_try_advisory_xact_lock(hashtext($1)) AS ok', [`number-health:${accountId}`]);
    if (!lock?.ok) return null;
    const pool = await loadPool(tx, accountId, windowStart(now, s.windowDays));
    const applied = await applyDecisions(tx, pool, decidePool(pool, now, s), now);
    const webhooks = await queueNumberEvents(tx, accountId, applied.events, now);
    return { ...applied, webhooks };
  });
}

export async function runNumberHealth(deps: HealthDeps): Promise<HealthRun> {
  const now = deps.clock.now();
  const s = healthSettings(deps.config);
  const log = deps.logger.child({ component: 'number-health' });
  const accounts = await runStatement<{ account_id: string }>(deps.db, 'SELECT DISTINCT account_id FROM did_numbers ORDER BY account_id');
  const run: HealthRun = { accounts: 0, rested: 0, restored: 0, webhooks: 0 };
  for (const { account_id: accountId } of accounts) {
    const done = await judgeAccount(deps, accountId, now, s);
    if (!done) continue;
    run.accounts++;
    for (const r of done.rested) deps.metrics.didRested.inc({ reason: r.reason });
    if (done.restored.length) deps.metrics.didRestored.inc(done.restored.length);
    run.rested += done.rested.length;
    run.restored += done.restored.length;
    run.webhooks += done.webhooks;
    for (const r of done.rested)
      log.info({ accountId, didId: r.id, reason: r.reason, until: r.until, answerRate: r.stats.answerRate }, 'caller-ID number rested');
    for (const id of done.restored) log.info({ accountId, didId: id }, 'caller-ID number back from its rest');
  }
  // Days before the window are never read again.
  await runStatement(deps.db, 'DELETE FROM did_daily_stats WHERE day < $1::date', [windowStart(now, s.windowDays)]);
  return run;
}
