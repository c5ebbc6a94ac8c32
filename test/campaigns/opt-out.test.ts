// Opt-out from the conversation: an agent names the outcome key that means "do not call me again";
// a call whose analysis sets it to yes puts the number it reached on the account's do-not-call
// list (source call:<call_id>) in the transaction that records the result. The simulator's `sim`
// value `opt_out` makes the contact ask, and the local analyser reads it as yes.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { batchBody, CALL_BATCHES, validPhone } from '../helpers/batch-requests.ts';
import { expectConsistentBatch, phoneEndingIn, testWorker } from '../helpers/dispatch.ts';
import { insertBatch } from '../helpers/fixtures.ts';
import { applyCallWrites } from '../../src/services/calls/call-transitions.ts';
import { transcriptWrite } from '../../src/dispatch/store/call-writes.ts';
import { canDetectOptOuts, detectsOptOut, isYes, optedOut } from '../../src/domain/opt-out.ts';
import { analyseLocally } from '../../src/dispatch/analysis/local-analyser.ts';
import { buildTranscript } from '../../src/dispatch/voice/transcript.ts';
import { parseSimOutcomes } from '../../src/dispatch/voice/simulator.ts';

const START = new Date('2026-03-02T15:00:00.000Z');

let t: TestApp;
let a: SeededAccount;

const SUPPRESSIONS = '/api/v1/public/suppressions';
const setOptOutKey = (agentId: string, key: string | null, apiKey = a.apiKey) =>
  t.gql(
    'mutation($id: ID!, $key: String) { updateAgent(id: $id, input: { optOutOutcomeKey: $key }) { id outcomeKeys optOutOutcomeKey } }',
    { id: agentId, key },
    apiKey,
  );

beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount({ limits: { maxConcurrentCalls: 50 }, outcomeKeys: ['interested', 'opt_out'] });
  const r = await setOptOutKey(a.agent.id, 'opt_out');
  expect(r.body.data.updateAgent).toEqual({ id: a.agent.id, outcomeKeys: ['interested', 'opt_out'], optOutOutcomeKey: 'opt_out' });
});
afterAll(() => t.close());
beforeEach(() => t.clock.set(START));

const calls = (batchId: string) => t.deps.db.prisma.call.findMany({ where: { batchId }, orderBy: { seq: 'asc' } });
const drain = () => testWorker(t.deps).drain();
const listed = async (phone: string) =>
  (await t.request('GET', `${SUPPRESSIONS}?phone_number=${encodeURIComponent(phone)}`, { key: a.apiKey })).body.data.items;

