import { afterEach, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import YAML from 'yaml';
import { RETELL_DISCONNECTION_MAP, mapDisconnection } from '../../src/dispatch/voice/retell/disconnection-map.ts';
import { createRetellProvider } from '../../src/dispatch/voice/retell/provider.ts';
import type { PlaceCallRequest, ProviderCallEvent } from '../../src/dispatch/voice/provider.ts';
import { startFakeRetell, type FakeRetell } from '../helpers/fake-retell.ts';

const KEY = 'key_test_retell_0123456789';

function req(n: number, to: string): PlaceCallRequest {
  return {
    callId: `call_${n}`,
    batchId: 'batch_1',
    accountId: 'acc_1',
    attempt: 1,
    from: '+14155550100',
    to,
    agent: { id: 'agt-1', name: 'Ava', voice: 'retell-Cimo', outcomeKeys: ['interested'] },
    prompt: { id: 'pmt-1', name: 'v1', text: 'Hello' },
    contact: { externalId: `c${n}`, name: 'Jo', metadata: { plan: 'gold', visits: 3 } },
    recordingEnabled: true,
    interruption: false,
    maxDurationSeconds: 60,
  };
}

describe('disconnection map', () => {
  it('covers every DisconnectionReason in the OpenAPI file', () => {
    const doc = YAML.parse(fs.readFileSync('/work/shared/providers/retell-openapi.yaml', 'utf8'));
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
});

describe('retell provider against the fake Retell server', () => {
  let fake: FakeRetell;
  afterEach(async () => fake?.close());

  function provider(events: { event: string; call: any }[] = [], graceMs = 60_000) {
    return createRetellProvider({
      baseURL: fake.url,
      account: async () => ({ apiKey: KEY }),
      agent: async () => ({ agentId: 'agent_abc', agentVersion: 3 }),
      feed: async (ids) => events.splice(0).filter((e) => ids.includes(String(e.call.metadata?.call_id))),
      now: () => new Date(),
      pollMs: 5,
      graceMs,
      maxAttempts: 4,
      backoffMs: 1,
    });
  }

  it('maps the request, validates against the OpenAPI schema, and ends calls from stored events', async () => {
    fake = await startFakeRetell({ apiKey: KEY });
    const feed: { event: string; call: any }[] = [];
    const p = provider(feed);
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
    await new Promise((r) => setTimeout(r, 50));
    expect(got.map((e) => e.type)).toEqual(['answered', 'ended']);
    const ended = got[1] as Extract<ProviderCallEvent, { type: 'ended' }>;
    expect(ended.result).toMatchObject({ status: 'completed', hangupBy: 'user', disconnectReason: 'user_hangup', transcript: 'Agent: Hello\nUser: Hi' });
    expect(fake.invalid).toEqual([]);
    await p.close();
  });

  it('never creates two Retell calls when the answer to a create is lost', async () => {
    fake = await startFakeRetell({ apiKey: KEY });
    const p = provider();
    fake.failNext(1, 503, true);
    const { providerCallId } = await p.placeCall(req(2, '+14155550124'));
    expect(fake.creates).toHaveLength(1);
    expect(providerCallId).toBe('rc_1');
    fake.failNext(2, 429);
    await p.placeCall(req(3, '+14155550125'));
    expect(fake.creates).toHaveLength(2);
    fake.failNext(1, 402);
    await expect(p.placeCall(req(4, '+14155550126'))).rejects.toThrow(/402/);
    expect(fake.invalid).toEqual([]);
    await p.close();
  });

  it('settles a call whose call_ended was lost through get-call', async () => {
    fake = await startFakeRetell({ apiKey: KEY });
    const p = provider([], 0);
    const got: ProviderCallEvent[] = [];
    p.onEvent((e) => got.push(e));
    await p.placeCall({ ...req(5, '+14155550120'), maxDurationSeconds: 0 });
    await fake.finishAll({ dropEnded: () => true });
    await new Promise((r) => setTimeout(r, 50));
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({ type: 'ended', result: { status: 'no_answer', disconnectReason: 'dial_no_answer' } });
    await p.close();
  });
});

describe('the fake validates against the OpenAPI file', () => {
  it('rejects a create body Retell would reject', async () => {
    const { validCreateRequest } = await import('../helpers/fake-retell.ts');
    expect(validCreateRequest({ from_number: '+14155550100', to_number: '+14155550101' })).toBe(true);
    expect(validCreateRequest({ to_number: '+14155550101' })).toBe(false);
    expect(validCreateRequest({ from_number: '+1', to_number: '+2', override_agent_version: 'seven' })).toBe(false);
  });
});
