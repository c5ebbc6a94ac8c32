// Operator CLI: `keys create` and `keys revoke`, on the data dir directly (no server) and through a
// running server's admin API; each key is checked where it matters, against the public API.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/index.ts';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.ts';
import { tempDataDir } from '../helpers/data-dir.ts';

const dataDir = tempDataDir('cbs-cli-keys-');
const ADMIN = 'cli-keys-admin-token-0123456';

async function cli(...argv: string[]): Promise<any> {
  let printed = '';
  const code = await runCli([...argv, '--json'], (s) => (printed += s));
  expect(code).toBe(0);
  return JSON.parse(printed);
}

const activeKeys = async (accountId: string) =>
  ((await cli('keys', 'list', accountId)).adminApiKeys as { id: string; revokedAt: string | null }[]).filter((k) => !k.revokedAt).map((k) => k.id);

beforeAll(() => {
  // PORT 1: nothing answers there, so the CLI opens the data dir itself until a server is started.
  Object.assign(process.env, { DATA_DIR: dataDir, LOG_LEVEL: 'silent', SEED_DEMO: 'false', PORT: '1', ADMIN_TOKEN: ADMIN });
  delete process.env.DATABASE_URL;
  delete process.env.CLI_SERVER_URL;
});
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

describe('keys create / keys revoke', () => {
  let accountId = '';
  let firstKey = { id: '', apiKey: '' };
  let secondKey = { id: '', apiKey: '' };

  it('without a server: create issues a new key (shown once), revoke revokes exactly that key', async () => {
    const created = (await cli('accounts', 'create', '--name', 'Keys Co', '--email', 'keys@example.test')).adminCreateAccount;
    accountId = created.account.id;
    firstKey = { id: created.apiKeyId, apiKey: created.apiKey };

    const issued = (await cli('keys', 'create', accountId)).adminCreateApiKey;
    expect(issued.apiKey).toMatch(/^sk_[A-Za-z0-9_-]{43}$/);
    expect(issued.id).not.toBe(firstKey.id);
    expect(issued.apiKey).not.toBe(firstKey.apiKey);
    secondKey = issued;
    expect((await activeKeys(accountId)).sort()).toEqual([firstKey.id, secondKey.id].sort());
    // The list shows a prefix to tell keys apart, never the key.
    const listed = JSON.stringify(await cli('keys', 'list', accountId));
    expect(listed).not.toContain(secondKey.apiKey);
    expect(listed).toContain(secondKey.apiKey.slice(0, 10));

    expect((await cli('keys', 'revoke', firstKey.id)).adminRevokeApiKey).toBe(true);
    expect(await activeKeys(accountId)).toEqual([secondKey.id]);
    // Revoking again, or a key that does not exist, changes nothing and says so.
    expect((await cli('keys', 'revoke', firstKey.id)).adminRevokeApiKey).toBe(false);
    expect((await cli('keys', 'revoke', 'key-does-not-exist')).adminRevokeApiKey).toBe(false);
    expect(await activeKeys(accountId)).toEqual([secondKey.id]);
  }, 60_000);

  it('refuses missing arguments and unknown accounts', async () => {
    await expect(runCli(['keys', 'create'], () => {})).rejects.toThrow('<account-id> is required');
    await expect(runCli(['keys', 'revoke'], () => {})).rejects.toThrow('<key-id> is required');
    await expect(runCli(['keys', 'create', 'acc-unknown'], () => {})).rejects.toThrow(/Account acc-unknown not found/);
  }, 60_000);

  describe('while the server runs', () => {
    let server: ServerProcess;
    const me = (key: string) => fetch(`${server.url}/api/v1/public/me`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.status);

    beforeAll(async () => {
      server = await startServerProcess({ DATA_DIR: dataDir, RUN_WORKER: 'false', ADMIN_TOKEN: ADMIN, SEED_DEMO: 'false' });
      process.env.CLI_SERVER_URL = server.url;
    }, 60_000);
    afterAll(async () => {
      delete process.env.CLI_SERVER_URL;
      server.child.kill('SIGTERM');
      await server.waitForExit();
    });

    it('keys created and revoked offline are honoured by the API', async () => {
      expect(await me(secondKey.apiKey)).toBe(200);
      expect(await me(firstKey.apiKey)).toBe(401);
    });

    it('through the admin API: a new key works at once, and stops working the moment it is revoked', async () => {
      const third = (await cli('keys', 'create', accountId)).adminCreateApiKey;
      expect(await me(third.apiKey)).toBe(200);
      expect((await cli('keys', 'revoke', third.id)).adminRevokeApiKey).toBe(true);
      expect(await me(third.apiKey)).toBe(401);
      // The account's other key is untouched.
      expect(await me(secondKey.apiKey)).toBe(200);
      expect(await activeKeys(accountId)).toEqual([secondKey.id]);
    }, 60_000);
  });
});
