// `npm run worker`: the background loops alone (dispatch + webhook delivery), as many copies as needed against one PostgreSQL
// (calls are leased, so copies never dial the same call). SIGTERM/SIGINT: stop taking calls, let
// the ones in flight finish (up to LEASE_MS), then exit; whatever is left keeps a lease that lapses
// and another worker settles it.
import { loadConfig } from './config.ts';
import { runUntilSignalled } from './process-lifecycle.ts';
import { createDeps } from './bootstrap.ts';
import { startBackground } from './background.ts';
import { listenForOps } from './ops-server.ts';

async function start() {
  const config = loadConfig();
  const deps = await createDeps(config);
  if (deps.db.kind === 'pglite') {
    // PGlite is private to one process: a separate worker would dispatch a database nobody else sees.
    deps.logger.warn('worker running on the embedded database (no DATABASE_URL): only this process can see its calls');
  }
  const background = await startBackground(deps);
  const ops = config.WORKER_PORT === undefined ? null : await listenForOps(deps, background, config.WORKER_PORT);
  deps.logger.info({ database: deps.db.kind, ops: ops?.url }, 'dispatch and webhook delivery workers running');
  return { deps, background, ops };
}

runUntilSignalled(start, async ({ deps, background, ops }, signal) => {
  deps.logger.info({ signal }, 'worker shutting down');
  try {
    await ops?.close();
    await background.stop();
  } finally {
    await deps.db.close();
  }
});
