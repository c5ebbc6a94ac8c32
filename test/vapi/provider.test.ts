// The Vapi provider's pure parts (endedReason map, call mapping, server-URL authentication) and the
// provider itself against the fake Vapi, with an in-memory message feed: dial retries that never
// place a call twice, rejections, the send gate, end-call through live call control, lookups.
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { DialRejectedError, ProviderUnavailableError, type PlaceCallRequest, type ProviderCallEvent } from '../../src/dispatch/voice/provider.ts';
import { mapEndedReason, VAPI_ENDED_REASON_MAP } from '../../src/dispatch/voice/vapi/ended-reason-map.ts';
import {
  analysisFromCall,
  createCallBody,
  endResultFromCall,
  vapiMaxDurationSeconds,
  type VapiCallObject,
} from '../../src/dispatch/voice/vapi/call-mapping.ts';
import { verifyVapiRequest, vapiHmacSignature } from '../../src/dispatch/voice/vapi/signature.ts';
import { eventFromMessage, type VapiStoredEvent } from '../../src/dispatch/voice/vapi/stored-events.ts';
import { createVapiProvider, type VapiProviderOptions } from '../../src/dispatch/voice/vapi/provider.ts';
import { fakeVapiOutcome, startFakeVapi, type FakeVapi } from '../helpers/fake-vapi.ts';
import { VAPI_SPEC_PATH, vapiValidators } from '../helpers/vapi-spec.ts';
import { waitFor } from '../helpers/wait.ts';

const KEY = 'vapi_key_test_0123456789';
const SECRET = 'whsec_test_0123456789';

function req(n: number, to: string, over: Partial<PlaceCallRequest> = {}): PlaceCallRequest {
  return {
    callId: `call_${n}`,
    batchId: 'batch_1',
    accountId: 'acc_1',
    attempt: 1,
    from: '+14155550100',
    to,
    agent: { id: 'agt-1', name: 'Ava', voice: 'alloy', outcomeKeys: ['interested', 'callback_time'] },
    prompt: { id: 'pmt-1', name: 'v1', text: 'Hello' },
    contact: { externalId: `c${n}`, name: 'Jo', metadata: { plan: 'gold', visits: 3, nested: { a: 1 }, gone: null } },
    recordingEnabled: true,
    interruption: false,
    maxDurationSeconds: 120,
    ...over,
  };
}

describe('endedReason map', () => {
  const published: string[] = JSON.parse(fs.readFileSync(VAPI_SPEC_PATH, 'utf8')).components.schemas.Call.properties.endedReason.enum;
  it('names only published values, and fails the call by the system for every other published value', () => {
    expect(published.length).toBeGreaterThan(500);
    for (const k of Object.keys(VAPI_ENDED_REASON_MAP)) expect(published).toContain(k);
    for (const reason of published.filter((r) => !Object.hasOwn(VAPI_ENDED_REASON_MAP, r))) {
      // Everything unlisted is a failure of some part (error, fault, failed, …) or a call that never ran.
      expect(reason).toMatch(
        /error|fault|fail|invalid|not-found|not-valid|timed-out|shutdown|deleted|bypass|websocket|permission|assistant-request|limit|sip|twilio|vonage|telnyx|disconnect|hungup|connect/,
      );
      expect(mapEndedReason(reason, true)).toEqual({ status: 'failed', hangupBy: 'system', disconnectReason: reason });
    }
  });
  it('maps the documented cases', () => {
    expect(mapEndedReason('customer-ended-call', true)).toEqual({ status: 'completed', hangupBy: 'user', disconnectReason: 'customer-ended-call' });
    expect(mapEndedReason('assistant-said-end-call-phrase', true)).toMatchObject({ status: 'completed', hangupBy: 'agent' });
    expect(mapEndedReason('customer-did-not-answer', false)).toMatchObject({ status: 'no_answer', hangupBy: null });
    expect(mapEndedReason('customer-busy', false)).toMatchObject({ status: 'busy', hangupBy: null });
    expect(mapEndedReason('exceeded-max-duration', true)).toMatchObject({ status: 'completed', hangupBy: 'system' });
    expect(mapEndedReason('voicemail', false)).toEqual({
      status: 'no_answer',
      hangupBy: 'system',
      disconnectReason: 'voicemail',
      detail: { provider_reason: 'voicemail' },
    });
    expect(mapEndedReason('manually-canceled', true)).toMatchObject({ status: 'completed', hangupBy: 'system' });
    expect(mapEndedReason('manually-canceled', false)).toMatchObject({ status: 'no_answer', hangupBy: 'system' });
    expect(mapEndedReason('something-newer', true)).toEqual({ status: 'failed', hangupBy: 'system', disconnectReason: 'something-newer' });
    expect(mapEndedReason(null, false)).toEqual({ status: 'failed', hangupBy: 'system', disconnectReason: 'unknown' });
  });
});

