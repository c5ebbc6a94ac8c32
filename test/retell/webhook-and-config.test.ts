import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sign } from 'retell-sdk';
import { ADMIN_TOKEN, createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { retellConfigForAccount } from '../../src/dispatch/voice/retell/account-config.ts';
import { takeRetellEvents } from '../../src/dispatch/voice/retell/stored-events.ts';
import { setAccountProvider } from '../../src/services/accounts/provider-config.ts';

const KEY = 'key_retell_webhook_0123456789';
let t: TestApp;
let a: SeededAccount;

beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount();
});
afterAll(() => t.close());

const SET = `mutation($id: ID!, $p: String!, $k: String) { adminSetProvider(accountId: $id, provider: $p, retellApiKey: $k) }`;

describe('provider config', () => {
  it('needs the admin token and stores the Retell key sealed', async () => {
    const denied = await t.gql(SET, { id: a.account.id, p: 'retell', k: KEY }, a.apiKey);
    expect(denied.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const missing = await t.gql(SET, { id: a.account.id, p: 'retell' }, ADMIN_TOKEN);
    expect(missing.body.errors).toBeTruthy();
    const ok = await t.gql(SET, { id: a.account.id, p: 'retell', k: KEY }, ADMIN_TOKEN);
    expect(ok.body).toEqual({ data: { adminSetProvider: 'retell' } });
    const [row] = await t.deps.db.prisma.$queryRaw<{ provider: string; provider_config: string }[]>`
      SELECT provider, provider_config FROM accounts WHERE id = ${a.account.id}`;
    expect(row.provider).toBe('retell');
    expect(row.provider_config.startsWith('enc1:')).toBe(true);
    expect(row.provider_config).not.toContain(KEY);
    expect(await retellConfigForAccount(t.deps, a.account.id)).toEqual({ apiKey: KEY });
  });

  it("is none for an account on another provider, whose key is that provider's", async () => {
    const other = await t.seedAccount();
    const vapi = { apiKey: 'vapi_key_not_retells', phoneNumberIds: { '*': 'pn_1' }, webhookAuth: 'secret', webhookSecret: 'shh' };
    await setAccountProvider(t.deps, other.account.id, 'vapi', vapi);
    expect(await retellConfigForAccount(t.deps, other.account.id)).toBeNull();
  });
});

describe('dial pacing config', () => {
  const SET_RATE = `mutation($id: ID!, $k: String, $r: Float) { adminSetProvider(accountId: $id, provider: "retell", retellApiKey: $k, dialRatePerNumber: $r) }`;
  it('stores a per-account rate from 0 (unpaced) to 1000 calls per second per from-number', async () => {
    const bad = await t.gql(SET_RATE, { id: a.account.id, k: KEY, r: -1 }, ADMIN_TOKEN);
    expect(JSON.stringify(bad.body.errors)).toContain('dialRatePerNumber');
    expect((await t.gql(SET_RATE, { id: a.account.id, k: KEY, r: 2.5 }, ADMIN_TOKEN)).body).toEqual({ data: { adminSetProvider: 'retell' } });
    expect(await retellConfigForAccount(t.deps, a.account.id)).toEqual({ apiKey: KEY, dialRatePerNumber: 2.5 });
    expect((await t.gql(SET_RATE, { id: a.account.id, k: KEY }, ADMIN_TOKEN)).body).toEqual({ data: { adminSetProvider: 'retell' } });
    expect(await retellConfigForAccount(t.deps, a.account.id)).toEqual({ apiKey: KEY });
  });
});

describe('POST /providers/retell/webhook', () => {
  const post = (raw: string, signature?: string) =>
    t.request('POST', '/providers/retell/webhook', { rawBody: raw, headers: signature ? { 'x-retell-signature': signature } : {} });
  const event = (e: string, retellId = 'rc_w1') =>
    JSON.stringify({ event: e, call: { call_id: retellId, call_status: 'ended', metadata: { account_id: a.account.id, call_id: 'call_ours_1' } } });

  it('stores a signed event once, however often it is delivered', async () => {
    const raw = event('call_ended');
    const sig = await sign(raw, KEY);
    expect((await post(raw, sig)).status).toBe(204);
    expect((await post(raw, sig)).status).toBe(204);
    expect((await post(raw, await sign(raw, KEY))).status).toBe(204);
    const rows = await t.deps.db.prisma.$queryRaw<{ id: string; call_id: string }[]>`SELECT id, call_id FROM provider_events`;
    expect(rows).toEqual([{ id: 'retell:rc_w1:call_ended', call_id: 'call_ours_1' }]);
    const taken = await takeRetellEvents(t.deps, ['call_ours_1']);
    expect(taken.map((e) => e.event)).toEqual(['call_ended']);
    expect(await takeRetellEvents(t.deps, ['call_ours_1'])).toEqual([]);
  });

  it('rejects forged, stale, tampered and unsigned deliveries with 401 and stores nothing', async () => {
    const raw = event('call_started', 'rc_w2');
    const good = await sign(raw, KEY);
    expect((await post(raw, await sign(raw, 'not-the-key'))).status).toBe(401);
    expect((await post(raw.replace('rc_w2', 'rc_w3'), good)).status).toBe(401);
    expect((await post(raw)).status).toBe(401);
    const ts = Date.now() - 6 * 60_000;
    const { symmetric } = await import('../../node_modules/retell-sdk/lib/webhook_auth.js' as string);
    expect((await post(raw, await symmetric.sign(raw, KEY, ts))).status).toBe(401);
    const rows = await t.deps.db.prisma.$queryRaw<
      { id: string }[]
    >`SELECT id FROM provider_events WHERE id LIKE 'retell:rc_w2%' OR id LIKE 'retell:rc_w3%'`;
    expect(rows).toEqual([]);
    expect((await post(raw, good)).status).toBe(204);
  });

  it('refuses a body over 5 MB while it streams in, whatever Content-Length says', async () => {
    const big = JSON.stringify({ event: 'call_ended', call: { call_id: 'rc_big', transcript: 'x'.repeat(6 * 1024 * 1024) } });
    expect((await post(big, 'v=1,d=00')).status).toBe(413);
    // Streamed without a length: the cap still holds.
    const chunk = new TextEncoder().encode('x'.repeat(1024 * 1024));
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent++ < 8) c.enqueue(chunk);
        else c.close();
      },
    });
    const res = await t.app.fetch(
      new Request('http://test.local/providers/retell/webhook', {
        method: 'POST',
        headers: { 'x-retell-signature': 'v=1,d=00' },
        body,
        duplex: 'half',
      } as RequestInit),
    );
    expect(res.status).toBe(413);
    expect(sent).toBeLessThan(8);
  });

  it('acknowledges events it does not use without storing them', async () => {
    const raw = JSON.stringify({ event: 'transcript_updated', call: { call_id: 'rc_w4', metadata: { account_id: a.account.id } } });
    expect((await post(raw, await sign(raw, KEY))).status).toBe(204);
    const rows = await t.deps.db.prisma.$queryRaw<{ id: string }[]>`SELECT id FROM provider_events WHERE id LIKE 'retell:rc_w4%'`;
    expect(rows).toEqual([]);
  });
});
