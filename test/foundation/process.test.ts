import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { startServerProcess } from '../helpers/server-process.ts';
import { waitFor } from '../helpers/wait.ts';
import { tempDataDir } from '../helpers/data-dir.ts';

const root = path.resolve(import.meta.dirname, '../..');

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cbs-proc-'));
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

const env = { DATA_DIR: dataDir, RUN_WORKER: 'false', ADMIN_TOKEN: 'process-test-admin-token-123' };

async function me(url: string, key: string) {
  const r = await fetch(`${url}/api/v1/public/me`, { headers: { authorization: `Bearer ${key}` } });
  return { status: r.status, body: (await r.json()) as any };
}

describe('npm start on an embedded data dir', () => {
  let key = '';
  let accountId = '';

  it('first start seeds a demo account and prints a working key and curl line', async () => {
    const s = await startServerProcess(env);
    try {
      await expect.poll(() => s.stdout(), { timeout: 20_000 }).toContain('curl -s');
      key = /(sk_[A-Za-z0-9_-]{43})/.exec(s.stdout())![1];
      // The dashboard's address beside the curl line, and it serves the dashboard.
      expect(s.stdout()).toContain(
        `curl -s ${s.url}/api/v1/public/me -H 'Authorization: Bearer ${key}'\nDashboard (paste the key): ${s.url}/dashboard `,
      );
      expect((await fetch(`${s.url}/dashboard`)).status).toBe(200);
      const r = await me(s.url, key);
      expect(r.status).toBe(200);
      expect(r.body.data.name).toBe('Demo Account');
      // The account id every CLI example needs, and how to get a new key for a lost one.
      accountId = r.body.data.account_id;
      expect(s.stdout()).toContain(`Demo account created: ${accountId}.`);
      expect(s.stdout()).toContain(`Lost the API key? npm run cli -- keys create ${accountId}\n`);
    } finally {
      s.child.kill('SIGTERM');
      expect(await s.waitForExit()).toBe(0);
    }
  }, 90_000);

  it('a restart keeps accounts and keys, and does not seed again; with its worker it is ready (/readyz)', async () => {
    const s = await startServerProcess({ ...env, RUN_WORKER: 'true' });
    try {
      expect((await me(s.url, key)).status).toBe(200);
      expect(s.stdout()).not.toContain('Demo account created');
      // Every start says where it listens and how to replace a lost key (the only account is named).
      await expect
        .poll(() => s.stdout())
        .toContain(`Call batch service on ${s.url}   dashboard: ${s.url}/dashboard   API reference: ${s.url}/docs\n`);
      expect(s.stdout()).toContain(`Lost the API key? npm run cli -- keys create ${accountId}\n`);
      const ready = await fetch(`${s.url}/readyz`);
      expect([ready.status, await ready.json()]).toEqual([200, { status: 'ready' }]);
    } finally {
      s.child.kill('SIGTERM');
      await s.waitForExit();
    }
  }, 90_000);

  it('SIGINT shuts down cleanly (exit 0), and the data dir opens again afterwards', async () => {
    const s = await startServerProcess(env);
    expect((await me(s.url, key)).status).toBe(200);
    s.child.kill('SIGINT');
    expect(await s.waitForExit()).toBe(0);
    const again = await startServerProcess(env);
    try {
      expect((await me(again.url, key)).status).toBe(200);
    } finally {
      again.child.kill('SIGTERM');
      expect(await again.waitForExit()).toBe(0);
    }
  }, 90_000);

  it('a signal while start-up is still under way (first-run seeding) is a clean exit too, and the seed is whole', async () => {
    // Initialised and migrated but empty: the first start's initdb is the first test's; this one is about the seeding.
    const fresh = tempDataDir('cbs-proc-early-');
    try {
      const freshEnv = { ...env, DATA_DIR: fresh };
      const s = await startServerProcess(freshEnv);
      // /healthz answers as soon as the port listens; the demo seed is written after that.
      s.child.kill('SIGINT');
      expect(await s.waitForExit()).toBe(0);
      const again = await startServerProcess(freshEnv);
      try {
        // Start-up finished before the shutdown: the seed was written and its key printed, once.
        expect(s.stdout()).toContain('Demo account created');
        expect(again.stdout()).not.toContain('Demo account created');
        const demoKey = /(sk_[A-Za-z0-9_-]{43})/.exec(s.stdout())![1];
        const r = await me(again.url, demoKey);
        expect([r.status, r.body.data.name]).toEqual([200, 'Demo Account']);
      } finally {
        again.child.kill('SIGTERM');
        expect(await again.waitForExit()).toBe(0);
      }
    } finally {
      fs.rmSync(fresh, { recursive: true, force: true });
    }
  }, 90_000);

  it('survives SIGKILL during writes: the data dir opens again and committed rows are there', async () => {
    const s = await startServerProcess(env);
    let created = 0;
    const writer = (async () => {
      for (let i = 0; i < 10_000; i++) {
        try {
          const r = await fetch(`${s.url}/graphql`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
            body: JSON.stringify({ query: `mutation { addDidNumber(input: { number: "+1415555${String(1000 + i).padStart(4, '0')}" }) { id } }` }),
          });
          const body = (await r.json()) as any;
          if (body.data?.addDidNumber) created++;
        } catch {
          return; // server is gone
        }
      }
    })();
    // Killed in the middle of the writes, once several were acknowledged (however slow the machine).
    await waitFor(() => created >= 5, { what: 'acknowledged writes' });
    s.child.kill('SIGKILL');
    await s.waitForExit();
    await writer;
    expect(created).toBeGreaterThan(0);

    const again = await startServerProcess(env);
    try {
      expect((await me(again.url, key)).status).toBe(200);
      const r = await fetch(`${again.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ query: '{ didNumbers { id } }' }),
      });
      const dids = ((await r.json()) as any).data.didNumbers;
      // Every acknowledged write survived (the demo DID plus at least the acknowledged ones).
      expect(dids.length).toBeGreaterThanOrEqual(created + 1);
    } finally {
      again.child.kill('SIGTERM');
      await again.waitForExit();
    }
  }, 120_000);
});

describe('configuration errors stop start-up', () => {
  it('PORT=notaport: exits non-zero before listening, with stderr naming PORT', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'src/main.ts')], {
      cwd: root,
      env: { ...process.env, ...env, PORT: 'notaport', DATABASE_URL: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    expect(code).not.toBe(0);
    expect(code).not.toBeNull();
    expect(stderr).toMatch(/^\s*PORT: /m);
    expect(stderr).toContain('Invalid configuration');
    // A message for a person, not a crash: no stack trace, nothing served or seeded.
    expect(stderr).not.toMatch(/\bat .+:\d+:\d+/);
    expect(stdout).not.toContain('listening');
    expect(stdout).not.toContain('Demo account created');
  }, 60_000);
});