describe('call mapping', () => {
  it('builds a POST /call body the published schema accepts, with our ids in the metadata and the duration clamped', () => {
    const body = createCallBody(req(1, '+14155550123'), { assistantId: 'asst_1', phoneNumberId: 'pn_1' });
    expect(body).toEqual({
      assistantId: 'asst_1',
      phoneNumberId: 'pn_1',
      customer: { number: '+14155550123' },
      assistantOverrides: {
        metadata: { call_id: 'call_1', batch_id: 'batch_1', account_id: 'acc_1', attempt: 1 },
        variableValues: { plan: 'gold', visits: '3', nested: '{"a":1}', contact_name: 'Jo' },
        maxDurationSeconds: 120,
      },
    });
    expect(vapiValidators().createCall(body)).toBe(true);
    expect(vapiMaxDurationSeconds(3)).toBe(10);
    expect(vapiMaxDurationSeconds(86_400)).toBe(43_200);
  });
  it("turns on Vapi's voicemail detection for a batch voicemail setting, with the message to leave", () => {
    const ref = { assistantId: 'asst_1', phoneNumberId: 'pn_1' };
    const leave = createCallBody(req(1, '+14155550123', { voicemail: { action: 'leave_message', message: 'Call us back' } }), ref);
    expect(leave.assistantOverrides).toMatchObject({ voicemailDetection: { provider: 'vapi' }, voicemailMessage: 'Call us back' });
    const hangup = createCallBody(req(1, '+14155550123', { voicemail: { action: 'hangup' } }), ref);
    expect(hangup.assistantOverrides).toMatchObject({ voicemailDetection: { provider: 'vapi' } });
    expect(hangup.assistantOverrides).not.toHaveProperty('voicemailMessage');
    expect(vapiValidators().createCall(leave)).toBe(true);
    expect(vapiValidators().createCall(hangup)).toBe(true);
    expect(createCallBody(req(1, '+14155550123'), ref).assistantOverrides).not.toHaveProperty('voicemailDetection');
  });

  it("takes times from Vapi's startedAt / endedAt, the transcript and recording of answered calls only", () => {
    const now = new Date('2026-01-01T00:10:00Z');
    const answered: VapiCallObject = {
      id: 'v1',
      status: 'ended',
      endedReason: 'customer-ended-call',
      startedAt: '2026-01-01T00:00:00Z',
      endedAt: '2026-01-01T00:00:42Z',
      artifact: { transcript: 'AI: hi', recordingUrl: 'https://storage.vapi.ai/v1.wav' },
    };
    expect(endResultFromCall(answered, { recordingEnabled: true, now })).toEqual({
      status: 'completed',
      hangupBy: 'user',
      disconnectReason: 'customer-ended-call',
      startedAt: new Date('2026-01-01T00:00:00Z'),
      answeredAt: new Date('2026-01-01T00:00:00Z'),
      endedAt: new Date('2026-01-01T00:00:42Z'),
      transcript: 'AI: hi',
      recording: { contentType: 'audio/wav', sourceUrl: 'https://storage.vapi.ai/v1.wav' },
    });
    expect(endResultFromCall(answered, { recordingEnabled: false, now }).recording).toBeNull();
    const unanswered = endResultFromCall(
      { id: 'v2', status: 'ended', endedReason: 'customer-busy', artifact: { transcript: '' } },
      { recordingEnabled: true, now },
    );
    expect(unanswered).toMatchObject({ status: 'busy', answeredAt: null, transcript: null, recording: null, startedAt: now, endedAt: now });
    // Failed mid-call: it had a conversation, kept.
    const midCall = endResultFromCall(
      { ...answered, endedReason: 'call.in-progress.error-vapifault-openai-llm-failed' },
      { recordingEnabled: true, now },
    );
    expect(midCall).toMatchObject({ status: 'failed', hangupBy: 'system', transcript: 'AI: hi' });
  });
  it("keeps only our agent's outcome keys from structuredData, as strings", () => {
    const a = analysisFromCall(
      { analysis: { summary: 'Spoke.', structuredData: { interested: true, callback_time: { day: 2 }, other: 1, gone: null } } },
      ['interested', 'callback_time', 'gone', 'absent'],
    );
    expect(a).toEqual({ summary: 'Spoke.', outcomes: { interested: 'true', callback_time: '{"day":2}' } });
    expect(analysisFromCall({ analysis: {} }, ['x'])).toBeNull();
    expect(analysisFromCall({ analysis: { summary: '  ', structuredData: {} } }, ['x'])).toEqual({ summary: null, outcomes: {} });
  });
  it('reads status-update and end-of-call-report messages, ignores the rest', () => {
    const call = {
      id: 'v1',
      assistantOverrides: { metadata: { call_id: 'c1', account_id: 'a', attempt: 2, extra: 'x' } },
      assistant: { huge: true },
    };
    expect(eventFromMessage({ type: 'status-update', status: 'in-progress', timestamp: 1_767_225_600_000, call })).toMatchObject({
      type: 'status-update',
      status: 'in-progress',
      at: 1_767_225_600_000,
      call: { id: 'v1', status: 'in-progress', assistantOverrides: { metadata: { call_id: 'c1', account_id: 'a', attempt: 2 } } },
    });
    const report = eventFromMessage({
      type: 'end-of-call-report',
      endedReason: 'customer-busy',
      artifact: { transcript: 't' },
      analysis: { summary: 's' },
      call,
    })!;
    expect(report.call).toMatchObject({ status: 'ended', endedReason: 'customer-busy', artifact: { transcript: 't' }, analysis: { summary: 's' } });
    // Only the fields we read are kept.
    expect(JSON.stringify(report)).not.toContain('huge');
    expect(eventFromMessage({ type: 'transcript', call })).toBeNull();
    expect(eventFromMessage({ type: 'status-update', status: 'ended' })).toBeNull();
  });
});

