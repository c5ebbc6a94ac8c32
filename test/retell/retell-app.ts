// A test app whose account places its calls through the Retell provider against the fake Retell,
// which delivers its signed webhooks to the app's /providers/retell/webhook endpoint.
import { expect } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { fakeOutcome, startFakeRetell, type FakeRetell } from '../helpers/fake-retell.ts';
import { setAccountProvider } from '../../src/services/accounts/provider-config.ts';
import { WAIT_MS, waitFor } from '../helpers/wait.ts';

export const RETELL_KEY = 'key_retell_e2e_0123456789abcdef';
export const OUTCOME_KEYS = ['interested', 'callback_time'];

export interface RetellApp {
  t: TestApp;
  fake: FakeRetell;
  a: SeededAccount;
  close(): Promise<void>;
}

export async function retellApp(opts: { config?: Record<string, string>; postgres?: boolean; dialRate?: number } = {}): Promise<RetellApp> {
  // eslint-disable-next-line prefer-const -- the fake's callback closes over it before it is assigned
  let t: TestApp | undefined;
  const fake = await startFakeRetell({
    apiKey: RETELL_KEY,
    deliver: async (body, signature) =>
      (await t!.request('POST', '/providers/retell/webhook', { rawBody: body, headers: { 'x-retell-signature': signature } })).status,
  });
  t = await createTestApp({
    postgres: opts.postgres,
    config: {
      RETELL_BASE_URL: fake.url,
      RETELL_POLL_MS: '10',
      RETELL_DIAL_RATE_PER_NUMBER: '0',
      RETELL_RECONCILE_GRACE_MS: '0',
      RETELL_ANALYSIS_GRACE_MS: '60000',
      ...opts.config,
    },
  });
  const a = await t.seedAccount({ outcomeKeys: OUTCOME_KEYS, limits: { maxConcurrentCalls: 100 } });
  await setAccountProvider(t.deps, a.account.id, 'retell', {
    apiKey: RETELL_KEY,
    ...(opts.dialRate !== undefined ? { dialRatePerNumber: opts.dialRate } : {}),
  });
  await t.deps.db.prisma.$executeRaw`UPDATE agents SET provider_agent_id = 'agent_retell_1' WHERE id = ${a.agent.id}`;
  await t.deps.db.prisma.$executeRaw`UPDATE prompt_versions SET provider_agent_version = 7 WHERE id = ${a.version.id}`;
  // Short max duration: a call whose final events were lost is reconciled after a few clock jumps.
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

/** Polls until `cond` holds (or fails the test after `ms`, generous by default: see helpers/wait.ts). */
export function until(cond: () => Promise<boolean> | boolean, ms = WAIT_MS, what = 'condition'): Promise<void> {
  return waitFor(cond, { timeoutMs: ms, what });
}

/** Paces a polling loop or samples over a window; never a way to wait for something to happen. */
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** No call of the batch is in flight or waiting for its analysis, and the batch is closed. */
export async function batchSettled(t: TestApp, batchId: string): Promise<boolean> {
  const b = await t.deps.db.prisma.batch.findUniqueOrThrow({ where: { id: batchId } });
  const open = await t.deps.db.prisma.call.count({ where: { batchId, transcriptStatus: { in: ['pending', 'processing'] } } });
  return b.status === 'completed' && open === 0;
}

export function expectNoInvalidBodies(fake: FakeRetell) {
  expect(fake.invalid).toEqual([]);
}

/** What our record of a call to `phone` must say, from what the fake Retell made of it. */
export function expectedRecord(phone: string, opts: { analysed: boolean }) {
  const o = fakeOutcome(phone);
  const d = Number(phone.at(-1));
  return {
    status: o.status,
    hangupBy: o.hangupBy,
    disconnectReason: o.disconnection,
    durationSeconds: o.seconds ?? 0,
    answerDurationSeconds: o.answered ? o.seconds : null,
    llmTranscript: o.transcript,
    transcriptStatus: o.answered ? (opts.analysed ? 'ready' : 'failed') : null,
    summary: o.answered && opts.analysed ? o.summary : null,
    // Retell's custom_analysis_data, only our agent's keys, values as strings.
    outcomes: o.answered && opts.analysed ? { interested: String(d % 2 === 0), callback_time: `day-${d}` } : null,
    recordingAvailable: o.answered,
  };
}

export function pickRecord(c: Record<string, any>) {
  return {
    status: c.status,
    hangupBy: c.hangupBy,
    disconnectReason: c.disconnectReason,
    durationSeconds: c.durationSeconds,
    answerDurationSeconds: c.answerDurationSeconds,
    llmTranscript: c.llmTranscript,
    transcriptStatus: c.transcriptStatus,
    summary: c.summary,
    outcomes: c.outcomes,
    recordingAvailable: c.recordingAvailable,
  };
}
