// A batch of 20 contacts placed through the Vapi provider against the local fake Vapi, from the
// REST create to the REST results: authenticated server messages duplicated, reversed and lost,
// creates whose answer is lost (5xx after creating, a dropped connection), reconciliation through
// GET /call/{id}, Vapi's own analysis - and every record must come out exactly as Vapi's calls say.
import { afterEach, describe, expect, it } from 'vitest';
import { batchBody, CALL_BATCHES, makeContacts, validPhone } from '../helpers/batch-requests.ts';
import { expectConsistentBatch, testWorker } from '../helpers/dispatch.ts';
import type { DispatchWorker } from '../../src/dispatch/worker.ts';
import { handleVapiServerMessage } from '../../src/dispatch/voice/vapi/webhook.ts';
import { vapiAccounts } from '../../src/dispatch/voice/vapi/from-config.ts';
import { vapiHmacSignature } from '../../src/dispatch/voice/vapi/signature.ts';
import {
  batchSettled,
  expectedRecord,
  expectNoInvalidBodies,
  pickRecord,
  sleep,
  until,
  VAPI_ASSISTANT,
  VAPI_NUMBER_ID,
  vapiApp,
  type VapiApp,
} from './vapi-app.ts';

let r: VapiApp | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

/** Plays the batch out at the fake until every call and analysis is settled, moving the app clock 10 s per round. */
async function playOut(batchId: string, w: DispatchWorker, each: (round: number) => Promise<void>) {
  const deadline = Date.now() + 60_000;
  for (let round = 0; ; round++) {
    await each(round);
    if (await batchSettled(r!.t, batchId)) break;
    if (Date.now() > deadline) throw new Error('batch did not settle');
    // Lost messages are reconciled through GET /call/{id} once max duration (30 s) / the analysis
    // grace period (60 s) has passed on the app clock.
    r!.t.clock.advance(10_000);
    // Pacing between clock jumps, not a wait: the loop ends on batchSettled (or its deadline).
    await sleep(40);
  }
  await w.settle();
}

