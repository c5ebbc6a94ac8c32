// The embedded database's directory belongs to one process at a time: PGlite itself lets a second
// process open it, and two writers corrupt it.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/index.ts';
import { openDatabase } from '../../src/db/client.ts';
import { DataDirInUseError, processToken } from '../../src/db/pglite-data-dir.ts';
import { freePort, startServerProcess } from '../helpers/server-process.ts';
import { waitFor } from '../helpers/wait.ts';
import { tempDataDir } from '../helpers/data-dir.ts';

const dirs: string[] = [];
const tempDir = () => {
  const d = tempDataDir('cbs-lock-');
  dirs.push(d);
  return d;
};
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

describe('data dir lock', () => {
  it('refuses a second open while the first is open, and allows it after close', async () => {
    const dataDir = tempDir();
    const first = await openDatabase({ dataDir });
    await expect(openDatabase({ dataDir })).rejects.toThrow(DataDirInUseError);
    await expect(openDatabase({ dataDir })).rejects.toThrow(`in use by process ${process.pid}`);
    await first.close();
    expect(fs.existsSync(path.join(dataDir, 'pglite.lock'))).toBe(false);
    const again = await openDatabase({ dataDir });
    await again.close();
  });

  it('takes over a lock left by a process that no longer runs', async () => {
    const dataDir = tempDir();
    const gone = spawnSync(process.execPath, ['-e', 'process.pid']).pid!;
    fs.mkdirSync(path.join(dataDir, 'pglite'), { recursive: true });
    fs.writeFileSync(path.join(dataDir, 'pglite.lock'), String(gone));
    const db = await openDatabase({ dataDir });
    expect(fs.readFileSync(path.join(dataDir, 'pglite.lock'), 'utf8')).toBe(processToken(process.pid));
    await db.close();
  });

  it('takes over a lock naming this very pid from an earlier life (a restarted container reuses pids)', async () => {
    const dataDir = tempDir();
    fs.mkdirSync(path.join(dataDir, 'pglite'), { recursive: true });
    fs.writeFileSync(path.join(dataDir, 'pglite.lock'), `${process.pid} 12345`);
    expect(processToken(process.pid)).not.toBe(`${process.pid} 12345`);
    const db = await openDatabase({ dataDir });
    expect(fs.readFileSync(path.join(dataDir, 'pglite.lock'), 'utf8')).toBe(processToken(process.pid));
    await db.close();
  });

  it('of three processes starting at once on a stale lock, exactly one opens the directory', async () => {
    const dataDir = tempDir();
    await (await openDatabase({ dataDir })).close(); // initialised (when no template was), lock released
    fs.writeFileSync(path.join(dataDir, 'pglite.lock'), '999999 1');
    const helper = path.resolve(import.meta.dirname, '../helpers/open-data-dir.ts');
    const children = [0, 1, 2].map(() => {
      const child = spawn(process.execPath, ['--import', 'tsx', helper, dataDir], { stdio: ['pipe', 'pipe', 'inherit'] });
      const state = { out: '', exited: new Promise((r) => child.once('exit', r)) };
      child.stdout.on('data', (d) => (state.out += d));
      return { child, state };
    });
    // The one that opened it holds it until all three have reported, however slowly they started.
    await waitFor(() => children.every((c) => c.state.out.includes('\n')), { what: 'every process tried the directory' });
    for (const c of children) c.child.stdin.end();
    await Promise.all(children.map((c) => c.state.exited));
    expect(children.map((c) => c.state.out.trim()).sort()).toEqual(['in-use', 'in-use', 'opened']);
  }, 60_000);

  it('the CLI facing a server it cannot see (another port) refuses instead of opening the directory', async () => {
    const dataDir = tempDir();
    const server = await startServerProcess({ DATA_DIR: dataDir, RUN_WORKER: 'false', SEED_DEMO: 'false' });
    const saved = { ...process.env };
    try {
      Object.assign(process.env, { DATA_DIR: dataDir, LOG_LEVEL: 'silent', PORT: String(await freePort()) });
      delete process.env.DATABASE_URL;
      delete process.env.CLI_SERVER_URL;
      // The bin prints this message as `error: …` and exits 1 (src/cli/index.ts).
      await expect(runCli(['accounts', 'list'], () => {})).rejects.toThrow(`in use by process ${server.child.pid}`);
      // It names the URL it tried and the one the server wrote in its token file; no ADMIN_TOKEN advice.
      const message = await runCli(['accounts', 'list'], () => {}).then(
        () => '',
        (e: Error) => e.message,
      );
      expect(message).toContain(`no server answered at http://127.0.0.1:${process.env.PORT}`);
      expect(message).toContain(`CLI_SERVER_URL=${server.url}`);
      expect(message).not.toContain('ADMIN_TOKEN');
    } finally {
      process.env = saved;
      server.child.kill('SIGTERM');
      await server.waitForExit();
    }
  }, 60_000);
});
