// Voicemail handling through Retell (docs/providers.md "Voicemail"): the batch's setting goes to
// Retell as the agent's voicemail_option for the call, and a call Retell ends in voicemail is
// recorded with voicemail_left as the setting asked.
import { afterEach, describe, expect, it } from 'vitest';
import { sign } from 'retell-sdk';
import { batchBody, CALL_BATCHES, validPhone } from '../helpers/batch-requests.ts';
import { testWorker } from '../helpers/dispatch.ts';
import { validCallObject } from '../helpers/fake-retell.ts';
import { batchSettled, expectNoInvalidBodies, RETELL_KEY, retellApp, until, type RetellApp } from './retell-app.ts';

let r: RetellApp | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

describe('voicemail through Retell (fake Retell)', () => {
  it('asks for the batch voicemail action and records whether the message was left', async () => {
    r = await retellApp();
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
      await until(() => fake.creates.length === 2, undefined, 'both calls created at Retell');
      const sent = (batchId: string) => fake.creates.find((c) => c.metadata.batch_id === batchId)!;
      expect(sent(leave).agent_override.agent.voicemail_option).toEqual({ action: { type: 'static_text', text: 'Please call Acme back.' } });
      expect(sent(hangup).agent_override.agent.voicemail_option).toEqual({ action: { type: 'hangup' } });

      // Retell found voicemail on both and ended them so.
      const end = Date.now();
      for (const call of fake.calls.values()) {
        Object.assign(call, {
          call_status: 'ended',
          start_timestamp: end - 15_000,
          end_timestamp: end,
          duration_ms: 15_000,
          disconnection_reason: 'voicemail_reached',
        });
        expect(validCallObject(call)).toBe(true);
        const body = JSON.stringify({ event: 'call_ended', call });
        const res = await t.request('POST', '/providers/retell/webhook', {
          rawBody: body,
          headers: { 'x-retell-signature': await sign(body, RETELL_KEY) },
        });
        expect(res.status).toBe(204);
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
