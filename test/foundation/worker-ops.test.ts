// `npm run worker` with WORKER_PORT: the worker-only process answers /healthz, /readyz and
// /metrics (behind its token) like an API process, and nothing else.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/server-process.ts';
import { tempDataDir } from '../helpers/data-dir.ts';
import { waitFor } from '../helpers/wait.ts';

const root = path.resolve(import.meta.dirname, '../..');
const METRICS_TOKEN = 'worker-ops-metrics-token-0123';
const dataDir = tempDataDir('cbs-worker-ops-');
let worker: ChildProcess;
let url = '';
let exited: Promise<number | null>;

beforeAll(async () => {
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  worker = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'src/worker.ts')], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: '',
      DATA_DIR: dataDir,
      WORKER_PORT: String(port),
      HOST: '127.0.0.1',
      METRICS_TOKEN,
      LOG_LEVEL: 'warn',
      AUTH_FAILURES_PER_MINUTE: '3',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  worker.stderr!.on('data', (d) => (err += d));
  exited = new Promise((resolve) => worker.once('exit', (code) => resolve(code)));
  await waitFor(async () => (await fetch(`${url}/healthz`).catch(() => null))?.status === 200, {
    timeoutMs: 60_000,
    intervalMs: 100,
    what: 'the worker to answer on WORKER_PORT',
    abortIf: () => {
      if (worker.exitCode !== null) throw new Error('worker exited');
    },
  }).catch((e: Error) => {
    throw new Error(`${e.message}: ${err}`);
  });
}, 90_000);

afterAll(async () => {
  worker?.kill('SIGTERM');
  await exited;
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('worker-only process with WORKER_PORT', () => {
  it('answers ready once its database, migrations and loops are', async () => {
    await expect.poll(async () => (await fetch(`${url}/readyz`)).status, { timeout: 30_000 }).toBe(200);
    expect(await (await fetch(`${url}/readyz`)).json()).toEqual({ status: 'ready' });
  });

  it('serves its own metrics behind the token', async () => {
    expect((await fetch(`${url}/metrics`)).status).toBe(401);
    const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('callbatch_calls_in_flight 0');
    expect(text).toContain('callbatch_calls_placed_total 0');
  });

  it('counts wrong metrics tokens per address: once spent, even the right token gets 429', async () => {
    // One failure spent above; AUTH_FAILURES_PER_MINUTE is 3 here.
    for (const token of ['wrong-token-0123456789', 'another-wrong-token-0123']) {
      expect((await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
    }
    const refused = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('serves nothing else', async () => {
    expect((await fetch(`${url}/graphql`)).status).toBe(404);
    expect((await fetch(`${url}/api/v1/public/me`)).status).toBe(404);
    expect((await fetch(`${url}/healthz`, { method: 'POST', body: 'x' })).status).toBe(405);
  });
});
