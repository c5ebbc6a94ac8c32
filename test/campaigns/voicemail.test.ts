// Voicemail handling (docs/campaigns.md "Voicemail") with the simulator: a batch's voicemail
// setting decides whether a call that reaches voicemail leaves the message, the call record says
// so, and a retry policy tells `voicemail` (nothing left) from `voicemail_left`. Nothing sleeps:
// the worker drains what is due and the test clock moves.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { batchBody, CALL_BATCHES, validPhone } from '../helpers/batch-requests.ts';
import { expectConsistentBatch, testWorker } from '../helpers/dispatch.ts';

const START = new Date('2026-03-02T15:00:00.000Z');

let t: TestApp;
let a: SeededAccount;

beforeAll(async () => {
  t = await createTestApp({ config: { RETRY_MIN_DELAY_SECONDS: '1' } });
  a = await t.seedAccount({ limits: { maxConcurrentCalls: 100 } });
});
afterAll(() => t.close());
beforeEach(() => t.clock.set(START));

async function create(sims: string[], overrides: Record<string, unknown>, alternate?: string): Promise<string> {
  const res = await t.request('POST', CALL_BATCHES, {
    key: a.apiKey,
    body: batchBody(a, {
      contacts: sims.map((sim, i) => ({
        contact_id: `c${i + 1}`,
        phone_number: validPhone(i * 10 + 4),
        metadata: { sim, ...(alternate ? { alternate_phone: alternate } : {}) },
      })),
      ...overrides,
    }),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.batch_id;
}

const drain = () => testWorker(t.deps).drain();
const items = async (id: string, page: 'calls' | 'results') =>
  (await t.request('GET', `${CALL_BATCHES}/${id}/${page}`, { key: a.apiKey })).body.data.items as Record<string, unknown>[];
const LEAVE = { voicemail: 'leave_message', voicemail_message: 'Hello from Acme, please call us back.' };

describe('voicemail', () => {
  it('leave_message: a call that reaches voicemail leaves the message and says so in its record; others say nothing', async () => {
    const id = await create(['voicemail', 'completed', 'no_answer'], LEAVE);
    await drain();
    for (const page of ['calls', 'results'] as const) {
      const got = (await items(id, page)).map((c) => [c.contact_id, c.status, c.disconnect_reason, c.voicemail_left]);
      expect(got, page).toEqual([
        ['c1', 'no_answer', 'voicemail', true],
        ['c2', 'completed', 'agent_hangup', null],
        ['c3', 'no_answer', 'no_answer', null],
      ]);
    }
    const gql = await t.gql('query($id: ID!) { calls(batchId: $id) { items { externalId voicemailLeft } } }', { id }, a.apiKey);
    expect(gql.body.data.calls.items[0]).toEqual({ externalId: 'c1', voicemailLeft: true });
    await expectConsistentBatch(t.deps, id);
  });

  it('hangup, or no setting (the simulator then hangs up as well): voicemail reached, nothing left', async () => {
    for (const overrides of [{ voicemail: 'hangup' }, {}]) {
      const id = await create(['voicemail'], overrides);
      await drain();
      const [call] = await items(id, 'results');
      expect([call.status, call.disconnect_reason, call.voicemail_left], JSON.stringify(overrides)).toEqual(['no_answer', 'voicemail', false]);
    }
  });

  it('retry on [voicemail] tries again a call that left nothing, but not one that left the message', async () => {
    const retry = { max_attempts: 2, on: ['voicemail'], delay_seconds: 60 };
    const hungUp = await create(['voicemail,completed'], { voicemail: 'hangup', retry });
    const left = await create(['voicemail,completed'], { ...LEAVE, retry });
    await drain();
    const [waiting] = await items(hungUp, 'calls');
    expect([waiting.status, waiting.attempts, waiting.retry_reason, waiting.voicemail_left]).toEqual(['queued', 1, 'voicemail', false]);
    const [done] = await items(left, 'calls');
    expect([done.status, done.attempts, done.retry_reason, done.voicemail_left]).toEqual(['no_answer', 1, null, true]);

    t.clock.set(new Date(START.getTime() + 60_000));
    await drain();
    const [second] = await items(hungUp, 'calls');
    expect([second.status, second.attempts]).toEqual(['completed', 2]);
    // The record keeps what the attempt that reached voicemail did.
    expect(second.voicemail_left).toBe(false);
  });

  it('retry on [voicemail_left] tries again only a call that left the message, and says why it waits', async () => {
    const id = await create(['voicemail,completed', 'voicemail'], {
      ...LEAVE,
      retry: { max_attempts: 2, on: ['voicemail_left'], delay_seconds: 60 },
    });
    await drain();
    const got = (await items(id, 'calls')).map((c) => [c.status, c.retry_reason, c.voicemail_left]);
    expect(got).toEqual([
      ['queued', 'voicemail_left', true],
      ['queued', 'voicemail_left', true],
    ]);
    const batch = (await t.request('GET', `${CALL_BATCHES}/${id}`, { key: a.apiKey })).body.data;
    expect(batch.retry.on).toEqual(['voicemail_left']);
  });

  it('a message left at the primary number stays on the record when the alternate number is dialled next', async () => {
    const id = await create(['voicemail,no_answer'], { ...LEAVE, use_alternate_number: true }, validPhone(99));
    await drain();
    const [call] = await items(id, 'calls');
    expect([call.status, call.attempts, call.disconnect_reason, call.voicemail_left]).toEqual(['no_answer', 2, 'no_answer', true]);
  });
});
