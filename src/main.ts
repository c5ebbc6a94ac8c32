// `npm start`: API + worker + embedded database in one process.
import { loadConfig, ConfigError } from './config.ts';
import { createDeps } from './bootstrap.ts';
import { buildApp } from './app.ts';
import { seedDemoIfEmpty } from './services/demo-seed.ts';
import { startBackground } from './background.ts';

async function main() {
  const config = loadConfig();
  const deps = await createDeps(config);
  const app = buildApp(deps);
  const url = await app.listen();
  const background = config.RUN_WORKER ? await startBackground(deps) : null;
  deps.logger.info({ url, database: deps.db.kind, worker: !!background }, 'call batch service listening');

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
          `GraphiQL: ${url}/graphql`,
          '',
        ].join('\n') + '\n',
      );
    }
  }

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    deps.logger.info({ signal }, 'shutting down');
    await app.stop();
    await background?.stop();
    await deps.db.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((e) => {
  if (e instanceof ConfigError) {
    process.stderr.write(e.message + '\n');
    process.exit(78);
  }
  process.stderr.write(`fatal: ${e instanceof Error ? e.stack ?? e.message : String(e)}\n`);
  process.exit(1);
});
