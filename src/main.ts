// `npm start`: API + worker + embedded database in one process.
import { loadConfig } from './config.ts';
import { runUntilSignalled } from './process-lifecycle.ts';
import { createDeps } from './bootstrap.ts';
import { buildApp, type App } from './app.ts';
import { seedDemoIfEmpty } from './services/accounts/demo-seed.ts';
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

  if (config.SEED_DEMO) {
    const demo = await seedDemoIfEmpty(deps);
    if (demo) {
      // Printed once: only the key's hash is stored.
      process.stdout.write(
        [
          '',
          'Demo account created. Its API key (shown once, keep it):',
          `  ${demo.apiKey}`,
          `Agent ${demo.agentId}, prompt version ${demo.versionId}, DID +14155550100.`,
          'Try:',
          `  curl -s ${url}/api/v1/public/me -H 'Authorization: Bearer ${demo.apiKey}'`,
          `Dashboard (paste the key): ${url}/dashboard   GraphiQL: ${url}/graphql`,
          'A first batch to watch: README.md, "A first batch".',
          '',
        ].join('\n') + '\n',
      );
    }
  }
  return { deps, app, background };
}

runUntilSignalled(start, async ({ deps, app, background }, signal) => {
  deps.logger.info({ signal }, 'shutting down');
  await app.stop();
  await background?.stop();
  await deps.db.close();
});
