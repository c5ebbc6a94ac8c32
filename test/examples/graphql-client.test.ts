// The example client (examples/graphql-client) against a real `npm start`: it must run to the
// end and print what its README says, so it cannot rot.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.ts';
import { waitFor } from '../helpers/wait.ts';
import { tempDataDir } from '../helpers/data-dir.ts';

const root = path.resolve(import.meta.dirname, '../..');
const dataDir = tempDataDir('cbs-example-client-');
let server: ServerProcess;
let key = '';

beforeAll(async () => {
  server = await startServerProcess({ DATA_DIR: dataDir, DATABASE_URL: '', RUN_WORKER: 'true', SIM_CALL_MS: '200' });
  await waitFor(() => /sk_[A-Za-z0-9_-]{43}/.test(server.stdout()), { what: 'the demo key' });
  key = /(sk_[A-Za-z0-9_-]{43})/.exec(server.stdout())![1];
}, 90_000);

afterAll(async () => {
  server?.child.kill('SIGTERM');
  await server?.waitForExit();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const runClient = (env: Record<string, string>) =>
  promisify(execFile)(process.execPath, ['--import', 'tsx', path.join(root, 'examples/graphql-client/src/main.ts')], {
    cwd: root,
    env: { ...process.env, ...env },
  });

describe('examples/graphql-client', () => {
  it('lists batches, creates a manual batch, starts it and follows its progress to the end', async () => {
    const { stdout } = await runClient({ API_KEY: key, GRAPHQL_URL: `${server.url}/graphql` });
    const lines = stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('account: Demo Account; agent: Demo Agent');
    expect(lines[1]).toBe('batches: 0');
    const batchId = /^created: (sched_[0-9a-f]{32}) pending, 5 contacts$/.exec(lines[2])?.[1];
    expect(batchId).toBeDefined();
    expect(lines[3]).toBe('progress: paused queued=5 inProgress=0 completed=0 failed=0');
    expect(lines[4]).toBe('started: queued');
    // The simulator: numbers ending 3, 4, 5 complete, 0 is not answered, 1 is busy.
    expect(lines.at(-2)).toBe('progress: completed queued=0 inProgress=0 completed=3 failed=2');
    expect(lines.at(-1)).toBe(`done: ${batchId}`);

    // The server agrees, and a second run lists the first batch.
    const again = await runClient({ API_KEY: key, GRAPHQL_URL: `${server.url}/graphql` });
    expect(again.stdout).toContain(`batches: 1\n  ${batchId} completed 5/5\n`);
  }, 90_000);

  it('a wrong key is a clear error and exit code 1', async () => {
    const err = await runClient({ API_KEY: 'sk_wrong', GRAPHQL_URL: `${server.url}/graphql` }).catch((e) => e);
    expect(err.code).toBe(1);
    expect(err.stderr).toContain('UNAUTHENTICATED');
  }, 60_000);
});
