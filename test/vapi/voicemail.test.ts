// Voicemail handling through Vapi (docs/providers.md "Voicemail"): the batch's setting turns on
// Vapi's voicemail detection for the call, with the message to leave, and a call Vapi ends with
// endedReason `voicemail` is recorded with voicemail_left as the setting asked.
import { afterEach, describe, expect, it } from 'vitest';
import { batchBody, CALL_BATCHES, validPhone } from '../helpers/batch-requests.ts';
import { testWorker } from '../helpers/dispatch.ts';
import { vapiValidators } from '../helpers/vapi-spec.ts';
import { handleVapiServerMessage } from '../../src/dispatch/voice/vapi/webhook.ts';
import { vapiAccounts } from '../../src/dispatch/voice/vapi/from-config.ts';
import { vapiHmacSignature } from '../../src/dispatch/voice/vapi/signature.ts';
import { batchSettled, expectNoInvalidBodies, until, vapiApp, type VapiApp } from './vapi-app.ts';

const SECRET = 'whsec_vapi_0123456789';

let r: VapiApp | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

describe('voicemail through Vapi (fake Vapi)', () => {
  it('asks for voicemail detection and the message, and records whether the message was left', async () => {
    r = await vapiApp({ auth: { mode: 'hmac', secret: SECRET } });
    const { t, fake, a } = r;
    const create = async (n: number, options: Record<string, unknown>) => {
      const body = batchBody(a, { contacts: [{ contact_id: `c${n}`, phone_number: validPhone(n * 10) }], ...options });
      const res = await t.request('POST', CALL_BATCHES, { key: a.apiKey, body });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.data.batch_id as string;
    };
    const leave = await create(1, { voicemail: 'leave_message', voicemail_message: 'Please call Acme back.' });
    const hangup = await create(2, { voicemail: 'hangup' });
    const w = testWorker(t.deps);
    w.start();
    try {
      await until(() => fake.creates.length === 2, undefined, 'both calls created at Vapi');
      const sent = (batchId: string) => fake.creates.find((c) => c.assistantOverrides.metadata.batch_id === batchId)!.assistantOverrides;
      expect(sent(leave)).toMatchObject({ voicemailDetection: { provider: 'vapi' }, voicemailMessage: 'Please call Acme back.' });
      expect(sent(hangup).voicemailDetection).toEqual({ provider: 'vapi' });
      expect(sent(hangup).voicemailMessage).toBeUndefined();

      // Vapi found voicemail on both and ended them so.
      const accounts = vapiAccounts(t.deps);
      const v = vapiValidators();
      const end = Date.now();
      for (const call of fake.calls.values()) {
        Object.assign(call, {
          status: 'ended',
          endedReason: 'voicemail',
          startedAt: new Date(end - 15_000).toISOString(),
          endedAt: new Date(end).toISOString(),
          updatedAt: new Date(end).toISOString(),
        });
        const messages = [
          { type: 'status-update', status: 'ended', endedReason: 'voicemail', timestamp: end, call: { ...call } },
          {
            type: 'end-of-call-report',
            timestamp: end,
            endedReason: 'voicemail',
            artifact: { messages: [] },
            analysis: {},
            startedAt: call.startedAt,
            endedAt: call.endedAt,
            call: { ...call },
          },
        ];
        expect(v.statusUpdate(messages[0]), JSON.stringify(v.statusUpdate.errors)).toBe(true);
        expect(v.endOfCallReport(messages[1]), JSON.stringify(v.endOfCallReport.errors)).toBe(true);
        for (const message of messages) {
          const body = JSON.stringify({ message });
          const ts = String(Date.now());
          const headers = new Headers({ 'content-type': 'application/json', 'x-timestamp': ts, 'x-signature': vapiHmacSignature(SECRET, ts, body) });
          expect((await handleVapiServerMessage(t.deps, accounts, body, JSON.parse(body), headers)).status).toBeLessThan(300);
        }
      }
      await until(async () => (await batchSettled(t, leave)) && (await batchSettled(t, hangup)), undefined, 'both batches settled');
    } finally {
      await w.stop({ graceMs: 0 });
    }
    const record = async (batchId: string) => (await t.request('GET', `${CALL_BATCHES}/${batchId}/calls`, { key: a.apiKey })).body.data.items[0];
    expect(await record(leave)).toMatchObject({ status: 'no_answer', disconnect_reason: 'voicemail', voicemail_left: true });
    expect(await record(hangup)).toMatchObject({ status: 'no_answer', disconnect_reason: 'voicemail', voicemail_left: false });
    expectNoInvalidBodies(fake);
  });
});
