// The account's signing secret on GraphQL (API key) and through the operator CLI (admin token + act-as).
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { runCli } from '../../src/cli/index.ts';
import { tempDataDir } from '../helpers/data-dir.ts';

const FIELDS = 'secret previousSecret rotatedAt previousSecretExpiresAt';

describe('webhook secret on GraphQL', () => {
  let t: TestApp;
  let a: SeededAccount;
  beforeAll(async () => {
    t = await createTestApp();
    a = await t.seedAccount();
  });
  afterAll(() => t.close());

  it('is created on first read, stable, per account, and stored encrypted', async () => {
    const first = (await t.gql(`{ webhookSecret { ${FIELDS} } }`, {}, a.apiKey)).body.data.webhookSecret;
    expect(first).toEqual({ secret: expect.stringMatching(/^whsec_/), previousSecret: null, rotatedAt: null, previousSecretExpiresAt: null });
    expect((await t.gql(`{ webhookSecret { secret } }`, {}, a.apiKey)).body.data.webhookSecret.secret).toBe(first.secret);
    const other = await t.seedAccount();
    expect((await t.gql(`{ webhookSecret { secret } }`, {}, other.apiKey)).body.data.webhookSecret.secret).not.toBe(first.secret);
    const row = await t.deps.db.prisma.account.findUniqueOrThrow({ where: { id: a.account.id } });
    expect(row.webhookSecret).toMatch(/^enc1:/);
    expect(row.webhookSecret).not.toContain(first.secret.slice(6, 20));
    expect((await t.gql(`{ webhookSecret { secret } }`, {}, null)).body.errors![0].extensions.code).toBe('UNAUTHENTICATED');
  });

  it('rotates: the old secret keeps signing for 24 h, a second rotation drops the oldest', async () => {
    t.clock.set(new Date('2030-03-01T10:00:00.000Z'));
    const old = (await t.gql(`{ webhookSecret { secret } }`, {}, a.apiKey)).body.data.webhookSecret.secret;
    const r1 = (await t.gql(`mutation { rotateWebhookSecret { ${FIELDS} } }`, {}, a.apiKey)).body.data.rotateWebhookSecret;
    expect(r1).toEqual({
      secret: expect.stringMatching(/^whsec_/),
      previousSecret: old,
      rotatedAt: '2030-03-01T10:00:00.000Z',
      previousSecretExpiresAt: '2030-03-02T10:00:00.000Z',
    });
    const r2 = (await t.gql(`mutation { rotateWebhookSecret { ${FIELDS} } }`, {}, a.apiKey)).body.data.rotateWebhookSecret;
    expect(r2.previousSecret).toBe(r1.secret);
    expect([r2.secret, r2.previousSecret]).not.toContain(old);
    t.clock.advance(24 * 3_600_000);
    expect((await t.gql(`{ webhookSecret { ${FIELDS} } }`, {}, a.apiKey)).body.data.webhookSecret).toEqual({
      secret: r2.secret,
      previousSecret: null,
      rotatedAt: '2030-03-01T10:00:00.000Z',
      previousSecretExpiresAt: null,
    });
  });
});

describe('webhooks secret CLI', () => {
  const dataDir = tempDataDir('cbs-webhooks-cli-');
  const saved = { ...process.env };
  beforeAll(() => {
    Object.assign(process.env, {
      DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
      SEED_DEMO: 'false',
      PORT: '1',
      ADMIN_TOKEN: 'webhooks-cli-admin-token-0123',
    });
    delete process.env.DATABASE_URL;
    delete process.env.CLI_SERVER_URL;
  });
  afterAll(() => {
    process.env = saved;
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  async function cli(...argv: string[]): Promise<any> {
    let printed = '';
    expect(await runCli([...argv, '--json'], (s) => (printed += s))).toBe(0);
    return JSON.parse(printed);
  }

  it('shows and rotates an account’s secret', async () => {
    const id = (await cli('accounts', 'create', '--name', 'Hooks', '--email', 'hooks@example.com')).adminCreateAccount.account.id;
    const shown = (await cli('webhooks', 'secret', 'show', '--account', id)).webhookSecret;
    expect(shown.secret).toMatch(/^whsec_/);
    const rotated = (await cli('webhooks', 'secret', 'rotate', '--account', id)).rotateWebhookSecret;
    expect(rotated.previousSecret).toBe(shown.secret);
    expect(rotated.secret).not.toBe(shown.secret);
    expect((await cli('webhooks', 'secret', 'show', '--account', id)).webhookSecret.secret).toBe(rotated.secret);
    await expect(runCli(['webhooks', 'secret', 'show'], () => {})).rejects.toThrow('--account is required');
    await expect(runCli(['webhooks', 'secret', 'burn', '--account', id], () => {})).rejects.toThrow(/show or rotate/);
  }, 60_000);
});