describe('server-URL authentication', () => {
  const body = '{"message":{"type":"status-update"}}';
  const now = Date.parse('2026-06-01T12:00:00Z');
  it('HMAC: x-signature over `{x-timestamp}.{body}`, fresh within 5 minutes, seconds or milliseconds', () => {
    const auth = { mode: 'hmac' as const, secret: SECRET };
    for (const ts of [String(now), String(now / 1000), String(now - 4 * 60_000)]) {
      expect(verifyVapiRequest(auth, body, new Headers({ 'x-timestamp': ts, 'x-signature': vapiHmacSignature(SECRET, ts, body) }), now)).toBe(true);
    }
    const ts = String(now);
    expect(verifyVapiRequest(auth, body + ' ', new Headers({ 'x-timestamp': ts, 'x-signature': vapiHmacSignature(SECRET, ts, body) }), now)).toBe(
      false,
    );
    expect(verifyVapiRequest(auth, body, new Headers({ 'x-timestamp': ts, 'x-signature': vapiHmacSignature('other', ts, body) }), now)).toBe(false);
    const old = String(now - 6 * 60_000);
    expect(verifyVapiRequest(auth, body, new Headers({ 'x-timestamp': old, 'x-signature': vapiHmacSignature(SECRET, old, body) }), now)).toBe(false);
    expect(verifyVapiRequest(auth, body, new Headers({ 'x-signature': vapiHmacSignature(SECRET, '', body) }), now)).toBe(false);
    // A shared secret header is not an HMAC signature.
    expect(verifyVapiRequest(auth, body, new Headers({ 'x-vapi-secret': SECRET }), now)).toBe(false);
  });
  it('secret: X-Vapi-Secret (legacy) or Authorization: Bearer', () => {
    const auth = { mode: 'secret' as const, secret: SECRET };
    expect(verifyVapiRequest(auth, body, new Headers({ 'x-vapi-secret': SECRET }), now)).toBe(true);
    expect(verifyVapiRequest(auth, body, new Headers({ authorization: `Bearer ${SECRET}` }), now)).toBe(true);
    expect(verifyVapiRequest(auth, body, new Headers({ 'x-vapi-secret': `${SECRET}x` }), now)).toBe(false);
    expect(verifyVapiRequest(auth, body, new Headers({ authorization: SECRET }), now)).toBe(false);
    expect(verifyVapiRequest(auth, body, new Headers(), now)).toBe(false);
    expect(verifyVapiRequest({ mode: 'secret', secret: '' }, body, new Headers({ 'x-vapi-secret': '' }), now)).toBe(false);
  });
});

