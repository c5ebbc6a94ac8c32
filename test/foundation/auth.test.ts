import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { revokeApiKey, issueApiKey, hashApiKey } from '../../src/services/auth/api-keys.ts';
import { batchBody, CALL_BATCHES } from '../helpers/batch-requests.ts';

let t: TestApp;
let a: SeededAccount;
let b: SeededAccount;

beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount();
  b = await t.seedAccount({ agentName: 'Other Agent' });
});
afterAll(() => t.close());

const ME = '/api/v1/public/me';

describe('REST authentication', () => {
  it('missing header → 401 detail Invalid API key', async () => {
    const r = await t.request('GET', ME);
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ detail: 'Invalid API key' });
  });

  it('wrong scheme → 401', async () => {
    const r = await t.request('GET', ME, { headers: { authorization: `Basic ${a.apiKey}` } });
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ detail: 'Invalid API key' });
  });

  it('malformed and unknown keys → 401', async () => {
    for (const key of ['sk_short', 'not-a-key', 'sk_' + 'A'.repeat(43)]) {
      const r = await t.request('GET', ME, { key });
      expect(r.status, key).toBe(401);
      expect(r.body).toEqual({ detail: 'Invalid API key' });
    }
  });

  it('revoked key → 401 at once when revoked through this process, other keys of the account keep working', async () => {
    const extra = await issueApiKey(t.deps.db, a.account.id);
    expect((await t.request('GET', ME, { key: extra.apiKey })).status).toBe(200);
    const revoked = await t.gql('mutation($id: ID!) { adminRevokeApiKey(id: $id) }', { id: extra.id }, ADMIN_TOKEN);
    expect(revoked.body.data).toEqual({ adminRevokeApiKey: true });
    expect(await t.request('GET', ME, { key: extra.apiKey })).toMatchObject({ status: 401, body: { detail: 'Invalid API key' } });
    expect((await t.request('GET', ME, { key: a.apiKey })).status).toBe(200);
  });

  it('a key revoked by another process stops working once API_KEY_CACHE_MS has passed since it last authenticated here', async () => {
    t.clock.set(new Date());
    const extra = await issueApiKey(t.deps.db, a.account.id);
    expect((await t.request('GET', ME, { key: extra.apiKey })).status).toBe(200);
    // Written straight to the database, as another API process or the CLI against it would.
    await revokeApiKey(t.deps.db, extra.id);
    t.clock.advance(t.deps.config.API_KEY_CACHE_MS - 1);
    expect((await t.request('GET', ME, { key: extra.apiKey })).status).toBe(200);
    t.clock.advance(1);
    expect(await t.request('GET', ME, { key: extra.apiKey })).toMatchObject({ status: 401, body: { detail: 'Invalid API key' } });
  });

  it('account with API access disabled → 403 FORBIDDEN envelope', async () => {
    const c = await t.seedAccount({ apiAccessEnabled: false });
    const r = await t.request('GET', ME, { key: c.apiKey });
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ status_code: 403, error: { code: 'FORBIDDEN' }, data: null });
  });

  it('API access disabled → 403 FORBIDDEN envelope on create (POST, PUT) and list, nothing stored', async () => {
    const c = await t.seedAccount({ apiAccessEnabled: false });
    const forbidden = {
      status_code: 403,
      message: 'API access is not enabled for this account',
      error: { code: 'FORBIDDEN', details: [] },
      data: null,
    };
    const cases: [string, string, unknown][] = [
      ['POST', CALL_BATCHES, batchBody(c)],
      ['PUT', CALL_BATCHES, batchBody(c, { idempotency_key: 'disabled-1' })],
      // A body the validator would refuse: the 403 comes first, the body is never looked at.
      ['POST', CALL_BATCHES, { contacts: 'nope' }],
      ['GET', CALL_BATCHES, undefined],
      ['GET', `${CALL_BATCHES}?status=active&limit=5`, undefined],
    ];
    for (const [method, path, body] of cases) {
      const r = await t.request(method, path, { key: c.apiKey, body });
      expect({ method, path, status: r.status, body: r.body }).toEqual({ method, path, status: 403, body: forbidden });
    }
    expect(await t.deps.db.prisma.batch.count({ where: { accountId: c.account.id } })).toBe(0);
  });

  it('stores only a SHA-256 hash of the key', async () => {
    const rows = await t.deps.db.prisma.apiKey.findMany({ where: { accountId: a.account.id } });
    expect(rows.some((r) => r.keyHash === hashApiKey(a.apiKey))).toBe(true);
    const dump = JSON.stringify(rows);
    expect(dump).not.toContain(a.apiKey);
  });
});

