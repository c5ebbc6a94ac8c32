// `npm start`: API + worker + embedded database in one process.
import { loadConfig } from './config.ts';
import { runUntilSignalled } from './process-lifecycle.ts';
import { createDeps } from './bootstrap.ts';
import { buildApp, type App } from './app.ts';
import { seedDemoIfEmpty } from './services/accounts/demo-seed.ts';
import { startBanner } from './start-banner.ts';
import { startBackground, type StartedBackground } from './background.ts';
import type { AppDeps } from './deps.ts';
import { newOperatorToken, operatorTokenPath, removeOperatorToken, writeOperatorToken } from './operator-token.ts';

interface Started {
  deps: AppDeps;
  app: App;
  background: StartedBackground | null;
}

async function start(): Promise<Started> {
  const loaded = loadConfig();
  const operatorToken = newOperatorToken(loaded);
  const config = operatorToken ? { ...loaded, ADMIN_TOKEN: operatorToken } : loaded;
  const deps = await createDeps(config);
  // An earlier start's file goes at once; this start's is written once its address is known.
  if (!config.DATABASE_URL) removeOperatorToken(config.DATA_DIR);
  let background: StartedBackground | null = null;
  const app = buildApp(deps, { readiness: [() => background?.problem() ?? null], operatorToken: operatorToken ?? undefined });
  const url = await app.listen();
  if (operatorToken) writeOperatorToken(config.DATA_DIR, { token: operatorToken, url });
  background = config.RUN_WORKER ? await startBackground(deps) : null;
  const operatorTokenFile = operatorToken ? operatorTokenPath(config.DATA_DIR) : undefined;
  deps.logger.info({ url, database: deps.db.kind, worker: !!background, operatorTokenFile }, 'call batch service listening');

  const demo = config.SEED_DEMO ? await seedDemoIfEmpty(deps) : null;
  // The demo key is printed whatever stdout is (it is shown once: only its hash is stored). The
  // banner of a restart goes to a person: a terminal, or the embedded start a person runs; a
  // deployment's piped stdout (DATABASE_URL) keeps its JSON lines only.
  if (demo || process.stdout.isTTY || deps.db.kind === 'pglite') {
    const accounts = demo ? [] : await deps.db.prisma.account.findMany({ select: { id: true }, take: 2 });
    process.stdout.write(startBanner({ url, demo, soleAccountId: accounts.length === 1 ? accounts[0].id : null }));
  }
  return { deps, app, background };
}

runUntilSignalled(start, async ({ deps, app, background }, signal) => {
  deps.logger.info({ signal }, 'shutting down');
  await app.stop();
  await background?.stop();
  await deps.db.close();
});
