// Setting an account up for Vapi through `provider set` (GraphQL adminSetProvider, which the CLI
// sends): admin only, the config sealed at rest, every setting checked before anything is stored;
// and Vapi's server-URL route as the HTTP layer serves it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { vapiConfigForAccount } from '../../src/dispatch/voice/vapi/account-config.ts';
import { vapiAccounts } from '../../src/dispatch/voice/vapi/from-config.ts';
import { vapiHmacSignature } from '../../src/dispatch/voice/vapi/signature.ts';
import { commands } from '../../src/cli/commands.ts';

const KEY = 'vapi_private_key_config_0123456789';
const SET = `mutation($id: ID!, $p: String!, $k: String, $r: Float, $s: JSON) { adminSetProvider(accountId: $id, provider: $p, apiKey: $k, dialRatePerNumber: $r, settings: $s) }`;
const SETTINGS = { phoneNumbers: '+14155550100=pn_1, *=pn_any', assistantId: 'asst_1', webhookAuth: 'hmac', webhookSecret: 'whsec_1' };

let t: TestApp;
let a: SeededAccount;
beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount();
});
afterAll(() => t.close());

const vars = (over: Record<string, unknown> = {}, settings: Record<string, unknown> = {}) => ({
  id: a.account.id,
  p: 'vapi',
  k: KEY,
  r: null,
  s: { ...SETTINGS, ...settings },
  ...over,
});

describe('provider set vapi', () => {
  it('needs the admin token and stores the config sealed', async () => {
    expect((await t.gql(SET, vars(), a.apiKey)).body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await t.gql(SET, vars({ r: 2 }), ADMIN_TOKEN)).body).toEqual({ data: { adminSetProvider: 'vapi' } });
    const [row] = await t.deps.db.prisma.$queryRaw<{ provider: string; provider_config: string }[]>`
      SELECT provider, provider_config FROM accounts WHERE id = ${a.account.id}`;
    expect(row.provider).toBe('vapi');
    expect(row.provider_config.startsWith('enc1:')).toBe(true);
    expect(row.provider_config).not.toContain(KEY);
    expect(row.provider_config).not.toContain('whsec_1');
    expect(await vapiConfigForAccount(t.deps, a.account.id)).toEqual({
      apiKey: KEY,
      phoneNumberIds: { '+14155550100': 'pn_1', '*': 'pn_any' },
      assistantId: 'asst_1',
      webhookAuth: 'hmac',
      webhookSecret: 'whsec_1',
      dialRatePerNumber: 2,
    });
  });

  it('refuses a config it could not dial or verify with, storing nothing', async () => {
    const before = await vapiConfigForAccount(t.deps, a.account.id);
    for (const [over, settings, fault] of [
      [{}, { phoneNumbers: '' }, 'settings.phoneNumbers: Field required'],
      [{}, { phoneNumbers: '4155550100=pn_1' }, 'should be <E.164 from-number or *>'],
      [{}, { phoneNumbers: '+14155550100' }, 'should be <E.164 from-number or *>'],
      [{}, { phoneNumbers: '+14155550100=' }, 'should be <E.164 from-number or *>'],
      [{}, { webhookAuth: 'basic' }, 'settings.webhookAuth'],
      [{}, { webhookSecret: ' ' }, 'settings.webhookSecret'],
      [{}, { voice: 'x' }, 'settings.voice: Vapi takes'],
      [{ k: '' }, {}, 'apiKey: Field required'],
      [{ r: -1 }, {}, 'dialRatePerNumber'],
    ] as const) {
      const res = await t.gql(SET, vars(over, settings), ADMIN_TOKEN);
      expect(JSON.stringify(res.body.errors), JSON.stringify({ over, settings })).toContain(fault);
    }
    expect(await vapiConfigForAccount(t.deps, a.account.id)).toEqual(before);
  });

  it('is what `provider set vapi --settings` sends; back to the simulator forgets it', async () => {
    const sent: Array<{ query: string; variables: Record<string, unknown> }> = [];
    const gql = (async (query: string, variables: Record<string, unknown>) => (sent.push({ query, variables }), {})) as never;
    await commands['provider set'].run(gql, ['vapi'], { account: a.account.id, 'api-key': KEY, settings: JSON.stringify(SETTINGS) }, {} as never);
    const res = await t.gql(sent[0].query, sent[0].variables, ADMIN_TOKEN);
    expect(res.body).toEqual({ data: { adminSetProvider: 'vapi' } });
    expect((await vapiConfigForAccount(t.deps, a.account.id))?.phoneNumberIds).toEqual({ '+14155550100': 'pn_1', '*': 'pn_any' });
    expect((await t.gql(SET, { id: a.account.id, p: 'simulator' }, ADMIN_TOKEN)).body).toEqual({ data: { adminSetProvider: 'simulator' } });
    expect(await vapiConfigForAccount(t.deps, a.account.id)).toBeNull();
  });
});

describe('POST /providers/vapi/webhook', () => {
  it('stores an authenticated message once, refuses unauthenticated ones, acknowledges the rest', async () => {
    expect((await t.gql(SET, vars(), ADMIN_TOKEN)).body.errors).toBeUndefined();
    const message = (type: string, extra: Record<string, unknown> = {}) =>
      JSON.stringify({
        message: {
          type,
          ...extra,
          call: { id: 'vc_1', assistantOverrides: { metadata: { account_id: a.account.id, call_id: 'call_x', attempt: 1 } } },
        },
      });
    const post = (body: string, secret = 'whsec_1', at = Date.now()) =>
      t.request('POST', '/providers/vapi/webhook', {
        rawBody: body,
        headers: { 'content-type': 'application/json', 'x-timestamp': String(at), 'x-signature': vapiHmacSignature(secret, String(at), body) },
      });
    const ended = message('status-update', { status: 'ended', endedReason: 'customer-busy' });
    expect((await post(ended)).status).toBe(204);
    expect((await post(ended)).status).toBe(204);
    expect((await post(ended, 'wrong')).status).toBe(401);
    expect((await post(ended, 'whsec_1', Date.now() - 10 * 60_000)).status).toBe(401);
    expect((await t.request('POST', '/providers/vapi/webhook', { rawBody: ended, headers: { 'content-type': 'application/json' } })).status).toBe(
      401,
    );
    expect((await post(message('transcript', { transcript: 'hi' }))).status).toBe(204);
    const rows = await t.deps.db.prisma.$queryRaw<{ id: string; call_id: string }[]>`SELECT id, call_id FROM provider_events WHERE provider = 'vapi'`;
    expect(rows).toEqual([{ id: 'vapi:vc_1:status-update:ended', call_id: 'call_x' }]);
  });
});

describe("a process part's account cache", () => {
  it('reads an account once per 30 s of the app clock, not once per dial', async () => {
    expect((await t.gql(SET, vars(), ADMIN_TOKEN)).body).toEqual({ data: { adminSetProvider: 'vapi' } });
    const accounts = vapiAccounts(t.deps);
    expect((await accounts(a.account.id))?.assistantId).toBe('asst_1');
    expect((await t.gql(SET, vars({}, { assistantId: 'asst_2' }), ADMIN_TOKEN)).body).toEqual({ data: { adminSetProvider: 'vapi' } });
    expect((await accounts(a.account.id))?.assistantId).toBe('asst_1');
    // Expired by the app clock alone (lru-cache 10 would read the process's own).
    t.clock.advance(30_000);
    try {
      expect((await accounts(a.account.id))?.assistantId).toBe('asst_2');
    } finally {
      t.clock.advance(-30_000);
    }
  });
});