describe('Vapi end to end (fake Vapi)', () => {
  it('runs a 20-contact batch from create to results with exactly the results Vapi reported', async () => {
    r = await vapiApp({ config: { LEASE_MS: '600000' } });
    const { t, fake, a } = r;
    const phones = Array.from({ length: 20 }, (_, i) => validPhone(i));
    const at =
      (...idx: number[]) =>
      (c: Record<string, any>) =>
        idx.some((i) => c.customer.number === phones[i]);
    const res = await t.request('POST', CALL_BATCHES, {
      key: a.apiKey,
      body: batchBody(a, { concurrency: 8, contacts: makeContacts(20).map((c, i) => ({ ...c, name: `Contact ${i}`, metadata: { n: i } })) }),
    });
    expect(res.status).toBe(201);
    const batchId: string = res.body.data?.id ?? res.body.id ?? res.body.batch_id ?? res.body.data?.batch_id;

    // The first create is made at Vapi but answered 503; a later one loses its connection first.
    fake.failNext(1, 503, true);
    const w = testWorker(t.deps);
    w.start();
    try {
      // Refused before anything is stored: a forged signature, a stale one, none at all.
      const accounts = vapiAccounts(t.deps);
      const forged = JSON.stringify({
        message: {
          type: 'status-update',
          status: 'ended',
          call: { id: 'x', assistantOverrides: { metadata: { account_id: a.account.id, call_id: 'c' } } },
        },
      });
      const now = String(Date.now());
      const stale = String(Date.now() - 6 * 60_000);
      const answer = (h: Record<string, string>) => handleVapiServerMessage(t.deps, accounts, forged, JSON.parse(forged), new Headers(h));
      expect((await answer({ 'x-timestamp': now, 'x-signature': vapiHmacSignature('wrong-secret', now, forged) })).status).toBe(401);
      expect((await answer({ 'x-timestamp': stale, 'x-signature': vapiHmacSignature('whsec_vapi_0123456789', stale, forged) })).status).toBe(401);
      expect((await answer({})).status).toBe(401);

      await playOut(batchId, w, async (round) => {
        if (round === 1) fake.failNext(1, 'reset', false);
        await fake.finishAll({
          duplicate: at(4, 5, 15),
          reversed: at(3, 13),
          dropReport: at(9, 19),
          dropAll: at(6),
          noAnalysis: at(8),
        });
      });
    } finally {
      await w.stop({ graceMs: 0 });
    }

    const { batch, calls } = await expectConsistentBatch(t.deps, batchId);
    expect({ status: batch.status, completed: batch.completed, failed: batch.failed, queued: batch.queued, inProgress: batch.inProgress }).toEqual({
      status: 'completed',
      completed: 14,
      failed: 6,
      queued: 0,
      inProgress: 0,
    });
    for (const c of calls) {
      const i = phones.indexOf(c.phoneNumber);
      expect({ i, ...pickRecord(c) }).toEqual({ i, ...expectedRecord(c.phoneNumber, { analysed: i !== 8 }) });
      expect(c.providerCallId).toMatch(/^[0-9a-f-]{36}$/);
      expect(c.leaseOwner).toBeNull();
    }
    // One Vapi call per contact, none twice, though two creates lost their answer.
    expect(fake.creates).toHaveLength(20);
    expect(new Set(fake.creates.map((c) => c.assistantOverrides.metadata.call_id)).size).toBe(20);
    expect(fake.creates[0]).toMatchObject({
      assistantId: VAPI_ASSISTANT,
      phoneNumberId: VAPI_NUMBER_ID,
      assistantOverrides: { maxDurationSeconds: 30 },
    });
    expect(fake.creates.find((c) => c.customer.number === phones[3])!.assistantOverrides.variableValues).toEqual({
      n: '3',
      contact_name: 'Contact 3',
    });
    expect(fake.delivered.every((s) => s === 204)).toBe(true);
    expectNoInvalidBodies(fake);
    const stored = await t.deps.db.prisma.$queryRaw<{ event_type: string; n: number }[]>`
      SELECT event_type, count(*)::int AS n FROM provider_events WHERE provider = 'vapi' GROUP BY event_type ORDER BY event_type`;
    // Duplicates stored once: 19 ended (one call's end entirely lost), 17 reports (2 more lost),
    // 13 answered calls going in-progress (the 14th's messages all lost).
    expect(stored).toEqual([
      { event_type: 'end-of-call-report', n: 17 },
      { event_type: 'status-update:ended', n: 19 },
      { event_type: 'status-update:in-progress', n: 13 },
    ]);

    const results = await t.request('GET', `${CALL_BATCHES}/${batchId}/results?limit=100`, { key: a.apiKey });
    expect(results.status).toBe(200);
    expect(JSON.stringify(results.body)).not.toContain(fake.url);
    const items: any[] = results.body.data?.items ?? results.body.items ?? results.body.data;
    expect(items.find((x) => x.phone_number === phones[4])).toMatchObject({
      status: 'completed',
      transcript_status: 'ready',
      summary: `Spoke with ${phones[4]}.`,
      outcomes: { interested: 'true', callback_time: 'day-4' },
    });
    expect(items.find((x) => x.phone_number === phones[0])).toMatchObject({ status: 'no_answer', recording_url: null, transcript_status: null });
  }, 120_000);
});

describe('a worker stopped gracefully mid-batch', () => {
  it('leaves its Vapi calls talking; the next worker adopts them, and no Vapi call is placed twice', async () => {
    r = await vapiApp({ config: { LEASE_MS: '1000' } });
    const { t, fake, a } = r;
    const { insertBatch } = await import('../helpers/fixtures.ts');
    const { callEvents } = await import('../helpers/dispatch.ts');
    const { batch } = await insertBatch(t.deps, a, {
      contacts: 8,
      batch: { concurrency: 4 },
      callOverrides: (i) => ({ status: 'queued', phoneNumber: validPhone(40 + i) }),
    });
    let w = testWorker(t.deps);
    w.start();
    await until(
      async () => (await t.deps.db.prisma.call.count({ where: { batchId: batch.id, providerCallId: { not: null } } })) === 4,
      undefined,
      'dials',
    );
    await fake.startAll();
    await w.stop({ graceMs: 0 });
    // Nobody hung up on the people on the line.
    expect(fake.ended).toEqual([]);
    t.clock.advance(2_000);
    w = testWorker(t.deps);
    w.start();
    try {
      const adopted = async () => (await callEvents(t.deps, batch.id)).filter((e) => e.detail?.event === 'adopted').length;
      await until(async () => (await adopted()) >= 1, undefined, 'adoptions');
      await playOut(batch.id, w, async () => {
        await fake.finishAll();
      });
    } finally {
      await w.stop({ graceMs: 0 });
    }
    const { calls } = await expectConsistentBatch(t.deps, batch.id);
    for (const c of calls) expect(pickRecord(c)).toEqual(expectedRecord(c.phoneNumber, { analysed: true }));
    expect(fake.creates).toHaveLength(8);
    expect(new Set(fake.creates.map((c) => c.assistantOverrides.metadata.call_id)).size).toBe(8);
    expectNoInvalidBodies(fake);
  }, 60_000);
});
