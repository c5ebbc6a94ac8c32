// A batch of 20 contacts placed through the Retell provider against the local fake Retell, from the
// REST create to the REST results: signed webhooks duplicated, reversed, late and lost, creates
// whose answer is lost (5xx after creating, a dropped connection), reconciliation through get-call,
// Retell's own analysis - and every record must come out exactly as Retell's call objects say.
import { afterEach, describe, expect, it } from 'vitest';
import { sign } from 'retell-sdk';
import { batchBody, CALL_BATCHES, makeContacts, validPhone } from '../helpers/batch-requests.ts';
import { callEvents, expectConsistentBatch, nextTurn, testWorker } from '../helpers/dispatch.ts';
import { fakeRecording } from '../helpers/fake-retell.ts';
import { insertBatch } from '../helpers/fixtures.ts';
import type { DispatchWorker } from '../../src/dispatch/worker.ts';
import { batchSettled, expectedRecord, expectNoInvalidBodies, OUTCOME_KEYS, pickRecord, retellApp, until, type RetellApp } from './retell-app.ts';

let r: RetellApp | undefined;
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
    // Lost events are reconciled through get-call once max duration (30 s) / the analysis grace
    // period (60 s) has passed on the app clock.
    r!.t.clock.advance(10_000);
    // The worker sees each jump before the next (a slow machine takes as many rounds as a fast
    // one); the 10 s steps stay far from the lease length that would make it give up on a call
    // (LEASE_MS 600000 above).
    await nextTurn(w);
  }
  await w.settle();
}

