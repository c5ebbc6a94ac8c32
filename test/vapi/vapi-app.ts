// A test app whose account places its calls through the Vapi provider against the fake Vapi, which
// delivers its authenticated server messages to handleVapiServerMessage - what the
// `/providers/vapi/webhook` route runs for each message (webhook.test.ts goes through the route).
import { expect } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { fakeVapiOutcome, startFakeVapi, type FakeVapi, type WebhookAuth } from '../helpers/fake-vapi.ts';
import { setAccountProvider } from '../../src/services/accounts/provider-config.ts';
import { vapiAccountConfig } from '../../src/dispatch/voice/vapi/account-config.ts';
import { handleVapiServerMessage } from '../../src/dispatch/voice/vapi/webhook.ts';
import { vapiAccounts } from '../../src/dispatch/voice/vapi/from-config.ts';

export const VAPI_KEY = 'vapi_private_key_0123456789abcdef';
export const VAPI_ASSISTANT = 'asst_vapi_1';
export const VAPI_NUMBER_ID = 'pn_vapi_1';
export const OUTCOME_KEYS = ['interested', 'callback_time'];

export interface VapiApp {
  t: TestApp;
  fake: FakeVapi;
  a: SeededAccount;
  close(): Promise<void>;
}

export async function vapiApp(
  opts: { config?: Record<string, string>; postgres?: boolean; dialRate?: number; auth?: WebhookAuth } = {},
): Promise<VapiApp> {
  const auth = opts.auth ?? { mode: 'hmac', secret: 'whsec_vapi_0123456789' };
  // eslint-disable-next-line prefer-const -- the fake's callback closes over them before they are assigned
  let t: TestApp | undefined, accounts: ReturnType<typeof vapiAccounts> | undefined;
  const fake = await startFakeVapi({
    apiKey: VAPI_KEY,
    auth,
    deliver: async (body, headers) => (await handleVapiServerMessage(t!.deps, accounts!, body, JSON.parse(body), new Headers(headers))).status,
  });
  t = await createTestApp({
    postgres: opts.postgres,
    config: {
      VAPI_BASE_URL: fake.url,
      VAPI_POLL_MS: '10',
      VAPI_DIAL_RATE_PER_NUMBER: '0',
      VAPI_RECONCILE_GRACE_MS: '0',
      VAPI_ANALYSIS_GRACE_MS: '60000',
      ...opts.config,
    },
  });
  accounts = vapiAccounts(t.deps);
  const a = await t.seedAccount({ outcomeKeys: OUTCOME_KEYS, limits: { maxConcurrentCalls: 100 } });
  const config = vapiAccountConfig({
    apiKey: VAPI_KEY,
    dialRatePerNumber: opts.dialRate ?? null,
    settings: { phoneNumbers: `${a.did.number}=${VAPI_NUMBER_ID}`, webhookAuth: auth.mode, webhookSecret: auth.secret },
  });
  await setAccountProvider(t.deps, a.account.id, 'vapi', config);
  await t.deps.db.prisma.$executeRaw`UPDATE agents SET provider_agent_id = ${VAPI_ASSISTANT} WHERE id = ${a.agent.id}`;
  // Short max duration: a call whose end messages were lost is reconciled after a few clock jumps.
  await t.deps.db.prisma.$executeRaw`UPDATE accounts SET max_call_duration_seconds = 30 WHERE id = ${a.account.id}`;
  const app = t;
  return {
    t: app,
    fake,
    a,
    async close() {
      await fake.close();
      await app.close();
    },
  };
}

export function expectNoInvalidBodies(fake: FakeVapi) {
  expect(fake.invalid).toEqual([]);
}

/** What our record of a call to `phone` must say, from what the fake Vapi made of it. */
export function expectedRecord(phone: string, opts: { analysed: boolean }) {
  const o = fakeVapiOutcome(phone);
  const d = Number(phone.at(-1));
  return {
    status: o.status,
    hangupBy: o.hangupBy,
    disconnectReason: o.endedReason === 'voicemail' ? 'voicemail' : o.endedReason,
    durationSeconds: o.seconds ?? 0,
    answerDurationSeconds: o.answered ? o.seconds : null,
    llmTranscript: o.transcript,
    transcriptStatus: o.answered ? (opts.analysed ? 'ready' : 'failed') : null,
    summary: o.answered && opts.analysed ? o.summary : null,
    // Vapi's structuredData, only our agent's keys, values as strings.
    outcomes: o.answered && opts.analysed ? { interested: String(d % 2 === 0), callback_time: `day-${d}` } : null,
    recordingAvailable: o.answered,
  };
}

export { batchSettled, pickRecord, sleep, until } from '../retell/retell-app.ts';
