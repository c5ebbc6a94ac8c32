import { afterEach, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import YAML from 'yaml';
import { RETELL_DISCONNECTION_MAP, mapDisconnection } from '../../src/dispatch/voice/retell/disconnection-map.ts';
import {
  analysisFromCall,
  createPhoneCallBody,
  endResultFromCall,
  retellMaxCallMs,
  type RetellCallObject,
} from '../../src/dispatch/voice/retell/call-mapping.ts';
import { createRetellProvider, type RetellProviderOptions } from '../../src/dispatch/voice/retell/provider.ts';
import { DialRejectedError, ProviderUnavailableError, type PlaceCallRequest, type ProviderCallEvent } from '../../src/dispatch/voice/provider.ts';
import { fakeOutcome, RETELL_SPEC_PATH, startFakeRetell, validCallObject, validCreateRequest, type FakeRetell } from '../helpers/fake-retell.ts';
import { waitFor } from '../helpers/wait.ts';

const KEY = 'key_test_retell_0123456789';
/** Shapes a scenario (a slow feed, calls spaced out); never a way to wait for something to happen. */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function req(n: number, to: string, over: Partial<PlaceCallRequest> = {}): PlaceCallRequest {
  return {
    callId: `call_${n}`,
    batchId: 'batch_1',
    accountId: 'acc_1',
    attempt: 1,
    from: '+14155550100',
    to,
    agent: { id: 'agt-1', name: 'Ava', voice: 'retell-Cimo', outcomeKeys: ['interested', 'callback_time'] },
    prompt: { id: 'pmt-1', name: 'v1', text: 'Hello' },
    contact: { externalId: `c${n}`, name: 'Jo', metadata: { plan: 'gold', visits: 3 } },
    recordingEnabled: true,
    interruption: false,
    maxDurationSeconds: 120,
    ...over,
  };
}

const until = (cond: () => boolean, what?: string) => waitFor(cond, { what, intervalMs: 5 });

describe('disconnection map', () => {
  it('covers every DisconnectionReason in the OpenAPI file', () => {
    const doc = YAML.parse(fs.readFileSync(RETELL_SPEC_PATH, 'utf8'));
    const values: string[] = doc.components.schemas.DisconnectionReason.enum;
    expect(values.length).toBeGreaterThan(20);
    expect(Object.keys(RETELL_DISCONNECTION_MAP).sort()).toEqual([...values].sort());
  });
  it('maps the documented cases', () => {
    expect(mapDisconnection('dial_no_answer')).toMatchObject({ status: 'no_answer', hangupBy: null });
    expect(mapDisconnection('dial_busy')).toMatchObject({ status: 'busy' });
    expect(mapDisconnection('user_hangup')).toMatchObject({ status: 'completed', hangupBy: 'user' });
    expect(mapDisconnection('agent_hangup')).toMatchObject({ status: 'completed', hangupBy: 'agent' });
    expect(mapDisconnection('max_duration_reached')).toMatchObject({ status: 'completed', hangupBy: 'system' });
    expect(mapDisconnection('error_asr')).toMatchObject({ status: 'failed', hangupBy: 'system' });
    expect(mapDisconnection('something_new')).toMatchObject({ status: 'failed', hangupBy: 'system', disconnectReason: 'something_new' });
  });
  it("ends voicemail_reached as no_answer / voicemail, keeping Retell's value for the history", () => {
    expect(mapDisconnection('voicemail_reached')).toEqual({
      status: 'no_answer',
      hangupBy: 'system',
      disconnectReason: 'voicemail',
      detail: { provider_reason: 'voicemail_reached' },
    });
  });
  it("keeps Retell's value as disconnect_reason for every other value", () => {
    for (const [reason, { status, hangupBy }] of Object.entries(RETELL_DISCONNECTION_MAP)) {
      if (reason === 'voicemail_reached') continue;
      expect(mapDisconnection(reason)).toEqual({ status, hangupBy, disconnectReason: reason });
    }
    expect(mapDisconnection(null)).toEqual({ status: 'failed', hangupBy: 'system', disconnectReason: 'unknown' });
  });
});

describe('call mapping', () => {
  it('overrides the voice only with a Retell voice id, and keeps max_call_duration_ms within Retell limits', () => {
    const agent = { agentId: 'agent_1', agentVersion: 0 };
    const ours = createPhoneCallBody(req(1, '+14155550123', { agent: { ...req(1, '').agent, voice: 'alloy' } }), agent);
    expect(ours.agent_override.agent).toEqual({ max_call_duration_ms: 120_000 });
    expect(ours.override_agent_version).toBe(0);
    const retells = createPhoneCallBody(req(1, '+14155550123'), agent);
    expect(retells.agent_override.agent).toEqual({ voice_id: 'retell-Cimo', max_call_duration_ms: 120_000 });
    expect(createPhoneCallBody(req(1, '+1', { agent: { ...req(1, '').agent, voice: '11labs-Adrian' } }), agent).agent_override.agent.voice_id).toBe(
      '11labs-Adrian',
    );
    expect(retellMaxCallMs(30)).toBe(60_000);
    expect(retellMaxCallMs(3 * 3600)).toBe(7_200_000);
    expect(validCreateRequest(ours)).toBe(true);
    expect(validCreateRequest(retells)).toBe(true);
  });

  it("asks the agent for the batch's voicemail action in agent_override, as the published schema words it", () => {
    const agent = { agentId: 'agent_1', agentVersion: 0 };
    const leave = createPhoneCallBody(req(1, '+14155550123', { voicemail: { action: 'leave_message', message: 'Call us back' } }), agent);
    expect(leave.agent_override.agent).toEqual({
      voice_id: 'retell-Cimo',
      max_call_duration_ms: 120_000,
      voicemail_option: { action: { type: 'static_text', text: 'Call us back' } },
    });
    const hangup = createPhoneCallBody(req(1, '+14155550123', { voicemail: { action: 'hangup' } }), agent);
    expect(hangup.agent_override.agent).toMatchObject({ voicemail_option: { action: { type: 'hangup' } } });
    expect(validCreateRequest(leave)).toBe(true);
    expect(validCreateRequest(hangup)).toBe(true);
    expect(createPhoneCallBody(req(1, '+14155550123'), agent).agent_override.agent).not.toHaveProperty('voicemail_option');
  });

  it("takes results from Retell's call object: times, transcript, recording, analysis limited to our keys as strings", () => {
    const call: RetellCallObject & Record<string, unknown> = {
      call_type: 'phone_call',
      agent_id: 'agent_abc',
      agent_version: 3,
      from_number: '+14155550100',
      to_number: '+14155550123',
      direction: 'outbound',
      call_id: 'rc_9',
      call_status: 'ended',
      start_timestamp: 1_700_000_000_000,
      end_timestamp: 1_700_000_042_400,
      transcript: 'Agent: Hi\nUser: Hello',
      recording_url: 'https://retell.example/rec.wav',
      disconnection_reason: 'user_hangup',
      call_analysis: { call_summary: 'Talked.', custom_analysis_data: { interested: true, callback_time: 3, score: { a: 1 }, other: 'x' } },
    };
    expect(validCallObject(call)).toBe(true);
    const r = endResultFromCall(call, { recordingEnabled: true, now: new Date(0) });
    expect(r).toMatchObject({ status: 'completed', hangupBy: 'user', disconnectReason: 'user_hangup', transcript: 'Agent: Hi\nUser: Hello' });
    expect([r.startedAt.getTime(), r.answeredAt?.getTime(), r.endedAt.getTime()]).toEqual([1_700_000_000_000, 1_700_000_000_000, 1_700_000_042_400]);
    expect(r.recording).toEqual({ contentType: 'audio/wav', sourceUrl: 'https://retell.example/rec.wav' });
    expect(endResultFromCall(call, { recordingEnabled: false, now: new Date(0) }).recording).toBeNull();
    expect(analysisFromCall(call, ['interested', 'callback_time', 'score', 'missing'])).toEqual({
      summary: 'Talked.',
      outcomes: { interested: 'true', callback_time: '3', score: '{"a":1}' },
    });
    expect(analysisFromCall({ ...call, call_analysis: undefined }, ['interested'])).toBeNull();
    // Never connected: no transcript, no recording; no timestamps -> 0 s, ended now.
    const now = new Date('2030-01-01T00:00:00Z');
    const missed = endResultFromCall(
      { call_id: 'rc_8', call_status: 'not_connected', disconnection_reason: 'dial_failed', recording_url: 'https://x/y.wav' },
      { recordingEnabled: true, now },
    );
    expect(missed).toMatchObject({
      status: 'failed',
      hangupBy: 'system',
      answeredAt: null,
      transcript: null,
      recording: null,
      endedAt: now,
      startedAt: now,
    });
    expect(missed.detail).toBeUndefined();
    // Voicemail picked up: connected at Retell, but nobody was reached.
    const voicemail = { ...call, call_id: 'rc_7', disconnection_reason: 'voicemail_reached', call_analysis: undefined };
    expect(validCallObject(voicemail)).toBe(true);
    expect(endResultFromCall(voicemail, { recordingEnabled: true, now })).toMatchObject({
      status: 'no_answer',
      hangupBy: 'system',
      disconnectReason: 'voicemail',
      detail: { provider_reason: 'voicemail_reached' },
      answeredAt: null,
      transcript: null,
      recording: null,
    });
    // The agent hung up after leaving its voicemail message: still voicemail, Retell's reason kept.
    const leftMessage = { ...call, call_id: 'rc_6', disconnection_reason: 'agent_hangup', call_analysis: { in_voicemail: true } };
    expect(validCallObject(leftMessage)).toBe(true);
    expect(endResultFromCall(leftMessage, { recordingEnabled: true, now })).toMatchObject({
      status: 'no_answer',
      disconnectReason: 'voicemail',
      detail: { provider_reason: 'agent_hangup' },
      answeredAt: null,
    });
  });
});

describe('retell provider against the fake Retell server', () => {
  let fake: FakeRetell;
  afterEach(async () => fake?.close());

  function provider({
    events = [],
    stored = [],
    ...o
  }: { events?: { event: string; call: any }[]; stored?: RetellCallObject[] } & Partial<RetellProviderOptions> = {}) {
    return createRetellProvider({
      baseURL: fake.url,
      account: async () => ({ apiKey: KEY }),
      agent: async () => ({ agentId: 'agent_abc', agentVersion: 3 }),
      feed: async (ids) => events.splice(0).filter((e) => ids.includes(String(e.call.metadata?.call_id))),
      analyzed: async (ids) => stored.filter((c) => ids.includes(c.call_id)),
      now: () => new Date(),
      pollMs: 5,
      graceMs: 60_000,
      maxAttempts: 4,
      backoffMs: 1,
      ...o,
    });
  }

  it('maps the request, validates against the OpenAPI schema, and ends calls from stored events', async () => {
    fake = await startFakeRetell({ apiKey: KEY });
    const feed: { event: string; call: any }[] = [];
    const p = provider({ events: feed });
    const got: (ProviderCallEvent & { providerCallId: string })[] = [];
    p.onEvent((e) => got.push(e));
    const { providerCallId } = await p.placeCall(req(1, '+14155550123'));
    expect(fake.creates[0]).toMatchObject({
      from_number: '+14155550100',
      to_number: '+14155550123',
      override_agent_id: 'agent_abc',
      override_agent_version: 3,
      metadata: { call_id: 'call_1', batch_id: 'batch_1', account_id: 'acc_1', attempt: 1 },
      retell_llm_dynamic_variables: { plan: 'gold', visits: '3', contact_name: 'Jo' },
    });
    await fake.finishAll();
    const call = fake.calls.get(providerCallId)!;
    feed.push({ event: 'call_started', call }, { event: 'call_ended', call }, { event: 'call_ended', call });
    // One poll takes all three (the feed is emptied) and reports them before the next one.
    await until(() => feed.length === 0 && got.length >= 2, 'the events polled');
    expect(got.map((e) => e.type)).toEqual(['answered', 'ended']);
    const ended = got[1] as Extract<ProviderCallEvent, { type: 'ended' }>;
    const want = fakeOutcome('+14155550123');
    expect(ended.result).toMatchObject({ status: 'completed', hangupBy: 'user', disconnectReason: 'user_hangup', transcript: want.transcript });
    expect(ended.result.endedAt.getTime() - ended.result.answeredAt!.getTime()).toBe(want.seconds! * 1000);
    expect(fake.invalid).toEqual([]);
    await p.close();
  });

  it('never creates two Retell calls when the answer to a create is lost (5xx, reset, timeout) and retries 429', async () => {
    fake = await startFakeRetell({ apiKey: KEY });
    const p = provider();
    fake.failNext(1, 503, true);
    expect((await p.placeCall(req(2, '+14155550124'))).providerCallId).toBe('rc_1');
    expect(fake.creates).toHaveLength(1);
    fake.failNext(1, 'reset', true);
    expect((await p.placeCall(req(3, '+14155550125'))).providerCallId).toBe('rc_2');
    expect(fake.creates).toHaveLength(2);
    fake.failNext(2, 429);
    expect((await p.placeCall(req(4, '+14155550126'))).providerCallId).toBe('rc_3');
    expect(fake.creates).toHaveLength(3);
    // The answer never comes: the client times out, the retry finds the call Retell made. (A
    // timeout generous enough that the requests that are answered always are, on a busy machine.)
    const slow = provider({ timeoutMs: 2_000 });
    fake.holdCreatesFrom(4);
    expect((await slow.placeCall(req(5, '+14155550127'))).providerCallId).toBe('rc_4');
    expect(fake.creates).toHaveLength(4);
    fake.holdCreatesFrom(null);
    fake.releaseHeld();
    expect(fake.invalid).toEqual([]);
    await p.close();
    await slow.close();
  });

  it('retries spent: ProviderUnavailableError, created "no" after only 429s (the worker may fail over), "maybe" after a 5xx answer to a create', async () => {
    fake = await startFakeRetell({ apiKey: KEY });
    const p = provider();
    fake.failNext(4, 429);
    const limited = await p.placeCall(req(8, '+14155550128')).catch((e) => e);
    expect(limited).toBeInstanceOf(ProviderUnavailableError);
    expect(limited).toMatchObject({ created: 'no', scope: 'account', detail: { provider: 'retell', provider_status: 429 } });
    fake.failNext(4, 503);
    await expect(p.placeCall(req(9, '+14155550129'))).rejects.toMatchObject({
      name: 'ProviderUnavailableError',
      created: 'maybe',
      scope: 'provider',
    });
    expect(fake.creates).toHaveLength(0);
    await p.close();
  });

  it("fails a refused dial with Retell's message: 402 payment_required, 4xx dial_rejected", async () => {
    fake = await startFakeRetell({ apiKey: KEY });
    const p = provider();
    fake.rejectCreates((b) =>
      b.to_number.endsWith('6')
        ? { status: 402, message: 'Trial has ended, please add payment method.' }
        : { status: 400, message: 'Invalid to_number' },
    );
    const paid = await p.placeCall(req(6, '+14155550126')).catch((e) => e);
    expect(paid).toBeInstanceOf(DialRejectedError);
    expect(paid).toMatchObject({
      message: 'Trial has ended, please add payment method.',
      disconnectReason: 'payment_required',
      detail: { provider: 'retell', provider_status: 402, provider_message: 'Trial has ended, please add payment method.' },
    });
    await expect(p.placeCall(req(7, '+14155550127'))).rejects.toMatchObject({ disconnectReason: 'dial_rejected', message: 'Invalid to_number' });
    expect(fake.creates).toHaveLength(0);
    await p.close();
  });

  it('the alternate-number dial (same call id, attempt 2) is a new Retell call, not the ended primary', async () => {
    fake = await startFakeRetell({ apiKey: KEY });
    const p = provider();
    const primary = await p.placeCall(req(8, '+14155550120'));
    await fake.finishAll();
    const alternate = await p.placeCall(req(8, '+14155550128', { attempt: 2 }));
    expect(alternate.providerCallId).not.toBe(primary.providerCallId);
    expect(fake.creates.map((c) => [c.metadata.call_id, c.metadata.attempt, c.to_number])).toEqual([
      ['call_8', 1, '+14155550120'],
      ['call_8', 2, '+14155550128'],
    ]);
    // A repeated attempt-2 dial (worker died after it) adopts the attempt-2 call.
    expect((await p.placeCall(req(8, '+14155550128', { attempt: 2 }))).providerCallId).toBe(alternate.providerCallId);
    expect(await p.findCall!({ callId: 'call_8', accountId: 'acc_1', attempt: 1, recordingEnabled: true })).toBe(primary.providerCallId);
    expect(await p.findCall!({ callId: 'call_8', accountId: 'acc_1', attempt: 3, recordingEnabled: true })).toBeNull();
    await p.close();
  });

  it('settles a call whose call_ended was lost through get-call', async () => {
    fake = await startFakeRetell({ apiKey: KEY });
    const p = provider({ graceMs: 0 });
    const got: ProviderCallEvent[] = [];
    p.onEvent((e) => got.push(e));
    await p.placeCall({ ...req(5, '+14155550120'), maxDurationSeconds: 0 });
    await fake.finishAll({ dropEnded: () => true });
    await until(() => got.length > 0);
    expect(got[0]).toMatchObject({ type: 'ended', result: { status: 'no_answer', disconnectReason: 'dial_no_answer' } });
    await p.close();
  });

  it("supplies Retell's analysis: from call_analyzed whenever it is stored, else from get-call after the grace period, else none", async () => {
    fake = await startFakeRetell({ apiKey: KEY });
    const analyzed: RetellCallObject[] = [];
    let looked = 0;
    const p = provider({
      analysisGraceMs: 60_000,
      analyzed: async (ids) => {
        looked += 1;
        return analyzed.filter((c) => ids.includes(c.call_id));
      },
    });
    const a = await p.placeCall(req(11, '+14155550124'));
    await fake.finishAll();
    const pending = p.analyse!({
      accountId: 'acc_1',
      providerCallId: a.providerCallId,
      outcomeKeys: ['interested', 'callback_time'],
      wantRecording: false,
    });
    // It waits: the stored analyses were looked through (in vain) before the analysis arrives.
    await until(() => looked > 0, 'a look at the stored analyses');
    await fake.analyzeAll();
    analyzed.push(fake.calls.get(a.providerCallId) as RetellCallObject);
    expect(await pending).toEqual({ summary: 'Spoke with +14155550124.', outcomes: { interested: 'true', callback_time: 'day-4' } });

    // Grace period over: get-call has the analysis (its call_analyzed was lost), or has none.
    const q = provider({ analysisGraceMs: 0 });
    const b = await q.placeCall(req(12, '+14155550125'));
    const c = await q.placeCall(req(13, '+14155550127'));
    await fake.finishAll({ only: (x) => x.call_id === c.providerCallId, noAnalysis: () => true });
    await fake.finishAll();
    await fake.analyzeAll({ dropAnalyzed: () => true });
    const ask = (providerCallId: string) => q.analyse!({ accountId: 'acc_1', providerCallId, outcomeKeys: ['callback_time'], wantRecording: true });
    const withLate = await ask(b.providerCallId);
    expect(withLate).toMatchObject({ summary: 'Spoke with +14155550125.', outcomes: { callback_time: 'day-5' } });
    expect(withLate!.recording).toEqual({ contentType: 'audio/wav', sourceUrl: fake.calls.get(b.providerCallId)!.recording_url });
    expect(await ask(c.providerCallId)).toBeNull();
    expect(fake.invalid).toEqual([]);
    await p.close();
    await q.close();
  });

  it('adopts a call placed by another process: events of it arrive through onEvent', async () => {
    fake = await startFakeRetell({ apiKey: KEY });
    const placing = provider();
    const { providerCallId } = await placing.placeCall(req(14, '+14155550129'));
    await placing.close();
    await fake.startAll();
    const feed: { event: string; call: any }[] = [];
    const p = provider({ events: feed });
    expect(await p.lookup!(providerCallId, { callId: 'call_14', accountId: 'acc_1', attempt: 1, recordingEnabled: true })).toMatchObject({
      state: 'in_flight',
      answeredAt: expect.any(Date),
    });
    const got: ProviderCallEvent[] = [];
    p.onEvent((e) => got.push(e));
    await p.adopt!(providerCallId, req(14, '+14155550129'), { answered: true, dialledAt: new Date() });
    await fake.finishAll();
    feed.push({ event: 'call_ended', call: fake.calls.get(providerCallId) });
    await until(() => got.length > 0);
    expect(got.map((e) => e.type)).toEqual(['ended']);
    expect(await p.lookup!(providerCallId, { callId: 'call_14', accountId: 'acc_1', attempt: 1, recordingEnabled: false })).toMatchObject({
      state: 'ended',
      result: { status: 'completed', hangupBy: 'agent', recording: null },
    });
    await p.close();
  });
});

describe('retell provider: polling, retries and calls it does not watch', () => {
  let fake: FakeRetell;
  afterEach(async () => fake?.close());

  const base = (o: Partial<RetellProviderOptions>) =>
    createRetellProvider({
      baseURL: fake.url,
      account: async () => ({ apiKey: KEY }),
      agent: async () => ({ agentId: 'agent_abc', agentVersion: 3 }),
      feed: async () => [],
      analyzed: async () => [],
      now: () => new Date(),
      pollMs: 5,
      graceMs: 60_000,
      backoffMs: 1,
      ...o,
    });

  it('polls one at a time: calls placed, analyses asked and hangups during a slow poll never start a second one', async () => {
    fake = await startFakeRetell({ apiKey: KEY });
    let active = 0;
    let most = 0;
    let polls = 0;
    const slow = async <T>(v: T): Promise<T> => {
      active += 1;
      polls += 1;
      most = Math.max(most, active);
      await sleep(40); // a slow Retell (simulated latency; nothing waits for it)
      active -= 1;
      return v;
    };
    const p = base({ feed: () => slow([]), analyzed: () => slow([]), analysisGraceMs: 600_000 });
    const placed = [];
    for (let i = 0; i < 4; i++) {
      // From the second round on, all three happen while a (slow) poll is under way.
      if (i > 0) await until(() => active === 1, 'a poll under way');
      placed.push(await p.placeCall(req(30 + i, `+1415555013${i + 4}`)));
      void p.analyse!({ accountId: 'acc_1', providerCallId: `rc_other_${i}`, outcomeKeys: [], wantRecording: false }).catch(() => undefined);
      await p.hangup(placed[i].providerCallId, 'max_duration');
    }
    await until(() => polls >= 6);
    expect(most).toBe(1);
    await p.close();
  });

  it("a failing analysis get-call is asked again with exponential backoff, and not before Retell's Retry-After", async () => {
    fake = await startFakeRetell({ apiKey: KEY });
    const p = base({ analysisGraceMs: 0, backoffMs: 10 });
    const q = base({ analysisGraceMs: 0, backoffMs: 10 });
    const first = await p.placeCall(req(40, '+14155550144'));
    const second = await q.placeCall(req(41, '+14155550145'));
    await fake.finishAll();
    await fake.analyzeAll({ dropAnalyzed: () => true });
    const asks = new Map<string, number>();
    fake.lookupRule((x) => {
      if (x.kind !== 'get') return null;
      asks.set(x.retellCallId!, (asks.get(x.retellCallId!) ?? 0) + 1);
      return x.retellCallId === second.providerCallId ? { status: 429, headers: { 'retry-after': '1' } } : { status: 500 };
    });
    const ask = (provider: typeof p, providerCallId: string) =>
      provider.analyse!({ accountId: 'acc_1', providerCallId, outcomeKeys: ['callback_time'], wantRecording: false });
    const started = Date.now();
    const backedOff = ask(p, first.providerCallId);
    const limited = ask(q, second.providerCallId);
    const count = (id: string) => asks.get(id) ?? 0;
    await until(() => count(first.providerCallId) >= 5 && count(second.providerCallId) >= 1, 'five asks about the first call');
    const [n, m] = [count(first.providerCallId), count(second.providerCallId)];
    const elapsed = Date.now() - started;
    // Backoff 10, 20, 40, 80, ... ms: the n-th ask comes at least 10 * (2^(n-1) - 1) ms after the
    // first, however slow the machine (asked at every 5 ms poll, there would be one per poll).
    expect(n).toBeLessThanOrEqual(1 + Math.floor(Math.log2(elapsed / 10 + 1)));
    // Retell asked for a second: at most one ask per second, whatever the backoff would allow.
    expect(m).toBeLessThanOrEqual(1 + Math.floor(elapsed / 1000));
    fake.lookupRule(null);
    expect(await backedOff).toMatchObject({ outcomes: { callback_time: 'day-4' } });
    expect(await limited).toMatchObject({ outcomes: { callback_time: 'day-5' } });
    await p.close();
    await q.close();
  });

  it("stops a call it does not watch (another worker's) with its account's key", async () => {
    fake = await startFakeRetell({ apiKey: KEY });
    const placing = base({});
    const { providerCallId } = await placing.placeCall(req(50, '+14155550146'));
    await placing.close();
    const keys: string[] = [];
    const p = base({ account: async (id) => (keys.push(id), { apiKey: KEY }) });
    await p.hangup(providerCallId, 'shutdown', { accountId: 'acc_1' });
    expect(fake.stops).toEqual([providerCallId]);
    expect(keys).toEqual(['acc_1']);
    // Without the account, the one that placed the call is looked up.
    const q = base({ accountForCall: async () => 'acc_1' });
    await q.hangup(providerCallId, 'shutdown');
    expect(fake.stops).toEqual([providerCallId, providerCallId]);
    await p.close();
    await q.close();
  });

  it('answers analyse() from an analysis it already saw (lookup) without asking Retell again', async () => {
    fake = await startFakeRetell({ apiKey: KEY });
    const placing = base({});
    const { providerCallId } = await placing.placeCall(req(60, '+14155550147'));
    await placing.close();
    await fake.finishAll();
    await fake.analyzeAll({ dropAnalyzed: () => true });
    const p = base({ analysisGraceMs: 600_000 });
    expect(await p.lookup!(providerCallId, { callId: 'call_60', accountId: 'acc_1', attempt: 1, recordingEnabled: true })).toMatchObject({
      state: 'ended',
    });
    const asked = fake.getCalls;
    expect(await p.analyse!({ accountId: 'acc_1', providerCallId, outcomeKeys: ['callback_time'], wantRecording: true })).toEqual({
      summary: 'Spoke with +14155550147.',
      outcomes: { callback_time: 'day-7' },
      recording: { contentType: 'audio/wav', sourceUrl: fake.calls.get(providerCallId)!.recording_url },
    });
    expect(fake.getCalls).toBe(asked);
    await p.close();
  });
});

describe('the fake validates against the OpenAPI file', () => {
  it('rejects a create body Retell would reject', () => {
    expect(validCreateRequest({ from_number: '+14155550100', to_number: '+14155550101' })).toBe(true);
    expect(validCreateRequest({ to_number: '+14155550101' })).toBe(false);
    expect(validCreateRequest({ from_number: '+1', to_number: '+2', override_agent_version: 'seven' })).toBe(false);
  });
  it('rejects a call object whose call_analysis Retell would not send', () => {
    const call = {
      call_type: 'phone_call',
      agent_id: 'a',
      agent_version: 1,
      from_number: '+1',
      to_number: '+2',
      direction: 'outbound',
      call_id: 'rc_1',
      call_status: 'ended',
    };
    expect(validCallObject({ ...call, call_analysis: { call_summary: 'ok', custom_analysis_data: { a: 1 } } })).toBe(true);
    expect(validCallObject({ ...call, call_analysis: { call_summary: 7 } })).toBe(false);
    expect(validCallObject({ ...call, call_analysis: { user_sentiment: 'Delighted' } })).toBe(false);
  });
});
