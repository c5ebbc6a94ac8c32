import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { waitFor } from './wait.ts';

const root = path.resolve(import.meta.dirname, '../..');

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  /** Everything the process printed to stdout so far. */
  stdout(): string;
  waitForExit(): Promise<number | null>;
}

/** Starts `src/main.ts` (or another entry) as a real child process and waits until /healthz answers. */
export async function startServerProcess(env: Record<string, string>, entry = 'src/main.ts'): Promise<ServerProcess> {
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, entry)], {
    cwd: root,
    // No compliance profile by default (as createTestApp): the processes' clock is the wall clock.
    env: { ...process.env, LOG_LEVEL: 'warn', DEFAULT_COMPLIANCE_PROFILES: 'none', ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  await waitFor(async () => (await fetch(`${url}/healthz`).catch(() => null))?.ok === true, {
    timeoutMs: 60_000,
    intervalMs: 100,
    what: 'the server to answer /healthz',
    abortIf: () => {
      if (child.exitCode !== null) throw new Error(`server exited early (${child.exitCode})`);
    },
  }).catch((e: Error) => {
    throw new Error(`${e.message}: ${err}`);
  });
  return { child, url, stdout: () => out, waitForExit: () => exited };
}

/**
 * A second API process on the test app's PostgreSQL database (already migrated, no worker, no
 * demo seed, the same app secret): what two API servers behind a load balancer share.
 */
export function startSiblingApi(t: { testDb: { url?: string }; deps: { appSecret: string } }): Promise<ServerProcess> {
  if (!t.testDb.url) throw new Error('startSiblingApi needs a PostgreSQL test database');
  return startServerProcess({
    DATABASE_URL: t.testDb.url,
    MIGRATE_ON_START: 'false',
    SEED_DEMO: 'false',
    RUN_WORKER: 'false',
    APP_SECRET: t.deps.appSecret,
    LOG_LEVEL: 'warn',
  });
}