describe('Vapi provider against the fake Vapi', () => {
  let fake: FakeVapi | undefined;
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    await fake?.close();
    fake = close = undefined;
  });

  /** The provider with messages kept in memory (what provider_events does for the app). */
  async function setup(over: Partial<VapiProviderOptions> = {}) {
    const inbox: VapiStoredEvent[] = [];
    fake = await startFakeVapi({
      apiKey: KEY,
      auth: { mode: 'secret', secret: SECRET },
      deliver: async (body) => {
        const e = eventFromMessage(JSON.parse(body).message);
        if (e) inbox.push(e);
        return 204;
      },
    });
    const events: Array<ProviderCallEvent & { providerCallId: string }> = [];
    const p = createVapiProvider({
      baseUrl: fake.url,
      account: async (id) => (id === 'acc_1' ? { apiKey: KEY, phoneNumberIds: { '+14155550100': 'pn_1' }, assistantId: 'asst_default' } : null),
      assistant: async () => null,
      feed: async (callIds) => inbox.splice(0).filter((e) => callIds.includes(String(e.call.assistantOverrides?.metadata?.call_id))),
      reports: async () => [],
      now: () => new Date(),
      pollMs: 5,
      graceMs: 60_000,
      maxAttempts: 4,
      backoffMs: 5,
      ...over,
    });
    p.onEvent((e) => events.push(e));
    close = () => p.close();
    return { p, events, fake: fake! };
  }

  it('places a call, reports answer and end from the messages, and analyses from the end-of-call-report', async () => {
    const { p, events, fake } = await setup();
    const { providerCallId } = await p.placeCall(req(1, '+14155550124'));
    expect(fake.creates).toHaveLength(1);
    expect(fake.creates[0]).toMatchObject({ assistantId: 'asst_default', phoneNumberId: 'pn_1' });
    await fake.finishAll();
    await waitFor(() => events.some((e) => e.type === 'ended'), { what: 'ended' });
    expect(events.map((e) => e.type)).toEqual(['answered', 'ended']);
    const ended = events[1] as Extract<ProviderCallEvent, { type: 'ended' }> & { providerCallId: string };
    const o = fakeVapiOutcome('+14155550124');
    expect(ended.result).toMatchObject({
      status: 'completed',
      hangupBy: o.hangupBy,
      transcript: o.transcript,
      recording: { contentType: 'audio/wav' },
    });
    expect(ended.providerCallId).toBe(providerCallId);
    const a = await p.analyse!({ accountId: 'acc_1', providerCallId, outcomeKeys: ['interested', 'callback_time'], wantRecording: false });
    expect(a).toEqual({ summary: o.summary, outcomes: { interested: 'true', callback_time: 'day-4' } });
    expect(fake.invalid).toEqual([]);
  });

  it('a create whose answer was lost (5xx after creating, dropped connection) is found and adopted, never placed twice', async () => {
    const { p, fake } = await setup();
    fake.failNext(1, 503, true);
    const first = await p.placeCall(req(1, '+14155550124'));
    fake.failNext(1, 'reset', true);
    const second = await p.placeCall(req(2, '+14155550125'));
    expect(fake.creates).toHaveLength(2);
    expect([first.providerCallId, second.providerCallId]).toEqual([...fake.calls.keys()]);
    expect(fake.lists).toBeGreaterThanOrEqual(2);
    // A failure before creating: retried, one call.
    fake.failNext(2, 500);
    await p.placeCall(req(3, '+14155550126'));
    expect(fake.creates).toHaveLength(3);
    expect(fake.invalid).toEqual([]);
  });

  it('retries spent: ProviderUnavailableError, created "no" after only 429s (the worker may fail over), "maybe" after a 5xx answer to a create', async () => {
    const { p, fake } = await setup();
    fake.failNext(4, 429);
    const limited = await p.placeCall(req(1, '+14155550124')).catch((e) => e);
    expect(limited).toBeInstanceOf(ProviderUnavailableError);
    expect(limited).toMatchObject({ created: 'no', scope: 'account', detail: { provider: 'vapi', provider_status: 429 } });
    fake.failNext(4, 503);
    await expect(p.placeCall(req(2, '+14155550125'))).rejects.toMatchObject({
      name: 'ProviderUnavailableError',
      created: 'maybe',
      scope: 'provider',
    });
    expect(fake.creates).toHaveLength(0);
  });

  it("waits out Vapi's concurrency refusal, and fails other 4xx at once with Vapi's message", async () => {
    const { p, fake } = await setup();
    let refusals = 2;
    fake.rejectCreates((body) => {
      if (body.customer.number.endsWith('7') && refusals-- > 0) return { status: 400, message: 'Over Concurrency Limit.' };
      if (body.customer.number.endsWith('8')) return { status: 400, message: 'customer.number must be a valid phone number' };
      if (body.customer.number.endsWith('9')) return { status: 401, message: 'Invalid Key.' };
      return null;
    });
    await p.placeCall(req(1, '+14155550127'));
    expect(fake.creates).toHaveLength(1);
    const bad = await p.placeCall(req(2, '+14155550128')).catch((e) => e);
    expect(bad).toBeInstanceOf(DialRejectedError);
    expect(bad).toMatchObject({
      disconnectReason: 'dial_rejected',
      detail: { provider: 'vapi', provider_status: 400, provider_message: 'customer.number must be a valid phone number' },
    });
    expect(await p.placeCall(req(3, '+14155550129')).catch((e) => e)).toMatchObject({ disconnectReason: 'provider_auth_failed' });
    // Not configured: no create at all.
    expect(await p.placeCall(req(4, '+14155550124', { accountId: 'acc_none' })).catch((e) => e)).toMatchObject({
      disconnectReason: 'provider_not_configured',
    });
    expect(await p.placeCall(req(5, '+14155550124', { from: '+14155550199' })).catch((e) => e)).toMatchObject({
      disconnectReason: 'provider_not_configured',
    });
    expect(fake.creates).toHaveLength(1);
  });

  it('sends a create only while the worker holds the call', async () => {
    const { p, fake } = await setup();
    // The gate is closed the first time it is asked (the lease no longer outlasts the request), open after.
    let asked = 0;
    let createsWhenClosed = -1;
    let confirms = 0;
    await p.placeCall(req(1, '+14155550124'), {
      owner: 'w1',
      confirmDial: async () => (++confirms, true),
      holdsNow: () => {
        if (++asked > 1) return true;
        createsWhenClosed = fake.creates.length;
        return false;
      },
    });
    expect(createsWhenClosed).toBe(0);
    // Confirmed again after the closed gate, then sent once.
    expect(confirms).toBe(2);
    expect(fake.creates).toHaveLength(1);
    // Lost: nothing sent.
    const lost = await p.placeCall(req(2, '+14155550125'), { owner: 'w1', confirmDial: async () => false, holdsNow: () => true }).catch((e) => e);
    expect(lost.name).toBe('DialForfeitedError');
    expect(fake.creates).toHaveLength(1);
  });

  it('hangs up through live call control, and settles the call from GET /call/{id}', async () => {
    const { p, events, fake } = await setup();
    const { providerCallId } = await p.placeCall(req(1, '+14155550124'));
    await fake.startAll();
    await waitFor(() => events.some((e) => e.type === 'answered'), { what: 'answered' });
    await p.hangup(providerCallId, 'max_duration');
    expect(fake.ended).toEqual([providerCallId]);
    // Vapi ends it (its messages lost): reconciled, because a hang-up was asked.
    await fake.finishAll({ dropAll: () => true });
    await waitFor(() => events.some((e) => e.type === 'ended'), { what: 'ended' });
    expect(fake.gets).toBeGreaterThanOrEqual(1);
    expect(fake.invalid).toEqual([]);
  });

  it('an ended status without its end-of-call-report is settled from GET /call/{id} after the report grace', async () => {
    const { p, events, fake } = await setup({ reportGraceMs: 0 });
    await p.placeCall(req(1, '+14155550120'));
    await fake.finishAll({ dropReport: () => true });
    await waitFor(() => events.some((e) => e.type === 'ended'), { what: 'ended' });
    expect((events.at(-1) as Extract<ProviderCallEvent, { type: 'ended' }>).result).toMatchObject({
      status: 'no_answer',
      disconnectReason: 'customer-did-not-answer',
    });
  });

  it("findCall with the dial's number and start searches that number's calls since then, as the create's own lookup does", async () => {
    const { p, fake } = await setup();
    const meta = { call_id: 'call_7', batch_id: 'b', account_id: 'acc_1', attempt: 1 };
    const target = fake.seedCall({
      assistantId: 'asst_default',
      phoneNumberId: 'pn_1',
      customer: { number: '+14155550124' },
      assistantOverrides: { metadata: meta },
    });
    const t0 = Date.now();
    target.createdAt = new Date(t0 - 60_000).toISOString();
    // A full page of the account's other number, all newer: an unnarrowed search needs a second page.
    for (let i = 0; i < 1000; i++) {
      const other = fake.seedCall({ assistantId: 'asst_default', phoneNumberId: 'pn_2', customer: { number: '+14155550125' } });
      other.createdAt = new Date(t0 - i).toISOString();
    }
    const ref = { callId: 'call_7', accountId: 'acc_1', attempt: 1, recordingEnabled: false };
    const before = fake.lists;
    expect(await p.findCall!({ ...ref, from: '+14155550100', since: new Date(t0 - 120_000) })).toBe(target.id);
    expect(fake.lists - before).toBe(1);
  });

  it('looks calls up (in flight, ended, unknown) and finds a dial by our ids and attempt', async () => {
    const { p, fake } = await setup();
    const seeded = fake.seedCall({
      assistantId: 'asst_default',
      phoneNumberId: 'pn_1',
      customer: { number: '+14155550124' },
      assistantOverrides: { metadata: { call_id: 'call_9', batch_id: 'b', account_id: 'acc_1', attempt: 2 } },
    });
    const ref = { callId: 'call_9', accountId: 'acc_1', attempt: 2, recordingEnabled: true };
    expect(await p.findCall!(ref)).toBe(seeded.id);
    expect(await p.findCall!({ ...ref, attempt: 1 })).toBeNull();
    expect(await p.lookup!(seeded.id, ref)).toEqual({ state: 'in_flight', answeredAt: null });
    await fake.startAll();
    expect((await p.lookup!(seeded.id, ref)).state).toBe('in_flight');
    await fake.finishAll();
    expect(await p.lookup!(seeded.id, ref)).toMatchObject({ state: 'ended', result: { status: 'completed' } });
    expect(await p.lookup!('00000000-0000-0000-0000-000000000000', ref)).toEqual({ state: 'unknown' });
    expect(fake.invalid).toEqual([]);
  });
});