describe('Retell end to end (fake Retell)', () => {
  it('runs a 20-contact batch from create to results with exactly the results Retell reported', async () => {
    // A long lease: the worker's own "provider never ended the call" fallback must not race the
    // reconciliation while the test clock jumps.
    r = await retellApp({ config: { LEASE_MS: '600000' } });
    const { t, fake, a } = r;
    const phones = Array.from({ length: 20 }, (_, i) => validPhone(i));
    const at =
      (...idx: number[]) =>
      (c: Record<string, any>) =>
        idx.some((i) => c.to_number === phones[i]);
    const res = await t.request('POST', CALL_BATCHES, {
      key: a.apiKey,
      body: batchBody(a, { concurrency: 8, contacts: makeContacts(20).map((c, i) => ({ ...c, name: `Contact ${i}`, metadata: { n: i } })) }),
    });
    expect(res.status).toBe(201);
    const batchId: string = res.body.data?.id ?? res.body.id ?? res.body.batch_id ?? res.body.data?.batch_id;

    // The first create is made at Retell but answered 503; a later one loses its connection first.
    fake.failNext(1, 503, true);
    const w = testWorker(t.deps);
    w.start();
    try {
      // Rejected before anything is stored: a forged signature and a stale one.
      const forged = JSON.stringify({ event: 'call_ended', call: { call_id: 'rc_1', metadata: { account_id: a.account.id } } });
      expect(
        (
          await t.request('POST', '/providers/retell/webhook', {
            rawBody: forged,
            headers: { 'x-retell-signature': await sign(forged, 'wrong-key') },
          })
        ).status,
      ).toBe(401);
      const stale = `v=${Date.now() - 6 * 60_000},d=${'0'.repeat(64)}`;
      expect((await t.request('POST', '/providers/retell/webhook', { rawBody: forged, headers: { 'x-retell-signature': stale } })).status).toBe(401);

      await playOut(batchId, w, async (round) => {
        if (round === 1) fake.failNext(1, 'reset', false);
        // Analyses of calls ended in earlier rounds: call_analyzed after call_ended was consumed.
        await fake.analyzeAll({ dropAnalyzed: at(6, 19), duplicate: at(4, 14) });
        await fake.finishAll({
          duplicate: at(4, 5, 15),
          reversed: at(3, 13),
          analyzeNow: at(7, 13),
          dropEnded: at(9, 19),
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
      expect(c.providerCallId).toMatch(/^rc_\d+$/);
      expect(c.leaseOwner).toBeNull();
    }
    // One Retell call per contact, none twice, though two creates lost their answer.
    expect(fake.creates).toHaveLength(20);
    expect(new Set(fake.creates.map((c) => c.metadata.call_id)).size).toBe(20);
    expect(fake.creates[0]).toMatchObject({ override_agent_id: 'agent_retell_1', override_agent_version: 7, from_number: '+14155550100' });
    // Our voice names are not Retell voice ids: the Retell agent's own voice is kept.
    expect(fake.creates.every((c) => c.agent_override.agent.voice_id === undefined && c.agent_override.agent.max_call_duration_ms === 60_000)).toBe(
      true,
    );
    expect(fake.creates.find((c) => c.to_number === phones[3])!.retell_llm_dynamic_variables).toEqual({ n: '3', contact_name: 'Contact 3' });
    expect(fake.delivered.every((s) => s === 204)).toBe(true);
    expectNoInvalidBodies(fake);
    const stored = await t.deps.db.prisma.$queryRaw<{ event_type: string; n: number }[]>`
      SELECT event_type, count(*)::int AS n FROM provider_events GROUP BY event_type ORDER BY event_type`;
    // Duplicates stored once: 14 answered calls started; 20 ended minus 2 lost; 14 analysed minus
    // 2 lost call_analyzed and the one Retell never analysed.
    expect(stored).toEqual([
      { event_type: 'call_analyzed', n: 11 },
      { event_type: 'call_ended', n: 18 },
      { event_type: 'call_started', n: 14 },
    ]);

    // The results, through REST: signed recording links only, serving Retell's audio through us.
    const results = await t.request('GET', `${CALL_BATCHES}/${batchId}/results?limit=100`, { key: a.apiKey });
    expect(results.status).toBe(200);
    expect(JSON.stringify(results.body)).not.toContain(fake.url);
    const items: any[] = results.body.data?.items ?? results.body.items ?? results.body.data;
    const answered = items.find((x) => x.phone_number === phones[4]);
    expect(answered).toMatchObject({
      status: 'completed',
      transcript_status: 'ready',
      summary: `Spoke with ${phones[4]}.`,
      outcomes: { interested: 'true', callback_time: 'day-4' },
    });
    const url = new URL(answered.recording_url);
    const wav = await t.app.fetch(new Request(`http://test.local${url.pathname}${url.search}`));
    expect(wav.status).toBe(200);
    expect(wav.headers.get('content-type')).toBe('audio/wav');
    const providerCallId = calls.find((c) => c.phoneNumber === phones[4])!.providerCallId!;
    expect(Buffer.from(await wav.arrayBuffer())).toEqual(fakeRecording(providerCallId));
    expect(items.find((x) => x.phone_number === phones[0])).toMatchObject({ status: 'no_answer', recording_url: null, transcript_status: null });
    expect(OUTCOME_KEYS).toEqual(['interested', 'callback_time']);
  }, 120_000);

  it('use_alternate_number: the alternate is a second Retell call (attempt 2), not the ended primary', async () => {
    r = await retellApp({ config: { LEASE_MS: '600000' } });
    const { t, fake, a } = r;
    const { batch } = await insertBatch(t.deps, a, {
      contacts: 3,
      batch: { useAlternateNumber: true },
      callOverrides: (i) => ({
        status: 'queued',
        phoneNumber: ['+14155550110', '+14155550121', '+14155550134'][i],
        alternatePhone: ['+14155550114', '+14155550123', '+14155550135'][i],
      }),
    });
    const w = testWorker(t.deps);
    w.start();
    try {
      await playOut(batch.id, w, async () => {
        await fake.analyzeAll();
        await fake.finishAll();
      });
    } finally {
      await w.stop({ graceMs: 0 });
    }
    const { calls } = await expectConsistentBatch(t.deps, batch.id);
    const byPrimary = new Map(calls.map((c) => [c.phoneNumber, c]));
    expect(pickDial(byPrimary.get('+14155550110')!)).toEqual({
      attempts: 2,
      usedAlternate: true,
      dialedNumber: '+14155550114',
      ...expectedRecord('+14155550114', { analysed: true }),
    });
    expect(pickDial(byPrimary.get('+14155550121')!)).toEqual({
      attempts: 2,
      usedAlternate: true,
      dialedNumber: '+14155550123',
      ...expectedRecord('+14155550123', { analysed: true }),
    });
    // Answered on the primary: the alternate is never dialled.
    expect(pickDial(byPrimary.get('+14155550134')!)).toEqual({
      attempts: 1,
      usedAlternate: false,
      dialedNumber: '+14155550134',
      ...expectedRecord('+14155550134', { analysed: true }),
    });
    const dials = fake.creates.map((c) => `${c.metadata.call_id}#${c.metadata.attempt}:${c.to_number}`).sort();
    const id = (p: string) => byPrimary.get(p)!.id;
    expect(dials).toEqual(
      [
        `${id('+14155550110')}#1:+14155550110`,
        `${id('+14155550110')}#2:+14155550114`,
        `${id('+14155550121')}#1:+14155550121`,
        `${id('+14155550121')}#2:+14155550123`,
        `${id('+14155550134')}#1:+14155550134`,
      ].sort(),
    );
    // Our record points at the Retell call that settled it.
    const alt = fake.creates.findIndex((c) => c.to_number === '+14155550114');
    expect(byPrimary.get('+14155550110')!.providerCallId).toBe(`rc_${alt + 1}`);
    const history = (await callEvents(t.deps, batch.id))
      .filter((e) => e.call_id === id('+14155550110'))
      .map((e) => `${e.to_status}:${e.detail?.event}`);
    expect(history).toEqual(['ringing:dial', 'ringing:dial', 'answered:undefined', 'in_progress:undefined', 'completed:ended']);
    expectNoInvalidBodies(fake);
  }, 60_000);
});

function pickDial(c: Record<string, any>) {
  return { attempts: c.attempts, usedAlternate: c.usedAlternate, dialedNumber: c.dialedNumber, ...pickRecord(c) };
}

describe('a worker stopped gracefully mid-batch', () => {
  it('leaves its Retell calls talking; the next worker adopts them, and no Retell call is placed twice', async () => {
    r = await retellApp({ config: { LEASE_MS: '1000' } });
    const { t, fake, a } = r;
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
    expect(fake.stops).toEqual([]);
    const stillGoing = await t.deps.db.prisma.call.count({ where: { batchId: batch.id, status: { in: ['ringing', 'in_progress'] } } });
    expect(stillGoing).toBe(4);
    t.clock.advance(2_000);
    w = testWorker(t.deps);
    w.start();
    try {
      const adopted = async () => (await callEvents(t.deps, batch.id)).filter((e) => e.detail?.event === 'adopted').length;
      await until(async () => (await adopted()) === 4, undefined, 'adoptions');
      await playOut(batch.id, w, async () => {
        await fake.analyzeAll();
        await fake.finishAll();
      });
    } finally {
      await w.stop({ graceMs: 0 });
    }
    const { calls, events } = await expectConsistentBatch(t.deps, batch.id);
    for (const c of calls) expect(pickRecord(c)).toEqual(expectedRecord(c.phoneNumber, { analysed: true }));
    expect(events.filter((e) => e.detail?.event === 'adopted')).toHaveLength(4);
    expect(fake.creates).toHaveLength(8);
    expect(new Set(fake.creates.map((c) => c.metadata.call_id)).size).toBe(8);
    expectNoInvalidBodies(fake);
  }, 60_000);
});
