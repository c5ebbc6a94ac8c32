import type { Config } from './config.ts';
import { openDatabase } from './db/client.ts';
import { migrate } from './db/migrate.ts';
import { systemClock, type AppDeps, type Clock } from './deps.ts';
import { createLogger } from './logger.ts';
import { resolveAppSecret } from './app-secret.ts';
import { createMetrics } from './metrics.ts';

/** Opens the database (applying migrations when due) and assembles the process-wide dependencies. */
export async function createDeps(config: Config, overrides: { clock?: Clock } = {}): Promise<AppDeps> {
  const logger = createLogger(config.LOG_LEVEL);
  const appSecret = resolveAppSecret(config);
  const db = await openDatabase({
    databaseUrl: config.DATABASE_URL,
    dataDir: config.DATA_DIR,
    poolSize: config.DB_POOL_SIZE,
    connectTimeoutMs: config.DB_CONNECT_TIMEOUT_MS,
    onLooseModes: (entries, dataDir) =>
      logger.warn({ dataDir, entries }, 'data dir was readable or writable by other users; made private (directories 0700, files 0600)'),
  });
  try {
    // PGlite is private to this process, so it is always migrated; PostgreSQL unless told not to.
    if (db.kind === 'pglite' || config.MIGRATE_ON_START) {
      const applied = await migrate(db);
      if (applied.length) logger.info({ applied }, 'migrations applied');
    }
  } catch (e) {
    await db.close();
    throw e;
  }
  return { config, db, logger, clock: overrides.clock ?? systemClock, appSecret, metrics: createMetrics(db) };
}
