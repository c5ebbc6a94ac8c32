import { buildApp, type App } from '../../src/app.ts';
import type { VoiceProviderModule } from '../../src/dispatch/voice/provider-module.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { createMetrics } from '../../src/metrics.ts';
import type { AppDeps } from '../../src/deps.ts';
import type { ApiDeps } from '../../src/http/app-services.ts';
import { createLogger } from '../../src/logger.ts';
import { createAccount, type AccountInput } from '../../src/services/accounts/accounts.ts';
import { addDidNumber, createAgent, createPromptVersion } from '../../src/services/accounts/catalog.ts';
import type { Account, Agent, DidNumber, PromptVersion } from '../../src/generated/prisma/client.ts';
import { createTestDatabase, type TestDatabase } from './database.ts';
import { checkedResponse } from './rest-contract.ts';
import { TestClock } from './clock.ts';

export { TestClock };

export const ADMIN_TOKEN = 'test-admin-token-0123456789';

export interface TestResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export interface SeededAccount {
  account: Account;
  apiKey: string;
  agent: Agent;
  version: PromptVersion;
  did: DidNumber;
}

export interface TestApp {
  app: App;
  /** The app's dependencies, with its shared objects (rate limiters, event hub, …). */
  deps: ApiDeps;
  testDb: TestDatabase;
  clock: TestClock;
  request<T = any>(
    method: string,
    path: string,
    opts?: { key?: string | null; body?: unknown; rawBody?: string; headers?: Record<string, string> },
  ): Promise<TestResponse<T>>;
  // `any` body: tests assert on data and errors freely.
  gql(query: string, variables?: Record<string, unknown>, key?: string | null): Promise<TestResponse<any>>;
  seedAccount(input?: Partial<AccountInput> & { agentName?: string; outcomeKeys?: string[] }): Promise<SeededAccount>;
  close(): Promise<void>;
}

export async function createTestApp(
  opts: { config?: Record<string, string>; postgres?: boolean; voiceProviders?: readonly VoiceProviderModule[] } = {},
): Promise<TestApp> {
  const testDb = await createTestDatabase({ postgres: opts.postgres });
  const config: Config = loadConfig({
    LOG_LEVEL: 'silent',
    ADMIN_TOKEN,
    APP_SECRET: 'test-app-secret-0123456789abcdef0123456789',
    PORT: '0',
    SIM_CALL_MS: '0',
    RUN_WORKER: 'false',
    // The service's protective default (us_tcpa: 08:00-21:00 at the called party) would hold the
    // US numbers of tests about other things at whatever hour their clock reads; the default's own
    // tests (test/campaigns/compliance-profiles.test.ts) set it.
    DEFAULT_COMPLIANCE_PROFILES: 'none',
    ...opts.config,
  });
  const clock = new TestClock();
  const deps: AppDeps = {
    config,
    db: testDb.db,
    logger: createLogger(config.LOG_LEVEL),
    clock,
    appSecret: config.APP_SECRET!,
    metrics: createMetrics(testDb.db),
  };
  const app = buildApp(deps, { voiceProviders: opts.voiceProviders });
  // Every REST response a test gets from this app is checked against the OpenAPI document.
  const rawFetch = app.fetch;
  app.fetch = async (request, context) => checkedResponse(request.method, request.url, await rawFetch(request, context));
  let seq = 0;

  const request: TestApp['request'] = async (method, path, o = {}) => {
    const headers: Record<string, string> = { ...(o.headers ?? {}) };
    if (o.key !== null && o.key !== undefined) headers.authorization = `Bearer ${o.key}`;
    let body: string | undefined;
    if (o.rawBody !== undefined) body = o.rawBody;
    else if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await app.fetch(new Request(`http://test.local${path}`, { method, headers, body }));
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // non-JSON bodies stay text
    }
    return { status: res.status, headers: res.headers, body: parsed as any };
  };

  return {
    app,
    deps: app.deps,
    testDb,
    clock,
    request,
    gql: (query, variables, key) => request('POST', '/graphql', { key: key ?? null, body: { query, variables } }),
    async seedAccount(input = {}) {
      seq += 1;
      const { agentName, outcomeKeys, ...accountInput } = input;
      const { account, apiKey } = await createAccount(deps.db, {
        name: `Account ${seq}`,
        email: `owner${seq}@example.com`,
        voices: ['alloy', 'verse'],
        ...accountInput,
      });
      const agent = await createAgent(deps.db, account, {
        name: agentName ?? 'Sales Agent',
        voice: 'alloy',
        outcomeKeys: outcomeKeys ?? ['interested', 'callback_requested'],
      });
      const version = await createPromptVersion(deps.db, account, {
        agentId: agent.id,
        name: 'v1',
        prompt: 'You are a helpful sales assistant. Ask whether the contact wants a demo.',
      });
      const did = await addDidNumber(deps.db, account, '+14155550100');
      return { account, apiKey, agent, version, did };
    },
    async close() {
      await app.stop();
      await testDb.drop();
    },
  };
}