async function create(contacts: { phone: string; sim: string }[], overrides: Record<string, unknown> = {}) {
  const res = await t.request('POST', CALL_BATCHES, {
    key: a.apiKey,
    body: batchBody(a, {
      contacts: contacts.map((c, i) => ({ contact_id: `c${i + 1}`, phone_number: c.phone, metadata: { sim: c.sim } })),
      ...overrides,
    }),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data;
}

describe('a call whose analysis says opt_out = yes', () => {
  it('puts its number on the list with source call:<id>; the number is refused at create and a call waiting in another batch is cancelled', async () => {
    const optingOut = validPhone(101);
    const staying = validPhone(102);
    // Created before the opt-out, started after it.
    const waiting = await create([{ phone: optingOut, sim: 'completed' }], { start_mode: 'manual' });

    const batch = await create([
      { phone: optingOut, sim: 'opt_out' },
      { phone: staying, sim: 'completed' },
    ]);
    await drain();
    const [out, stay] = await calls(batch.batch_id);
    expect([out.status, out.transcriptStatus, (out.outcomes as Record<string, string>).opt_out]).toEqual(['completed', 'ready', 'yes']);
    expect([stay.status, (stay.outcomes as Record<string, string>).opt_out]).toEqual(['completed', 'no']);
    expect(out.summary).toContain('asked not to be called again');

    expect(await listed(optingOut)).toEqual([
      { phone_number: optingOut, reason: 'opted out during call', source: `call:${out.id}`, created_at: START.toISOString() },
    ]);
    expect(await listed(staying)).toEqual([]);
    const gql = await t.gql(
      'query($p: String) { suppressions(phoneNumber: $p) { items { phoneNumber source reason } } }',
      { p: optingOut },
      a.apiKey,
    );
    expect(gql.body.data.suppressions.items).toEqual([{ phoneNumber: optingOut, source: `call:${out.id}`, reason: 'opted out during call' }]);

    // A later batch: the number is rejected at create, as any listed number.
    const later = await create([
      { phone: optingOut, sim: 'completed' },
      { phone: staying, sim: 'completed' },
    ]);
    expect(later.validation_errors).toEqual([
      { index: 1, external_id: 'c1', field: 'phone_number', message: "Phone number is on the account's do-not-call list" },
    ]);

    // The batch created before the opt-out: its call to the number is never dialled.
    expect((await t.request('POST', `${CALL_BATCHES}/${waiting.batch_id}/start`, { key: a.apiKey })).status).toBe(200);
    await drain();
    const [cancelled] = await calls(waiting.batch_id);
    expect([cancelled.status, cancelled.disconnectReason, cancelled.attempts]).toEqual(['cancelled', 'suppressed', 0]);
    await expectConsistentBatch(t.deps, waiting.batch_id);
  });

  it('is detected by default for an agent with no opt-out key (the default key, or the phrases in what the contact said), and lists every number of the contact', async () => {
    // The demo agent's keys: no opt-out key among them, none named.
    const other = await t.seedAccount({ outcomeKeys: ['interested', 'callback_requested', 'sentiment'] });
    const phone = validPhone(103);
    const alternate = validPhone(104);
    const res = await t.request('POST', CALL_BATCHES, {
      key: other.apiKey,
      body: batchBody(other, { contacts: [{ contact_id: 'c1', phone_number: phone, metadata: { sim: 'opt_out', alternate_number: alternate } }] }),
    });
    expect(res.status).toBe(201);
    // No opt-out warning (the batch has no window: that one is expected).
    expect(res.body.data.warnings.map((w: { code: string }) => w.code)).toEqual(['no_protective_window']);
    await drain();
    const [call] = await calls(res.body.data.batch_id);
    expect(call.outcomes).not.toHaveProperty('opt_out');
    const entries = await t.deps.db.prisma.suppression.findMany({ where: { accountId: other.account.id }, orderBy: { phoneNumber: 'asc' } });
    expect(entries.map((e) => [e.phoneNumber, e.source])).toEqual([phone, alternate].sort().map((p) => [p, `call:${call.id}`]));

    // The default key alone counts too: an agent whose keys hold `opt_out` without naming it.
    const keyed = await t.seedAccount({ outcomeKeys: ['opt_out'] });
    const r2 = await t.request('POST', CALL_BATCHES, {
      key: keyed.apiKey,
      body: batchBody(keyed, { contacts: [{ contact_id: 'c1', phone_number: validPhone(105), metadata: { sim: 'opt_out' } }] }),
    });
    await drain();
    const [c2] = await calls(r2.body.data.batch_id);
    expect((c2.outcomes as Record<string, string>).opt_out).toBe('yes');
    expect(await t.deps.db.prisma.suppression.count({ where: { accountId: keyed.account.id } })).toBe(1);
  });

  it('lists nothing when the agent turned detection off and names no key, and the create warns that it cannot detect opt-outs', async () => {
    const other = await t.seedAccount({ outcomeKeys: ['opt_out'] });
    const off = await t.gql(
      'mutation($id: ID!) { updateAgent(id: $id, input: { optOutDetection: false }) { optOutOutcomeKey optOutDetection } }',
      { id: other.agent.id },
      other.apiKey,
    );
    expect(off.body.data.updateAgent).toEqual({ optOutOutcomeKey: null, optOutDetection: false });
    const phone = validPhone(106);
    const res = await t.request('POST', CALL_BATCHES, {
      key: other.apiKey,
      body: batchBody(other, { contacts: [{ contact_id: 'c1', phone_number: phone, metadata: { sim: 'opt_out' } }] }),
    });
    expect(res.status).toBe(201);
    expect(res.body.data.warnings).toEqual([
      expect.objectContaining({ code: 'no_protective_window' }),
      {
        code: 'agent_cannot_detect_opt_outs',
        message: expect.stringContaining('optOutDetection is off'),
        contact_count: null,
        contacts: [],
        contacts_left_out: 0,
      },
    ]);
    await drain();
    const [call] = await calls(res.body.data.batch_id);
    expect((call.outcomes as Record<string, string>).opt_out).toBe('yes');
    expect(await t.deps.db.prisma.suppression.count({ where: { accountId: other.account.id } })).toBe(0);

    // Its own key still works with detection off, and the warning goes.
    await setOptOutKey(other.agent.id, 'opt_out', other.apiKey);
    const keyed = await t.request('POST', CALL_BATCHES, {
      key: other.apiKey,
      body: batchBody(other, { contacts: [{ contact_id: 'c1', phone_number: validPhone(107), metadata: { sim: 'opt_out' } }] }),
    });
    expect(keyed.body.data.warnings.map((w: { code: string }) => w.code)).toEqual(['no_protective_window']);
    await drain();
    expect(await t.deps.db.prisma.suppression.count({ where: { accountId: other.account.id } })).toBe(1);
  });
});

describe('the write that records the result', () => {
  /** A call answered on this number, under the lease of worker `w`, its analysis under way. */
  async function answered(opts: { phone: string; dialed?: string; alternate?: string }) {
    const {
      calls: [call],
    } = await insertBatch(t.deps, a, {
      contacts: 1,
      status: 'running',
      callOverrides: () => ({
        phoneNumber: opts.phone,
        dialedNumber: opts.dialed ?? opts.phone,
        alternatePhone: opts.alternate ?? (opts.dialed !== undefined && opts.dialed !== opts.phone ? opts.dialed : null),
        status: 'completed',
        transcriptStatus: 'processing',
        leaseOwner: 'w',
        leaseExpiresAt: new Date(START.getTime() + 60_000),
        attempts: 1,
      }),
    });
    return call;
  }
  const ready = (call: { id: string; batchId: string; accountId: string }, optOut: boolean, owner = 'w') =>
    transcriptWrite({ callId: call.id, batchId: call.batchId, accountId: call.accountId }, owner, 'completed', {
      transcriptStatus: 'ready',
      summary: 's',
      outcomes: { opt_out: optOut ? 'yes' : 'no' },
      optOut,
    });
  const entry = (phone: string) =>
    t.deps.db.prisma.suppression.findUnique({ where: { accountId_phoneNumber: { accountId: a.account.id, phoneNumber: phone } } });

  it('lists every number of the contact (primary and alternate) when the alternate answered, in the same commit as the result', async () => {
    const call = await answered({ phone: phoneEndingIn(4, 201), dialed: phoneEndingIn(4, 202) });
    const r = await applyCallWrites(t.deps, [{ ...ready(call, true), webhooks: false }], START);
    expect(r.applied.has(call.id)).toBe(true);
    // Before issue 33 the primary was listed nowhere and was dialled again in another batch.
    expect(await entry(phoneEndingIn(4, 201))).toMatchObject({ source: `call:${call.id}`, reason: 'opted out during call' });
    expect(await entry(phoneEndingIn(4, 202))).toMatchObject({ source: `call:${call.id}`, reason: 'opted out during call' });
    expect((await t.deps.db.prisma.call.findUniqueOrThrow({ where: { id: call.id } })).transcriptStatus).toBe('ready');
  });

  it('lists the alternate number too when the primary answered', async () => {
    const call = await answered({ phone: phoneEndingIn(4, 206), alternate: phoneEndingIn(4, 207) });
    expect((await applyCallWrites(t.deps, [ready(call, true)], START)).applied.has(call.id)).toBe(true);
    expect(await entry(phoneEndingIn(4, 206))).toMatchObject({ source: `call:${call.id}` });
    expect(await entry(phoneEndingIn(4, 207))).toMatchObject({ source: `call:${call.id}` });
  });

  it('keeps an existing entry as it was (first reason and source), and is not an error', async () => {
    const phone = phoneEndingIn(4, 203);
    expect(
      (await t.request('POST', SUPPRESSIONS, { key: a.apiKey, body: { phone_numbers: [phone], reason: 'asked by email' } })).body.data.added,
    ).toBe(1);
    const call = await answered({ phone });
    const r = await applyCallWrites(t.deps, [ready(call, true)], START);
    expect(r.applied.has(call.id)).toBe(true);
    expect(await entry(phone)).toMatchObject({ source: 'api', reason: 'asked by email' });
  });

  it('lists nothing for a write that did not apply (the lease moved on) or a result without opt-out', async () => {
    const stale = await answered({ phone: phoneEndingIn(4, 204) });
    expect((await applyCallWrites(t.deps, [ready(stale, true, 'another-worker')], START)).applied.size).toBe(0);
    expect(await entry(phoneEndingIn(4, 204))).toBeNull();
    const no = await answered({ phone: phoneEndingIn(4, 205) });
    expect((await applyCallWrites(t.deps, [ready(no, false)], START)).applied.has(no.id)).toBe(true);
    expect(await entry(phoneEndingIn(4, 205))).toBeNull();
  });
});

describe("the agent's opt-out key", () => {
  const createAgent = (input: Record<string, unknown>) =>
    t.gql('mutation($input: CreateAgentInput!) { createAgent(input: $input) { name outcomeKeys optOutOutcomeKey } }', { input }, a.apiKey);

  it('must be one of its outcome keys, on create and update; null clears it', async () => {
    const ok = await createAgent({ name: 'Opt-out agent', voice: 'alloy', outcomeKeys: ['dnc', 'interested'], optOutOutcomeKey: 'dnc' });
    expect(ok.body.data.createAgent).toEqual({ name: 'Opt-out agent', outcomeKeys: ['dnc', 'interested'], optOutOutcomeKey: 'dnc' });
    const bad = await createAgent({ name: 'Bad agent', voice: 'alloy', outcomeKeys: ['interested'], optOutOutcomeKey: 'dnc' });
    expect(bad.body.errors[0].extensions).toMatchObject({
      code: 'MISSING_PARAMETER',
      details: ["optOutOutcomeKey: Value error, must be one of the agent's outcomeKeys"],
    });
    expect(await t.deps.db.prisma.agent.count({ where: { accountId: a.account.id, name: 'Bad agent' } })).toBe(0);

    const other = await t.seedAccount({ outcomeKeys: ['opt_out'] });
    expect((await setOptOutKey(other.agent.id, 'interested', other.apiKey)).body.errors[0].extensions.details).toEqual([
      "optOutOutcomeKey: Value error, must be one of the agent's outcomeKeys",
    ]);
    expect((await setOptOutKey(other.agent.id, 'opt_out', other.apiKey)).body.data.updateAgent.optOutOutcomeKey).toBe('opt_out');
    expect((await setOptOutKey(other.agent.id, null, other.apiKey)).body.data.updateAgent.optOutOutcomeKey).toBeNull();
    // Another account's agent is not found.
    expect((await setOptOutKey(other.agent.id, null, a.apiKey)).body.errors[0].extensions.code).toBe('NOT_FOUND');
  });
});

describe('rules', () => {
  it('yes is "yes" or "true" in any case, or true', () => {
    for (const v of ['yes', 'YES', ' Yes ', 'true', 'True', true]) expect(isYes(v), JSON.stringify(v)).toBe(true);
    for (const v of ['no', 'y', 'yes please', 'false', 'unknown', '', 1, null, undefined, false, 'x'.repeat(10_000)])
      expect(isYes(v), JSON.stringify(v)).toBe(false);
    expect(optedOut({ opt_out: 'Yes' }, 'opt_out')).toBe(true);
    expect(optedOut({ opt_out: 'yes' }, null)).toBe(false);
    expect(optedOut({ other: 'yes' }, 'opt_out')).toBe(false);
    expect(optedOut(null, 'opt_out')).toBe(false);
  });

  it("detection: the agent key, then (unless off) the default key and the phrase list in the contact's turns only", () => {
    const on = { key: null, detection: true };
    const off = { key: null, detection: false };
    const said = (text: string) => `Agent: Hello, this is A.\nUser: ${text}\nAgent: Goodbye.`;
    for (const text of [
      'Stop calling me.',
      'Please remove me from your list',
      'DO NOT CALL this number',
      'Don\u2019t call me again',
      'Take me off the list.',
      'I want to opt out',
      'unsubscribe',
    ]) {
      expect(detectsOptOut(on, {}, said(text)), text).toBe(true);
      expect(detectsOptOut(off, {}, said(text)), text).toBe(false);
    }
    for (const text of [
      "Yes, I'm interested. Tell me more.",
      'No need to call me back.',
      "No, I'm not interested, thanks.",
      'Call me back later this week.',
      'Hi, yes, this is Ada.',
    ]) {
      expect(detectsOptOut(on, {}, said(text)), text).toBe(false);
    }
    // The agent's words are not the contact's.
    expect(detectsOptOut(on, {}, 'Agent: If you want us to stop calling, say so.\nUser: Go on.')).toBe(false);
    expect(detectsOptOut(on, { opt_out: 'yes' }, '')).toBe(true);
    expect(detectsOptOut(off, { opt_out: 'yes' }, '')).toBe(false);
    expect(detectsOptOut({ key: 'dnc', detection: false }, { dnc: 'true' }, '')).toBe(true);
    expect(canDetectOptOuts(off)).toBe(false);
    expect(canDetectOptOuts({ key: 'dnc', detection: false })).toBe(true);
    expect(canDetectOptOuts(on)).toBe(true);
  });

  it("the simulator's opt_out contact asks, and the local analyser reads opt-out keys from what the contact said", () => {
    expect(parseSimOutcomes('no_answer,opt_out')).toEqual(['no_answer', 'opt_out']);
    const base = { agentName: 'A', promptText: 'You are calling about a demo.', contactName: 'Ada', metadata: {}, endedBy: 'agent' as const };
    const input = (transcript: string) => ({
      transcript,
      outcomeKeys: ['opt_out', 'Do Not Call', 'dnc', 'unsubscribe'],
      contactMetadata: {},
      callStatus: 'completed',
      hangupBy: 'agent',
      contactName: 'Ada',
    });
    const asked = analyseLocally(input(buildTranscript({ ...base, optOut: true })));
    expect(asked.outcomes).toEqual({ opt_out: 'yes', 'Do Not Call': 'yes', dnc: 'yes', unsubscribe: 'yes' });
    const not = analyseLocally(input(buildTranscript(base)));
    expect(not.outcomes).toEqual({ opt_out: 'no', 'Do Not Call': 'no', dnc: 'no', unsubscribe: 'no' });
  });
});