describe('GraphQL authentication and scoping', () => {
  it('no key → UNAUTHENTICATED', async () => {
    const r = await t.gql('{ me { id } }');
    expect(r.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    expect(r.body.errors[0].message).toBe('Invalid API key');
  });

  it('disabled account → FORBIDDEN', async () => {
    const c = await t.seedAccount({ apiAccessEnabled: false });
    const r = await t.gql('{ me { id } }', {}, c.apiKey);
    expect(r.body.errors[0].extensions.code).toBe('FORBIDDEN');
  });

  it("another account's agent does not exist for a key", async () => {
    const own = await t.gql('query($id: ID!) { agent(id: $id) { id } }', { id: a.agent.id }, a.apiKey);
    expect(own.body.data.agent).toEqual({ id: a.agent.id });
    const foreign = await t.gql('query($id: ID!) { agent(id: $id) { id } }', { id: b.agent.id }, a.apiKey);
    expect(foreign.body.data.agent).toBeNull();
    const listed = await t.gql('{ agents { id } promptVersions { id } didNumbers { id } }', {}, a.apiKey);
    expect(listed.body.data.agents).toEqual([{ id: a.agent.id }]);
    expect(listed.body.data.promptVersions).toEqual([{ id: a.version.id }]);
    expect(listed.body.data.didNumbers).toEqual([{ id: a.did.id }]);
  });

  it('a prompt version cannot be attached to a foreign agent', async () => {
    const r = await t.gql(
      'mutation($input: CreatePromptVersionInput!) { createPromptVersion(input: $input) { id } }',
      { input: { agentId: b.agent.id, name: 'x', prompt: 'p' } },
      a.apiKey,
    );
    expect(r.body.errors[0].extensions.code).toBe('NOT_FOUND');
  });

  it('admin mutations need the admin token; an API key is not enough', async () => {
    const q = 'mutation { adminCreateAccount(input: { name: "X", email: "x@y.z" }) { apiKey } }';
    expect((await t.gql(q, {}, a.apiKey)).body.errors[0].extensions.code).toBe('FORBIDDEN');
    // Every operator field, declared once with its scope (@pothos/plugin-scope-auth), refuses a key.
    const others = [
      `mutation { adminCreateApiKey(accountId: "${a.account.id}") { apiKey } }`,
      'mutation { adminRevokeApiKey(id: "key_x") }',
      `mutation { adminSetProvider(accountId: "${a.account.id}", provider: "simulator") }`,
      `mutation { adminSetProviderRoute(accountId: "${a.account.id}", providers: [{ provider: "simulator" }]) }`,
      `mutation { adminUpdateAccount(id: "${a.account.id}", input: { name: "Y" }) { id } }`,
      '{ adminAccounts { id } }',
      `{ adminApiKeys(accountId: "${a.account.id}") { id } }`,
    ];
    for (const doc of others) {
      const error = (await t.gql(doc, {}, a.apiKey)).body.errors[0];
      expect([error.extensions.code, error.message]).toEqual(['FORBIDDEN', 'This operation requires the admin token']);
    }
    const ok = await t.gql(q, {}, ADMIN_TOKEN);
    expect(ok.body.data.adminCreateAccount.apiKey).toMatch(/^sk_[A-Za-z0-9_-]{43}$/);
  });

  it('unexpected errors are masked (no stack or internals)', async () => {
    const r = await t.gql('{ me { id } }', {}, ADMIN_TOKEN);
    // Admin token is not an account key: a clean auth error, nothing internal.
    expect(JSON.stringify(r.body)).not.toMatch(/at .*\.ts:\d+/);
  });
});
