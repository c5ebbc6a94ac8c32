import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLAG_NAMES, runCli, SWITCH_NAMES } from '../../src/cli/index.ts';
import { commands } from '../../src/cli/commands.ts';
import { openDatabase } from '../../src/db/client.ts';
import { retellConfigForAccount } from '../../src/dispatch/voice/retell/account-config.ts';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.ts';
import { tempDataDir } from '../helpers/data-dir.ts';

const dataDir = tempDataDir('cbs-cli-');
const ADMIN = 'cli-test-admin-token-0123456';

async function cli(...argv: string[]): Promise<any> {
  let printed = '';
  const code = await runCli([...argv, '--json'], (s) => (printed += s));
  expect(code).toBe(0);
  return JSON.parse(printed);
}

beforeAll(() => {
  Object.assign(process.env, { DATA_DIR: dataDir, LOG_LEVEL: 'silent', SEED_DEMO: 'false', PORT: '1', ADMIN_TOKEN: ADMIN });
  delete process.env.DATABASE_URL;
});
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

describe('operator CLI', () => {
  let accountId = '';
  let firstKey = '';

  it('without a server, opens the data dir itself: account, agent, version, DID, voices', async () => {
    const created = await cli(
      'accounts',
      'create',
      '--name',
      'Acme',
      '--email',
      'ops@acme.test',
      '--max-batch-size',
      '250',
      '--voices',
      'alloy,verse',
    );
    accountId = created.adminCreateAccount.account.id;
    firstKey = created.adminCreateAccount.apiKey;
    expect(firstKey).toMatch(/^sk_/);
    expect(created.adminCreateAccount.account.limits.maxBatchSize).toBe(250);

    const agent = (
      await cli('agents', 'create', '--account', accountId, '--name', 'Bot', '--voice', 'verse', '--outcome-keys', 'interested,callback')
    ).createAgent;
    expect(agent.outcomeKeys).toEqual(['interested', 'callback']);
    const version = (await cli('versions', 'create', '--account', accountId, '--agent', agent.id, '--name', 'v1', '--prompt', 'Hello'))
      .createPromptVersion;
    expect(version.agent.id).toBe(agent.id);
    expect((await cli('dids', 'add', '--account', accountId, '--number', '+1 415 555 0199')).addDidNumber.number).toBe('+14155550199');
    expect((await cli('voices', 'set', accountId, 'alloy,sage')).adminUpdateAccount.voices).toEqual(['alloy', 'sage']);
    expect((await cli('agents', 'list', '--account', accountId)).agents).toHaveLength(1);
  }, 60_000);

  it('provider set retell stores the API key encrypted; agents and versions carry the Retell agent id and version', async () => {
    const KEY = 'key_cli_retell_0123456789abcdef';
    expect(await cli('provider', 'set', 'retell', '--account', accountId, '--api-key', KEY, '--dial-rate', '2')).toEqual({
      adminSetProvider: 'retell',
    });
    // A Retell voice id in the account's voices is sent to Retell as the call's voice_id.
    expect((await cli('voices', 'set', accountId, 'alloy,sage,retell-Cimo')).adminUpdateAccount.voices).toEqual(['alloy', 'sage', 'retell-Cimo']);
    const agent = (
      await cli(
        'agents',
        'create',
        '--account',
        accountId,
        '--name',
        'Retell bot',
        '--voice',
        'retell-Cimo',
        '--outcome-keys',
        'interested',
        '--provider-agent-id',
        'agent_0123abc',
      )
    ).createAgent;
    expect(agent).toMatchObject({ voice: 'retell-Cimo', providerAgentId: 'agent_0123abc' });
    // Retell agent versions start at 0.
    const version = (
      await cli('versions', 'create', '--account', accountId, '--agent', agent.id, '--name', 'v0', '--prompt', 'Hi', '--provider-agent-version', '0')
    ).createPromptVersion;
    expect(version).toMatchObject({ providerAgentVersion: 0, agent: { id: agent.id } });
    await expect(runCli(['provider', 'set', 'retell', '--account', accountId, '--api-key', KEY, '--dial-rate', 'fast'], () => {})).rejects.toThrow(
      '--dial-rate must be a number',
    );
    await expect(runCli(['provider', 'set', 'retell', '--account', accountId], () => {})).rejects.toThrow(/apiKey/);
    // Provider-specific settings travel as a JSON object; Retell takes none.
    await expect(runCli(['provider', 'set', 'retell', '--account', accountId, '--api-key', KEY, '--settings', '[1]'], () => {})).rejects.toThrow(
      '--settings must be a JSON object',
    );
    await expect(runCli(['provider', 'set', 'retell', '--account', accountId, '--api-key', KEY, '--settings', '{"x":1}'], () => {})).rejects.toThrow(
      'settings: Retell takes none',
    );

    // What is stored: sealed with the app secret; only that secret opens it.
    const db = await openDatabase({ dataDir });
    try {
      const [row] = await db.prisma.$queryRaw<{ provider: string; provider_config: string }[]>`
        SELECT provider, provider_config FROM accounts WHERE id = ${accountId}`;
      expect(row.provider).toBe('retell');
      expect(row.provider_config.startsWith('enc1:')).toBe(true);
      expect(row.provider_config).not.toContain(KEY);
      const appSecret = fs.readFileSync(path.join(dataDir, 'app-secret'), 'utf8').trim();
      expect(await retellConfigForAccount({ db, appSecret }, accountId)).toEqual({ apiKey: KEY, dialRatePerNumber: 2 });
      const [ids] = await db.prisma.$queryRaw<{ provider_agent_id: string; provider_agent_version: number }[]>`
        SELECT a.provider_agent_id, p.provider_agent_version FROM agents a JOIN prompt_versions p ON p.agent_id = a.id WHERE a.id = ${agent.id}`;
      expect(ids).toEqual({ provider_agent_id: 'agent_0123abc', provider_agent_version: 0 });
    } finally {
      await db.close();
    }
  }, 60_000);

  it('provider route lists providers in order with their own sealed settings; provider set replaces it', async () => {
    const KEY = 'key_cli_route_0123456789abcdef';
    const route = JSON.stringify([
      { provider: 'simulator', weight: 1 },
      { provider: 'retell', apiKey: KEY, weight: 0 },
    ]);
    expect(await cli('provider', 'route', '--account', accountId, '--providers', route)).toEqual({ adminSetProviderRoute: ['simulator', 'retell'] });
    await expect(runCli(['provider', 'route', '--account', accountId, '--providers', '{"provider":"retell"}'], () => {})).rejects.toThrow(
      '--providers must be a JSON array of objects',
    );
    const twice = JSON.stringify([{ provider: 'simulator' }, { provider: 'simulator' }]);
    await expect(runCli(['provider', 'route', '--account', accountId, '--providers', twice], () => {})).rejects.toThrow(/listed twice/);
    const noKey = JSON.stringify([{ provider: 'simulator' }, { provider: 'retell' }]);
    await expect(runCli(['provider', 'route', '--account', accountId, '--providers', noKey], () => {})).rejects.toThrow(/providers\[1\]\.apiKey/);

    const db = await openDatabase({ dataDir });
    const appSecret = fs.readFileSync(path.join(dataDir, 'app-secret'), 'utf8').trim();
    try {
      const rows = await db.prisma.accountProvider.findMany({ where: { accountId }, orderBy: { position: 'asc' } });
      expect(rows.map((r) => [r.provider, r.weight, r.config === null])).toEqual([
        ['simulator', 1, true],
        ['retell', 0, false],
      ]);
      expect(rows[1].config).not.toContain(KEY);
      expect((await db.prisma.account.findUniqueOrThrow({ where: { id: accountId } })).provider).toBe('simulator');
      // Retell, second in the route, reads its own key there.
      expect(await retellConfigForAccount({ db, appSecret }, accountId)).toEqual({ apiKey: KEY });
    } finally {
      await db.close();
    }
    expect(await cli('provider', 'set', 'retell', '--account', accountId, '--api-key', KEY)).toEqual({ adminSetProvider: 'retell' });
    const after = await openDatabase({ dataDir });
    try {
      expect(await after.prisma.accountProvider.count({ where: { accountId } })).toBe(0);
    } finally {
      await after.close();
    }
  }, 60_000);

  it("sets and clears the frequency cap; names an agent's opt-out key at create and changes it", async () => {
    expect((await cli('accounts', 'update', accountId, '--frequency-cap', '7/7d')).adminUpdateAccount.frequencyCap).toEqual({
      maxCalls: 7,
      periodSeconds: 604_800,
    });
    await expect(runCli(['accounts', 'update', accountId, '--frequency-cap', '7 a week'], () => {})).rejects.toThrow(
      '--frequency-cap must be CALLS/PERIOD',
    );
    expect((await cli('accounts', 'update', accountId, '--frequency-cap', 'off')).adminUpdateAccount.frequencyCap).toBeNull();
    const agent = (
      await cli(
        'agents',
        'create',
        '--account',
        accountId,
        '--name',
        'Polite bot',
        '--voice',
        'alloy',
        '--outcome-keys',
        'interested,opt_out',
        '--opt-out-key',
        'opt_out',
      )
    ).createAgent;
    expect(agent.optOutOutcomeKey).toBe('opt_out');
    expect((await cli('agents', 'update', agent.id, '--account', accountId, '--opt-out-key', 'off')).updateAgent.optOutOutcomeKey).toBeNull();
    expect((await cli('agents', 'update', agent.id, '--account', accountId, '--opt-out-key', 'opt_out')).updateAgent.optOutOutcomeKey).toBe(
      'opt_out',
    );
  }, 60_000);

  it('accepts every flag a command documents (the parser is strict)', () => {
    for (const c of Object.values(commands)) {
      for (const [, flag] of c.usage.matchAll(/--([a-z][a-z-]*)/g)) expect([...FLAG_NAMES, ...SWITCH_NAMES], `${c.usage}`).toContain(flag);
    }
  });

  it('--help (or -h, or help) at any level prints the usage of the commands under it, exit 0, without connecting', async () => {
    const helpOf = async (...argv: string[]) => {
      let printed = '';
      expect(await runCli(argv, (s) => (printed += s))).toBe(0);
      return printed;
    };
    for (const argv of [['--help'], ['-h'], ['help']]) expect(await helpOf(...argv)).toContain('accounts create --name NAME');
    const keys = await helpOf('keys', '--help');
    expect(keys).toContain('keys rotate <account-id>');
    expect(keys).not.toContain('accounts create');
    expect(await helpOf('help', 'keys')).toBe(keys);
    expect(await helpOf('keys', 'create', '-h')).toContain('keys create <account-id>');
    expect(await helpOf('keys', 'create', '-h')).toContain('e.g. npm run cli -- keys create acc_…');
  });

  it('fails clearly on bad input', async () => {
    await expect(runCli(['agents', 'create', '--account', accountId, '--name', 'X'], () => {})).rejects.toThrow('--voice is required');
    expect(await runCli(['nonsense'], () => {})).toBe(2);
  });

  describe('while the embedded server runs without ADMIN_TOKEN', () => {
    let server: ServerProcess;
    beforeAll(async () => {
      server = await startServerProcess({ DATA_DIR: dataDir, RUN_WORKER: 'false', ADMIN_TOKEN: '', SEED_DEMO: 'false' });
      process.env.CLI_SERVER_URL = server.url;
      process.env.ADMIN_TOKEN = '';
    }, 60_000);
    afterAll(async () => {
      delete process.env.CLI_SERVER_URL;
      process.env.ADMIN_TOKEN = ADMIN;
      server.child.kill('SIGTERM');
      await server.waitForExit();
    });

    it('the server leaves an operator token in the data dir (0600) and the CLI uses it', async () => {
      const file = path.join(dataDir, 'operator-token');
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      const accounts = (await cli('accounts', 'list')).adminAccounts;
      expect(accounts.map((x: any) => x.id)).toContain(accountId);
      // The file's token is the running server's admin token, and nothing else is.
      const admin = (token: string) =>
        fetch(`${server.url}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: JSON.stringify({ query: '{ adminAccounts { id } }' }),
        }).then((r) => r.json() as Promise<any>);
      const written = JSON.parse(fs.readFileSync(file, 'utf8'));
      // It names where its server listens (the CLI checks it talks to that server before sending it).
      expect(written.url).toBe(server.url);
      expect((await admin(written.token)).data.adminAccounts.length).toBeGreaterThan(0);
      expect((await admin(ADMIN)).errors).toBeDefined();
    }, 60_000);
  });

  describe('while the server runs', () => {
    let server: ServerProcess;
    beforeAll(async () => {
      server = await startServerProcess({ DATA_DIR: dataDir, RUN_WORKER: 'false', ADMIN_TOKEN: ADMIN, SEED_DEMO: 'false' });
      process.env.CLI_SERVER_URL = server.url;
    }, 60_000);
    afterAll(async () => {
      delete process.env.CLI_SERVER_URL;
      server.child.kill('SIGTERM');
      await server.waitForExit();
    });

    it('talks to the admin API; rotating keys revokes the old one', async () => {
      const rotated = await cli('keys', 'rotate', accountId);
      expect(rotated.revoked).toHaveLength(1);
      const me = (key: string) => fetch(`${server.url}/api/v1/public/me`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.status);
      expect(await me(rotated.newKey.apiKey)).toBe(200);
      expect(await me(firstKey)).toBe(401);
      const keys = (await cli('keys', 'list', accountId)).adminApiKeys;
      expect(keys.filter((k: any) => !k.revokedAt)).toHaveLength(1);
    }, 60_000);

    it('refuses without the admin token rather than opening the data dir twice', async () => {
      // The earlier embedded start's token file went when this server started with its own token.
      expect(fs.existsSync(path.join(dataDir, 'operator-token'))).toBe(false);
      process.env.ADMIN_TOKEN = '';
      try {
        await expect(runCli(['accounts', 'list'], () => {})).rejects.toThrow(/ADMIN_TOKEN/);
      } finally {
        process.env.ADMIN_TOKEN = ADMIN;
      }
    });
  });
});
