// Compliance profiles end to end (docs/campaigns.md "Compliance profiles"): the protective default
// (us_tcpa) for an account that chose nothing, an account's explicit opt-out, a batch's own
// profiles (REST and GraphQL, validated), state hours placed at create and judged at dial, and a
// state's 3-calls-in-24-hours limit counted across the account's dials of a number.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { batchBody, CALL_BATCHES } from '../helpers/batch-requests.ts';
import { callEvents, expectConsistentBatch, testWorker } from '../helpers/dispatch.ts';

let t: TestApp;
let byDefault: SeededAccount;
let optedOut: SeededAccount;

beforeAll(async () => {
  // The service's own default (the test harness turns it off for tests of other things).
  t = await createTestApp({ config: { DEFAULT_COMPLIANCE_PROFILES: 'us_tcpa' } });
  byDefault = await t.seedAccount({ limits: { maxConcurrentCalls: 100 } });
  optedOut = await t.seedAccount({ limits: { maxConcurrentCalls: 100 } });
  const res = await t.gql(
    `mutation($id: ID!) { adminUpdateAccount(id: $id, input: { complianceProfiles: [] }) { complianceProfiles effectiveComplianceProfiles } }`,
    { id: optedOut.account.id },
    ADMIN_TOKEN,
  );
  expect(res.body, JSON.stringify(res.body)).toMatchObject({
    data: { adminUpdateAccount: { complianceProfiles: [], effectiveComplianceProfiles: [] } },
  });
});
afterAll(() => t.close());

const setClock = (iso: string) => t.clock.set(new Date(iso));
const drain = () => testWorker(t.deps).drain();
const calls = (batchId: string) => t.deps.db.prisma.call.findMany({ where: { batchId }, orderBy: { seq: 'asc' } });
const dialTimes = async (batchId: string) => {
  const out: string[] = [];
  for (const e of await callEvents(t.deps, batchId)) {
    if (e.detail?.event === 'dial') out.push(e.at.toISOString());
    if (e.detail?.event === 'dial_withheld') out.pop();
  }
  return out;
};

async function create(a: SeededAccount, phones: string[], overrides: Record<string, unknown> = {}) {
  const res = await t.request('POST', CALL_BATCHES, {
    key: a.apiKey,
    body: batchBody(a, {
      contacts: phones.map((p, i) => ({ contact_id: `c${i + 1}`, phone_number: p, metadata: { sim: 'completed' } })),
      ...overrides,
    }),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.batch_id as string;
}

beforeEach(() => setClock('2026-01-15T08:00:00.000Z'));

describe('the protective default', () => {
  it('an account that chose nothing gets us_tcpa: a batch without a window does not dial New York at 03:00', async () => {
    const me = await t.gql(`{ me { complianceProfiles effectiveComplianceProfiles } }`, {}, byDefault.apiKey);
    expect(me.body.data.me).toEqual({ complianceProfiles: null, effectiveComplianceProfiles: ['us_tcpa'] });
    const id = await create(byDefault, ['+12125550188', '+442071838750']);
    expect((await t.deps.db.prisma.batch.findUniqueOrThrow({ where: { id } })).complianceProfiles).toEqual(['us_tcpa']);
    const [ny, london] = await calls(id);
    expect([ny.timezone, ny.nextAttemptAt?.toISOString(), ny.windowClosesAt]).toEqual(['America/New_York', '2026-01-15T13:00:00.000Z', null]);
    // A London number is not a US one: no rule holds it.
    expect([london.timezone, london.nextAttemptAt]).toEqual([null, null]);
    await drain();
    expect((await calls(id)).map((c) => c.status)).toEqual(['pending', 'completed']);
    setClock('2026-01-15T13:00:00.000Z');
    await drain();
    expect((await calls(id)).map((c) => c.status)).toEqual(['completed', 'completed']);
    expect(await dialTimes(id)).toEqual(['2026-01-15T08:00:00.000Z', '2026-01-15T13:00:00.000Z'].sort());
    await expectConsistentBatch(t.deps, id);
  });

  it('an account that opted out explicitly dials at any hour (its batches carry no profile)', async () => {
    const id = await create(optedOut, ['+12125550189']);
    expect((await t.deps.db.prisma.batch.findUniqueOrThrow({ where: { id } })).complianceProfiles).toEqual([]);
    await drain();
    expect((await calls(id))[0].status).toBe('completed');
  });
});

describe("a batch's own profiles", () => {
  it('us_states: a Florida number is not dialled at 20:30 Eastern (TCPA alone would allow it until 21:00)', async () => {
    setClock('2026-01-16T01:30:00.000Z');
    const id = await create(byDefault, ['+13055550190', '+12125550190'], { compliance_profiles: ['us_states'] });
    expect((await t.deps.db.prisma.batch.findUniqueOrThrow({ where: { id } })).complianceProfiles).toEqual(['us_tcpa', 'us_states']);
    await drain();
    const [fl, ny] = await calls(id);
    expect([fl.status, fl.nextAttemptAt?.toISOString()]).toEqual(['pending', '2026-01-16T13:00:00.000Z']);
    expect(ny.status).toBe('completed');
  });

  it('are refused when unknown or repeated, on REST and GraphQL', async () => {
    const rest = await t.request('POST', CALL_BATCHES, {
      key: byDefault.apiKey,
      body: batchBody(byDefault, { compliance_profiles: ['us_tcpa', 'eu_quiet', 'us_tcpa'] }),
    });
    expect(rest.status, JSON.stringify(rest.body)).toBe(422);
    expect(rest.body.error.details).toEqual([
      expect.stringMatching(/^compliance_profiles\.1: Input should be 'us_tcpa'/),
      "compliance_profiles.2: 'us_tcpa' is listed twice",
    ]);
    const typed = await t.request('POST', CALL_BATCHES, { key: byDefault.apiKey, body: batchBody(byDefault, { compliance_profiles: 'us_tcpa' }) });
    expect(typed.status).toBe(422);
    const gql = await t.gql(
      `mutation($input: CreateCallBatchInput!) { createCallBatch(input: $input) { batch { id } } }`,
      { input: { ...gqlInput(), complianceProfiles: ['eu_quiet'] } },
      byDefault.apiKey,
    );
    expect(gql.body.errors?.[0]?.message).toMatch(/eu_quiet/);
    // The same request with a known profile is created (the refusal above was the profile's).
    const ok = await t.gql(
      `mutation($input: CreateCallBatchInput!) { createCallBatch(input: $input) { batch { id } } }`,
      { input: { ...gqlInput(), complianceProfiles: ['us_states'] } },
      byDefault.apiKey,
    );
    expect(ok.body.errors, JSON.stringify(ok.body.errors)).toBeUndefined();
  });
});

describe("a state's frequency limit", () => {
  it('Florida: a fourth call to one number within 24 hours waits until the first leaves the period', async () => {
    setClock('2026-01-15T15:00:00.000Z');
    const states = await t.seedAccount({ limits: { maxConcurrentCalls: 100 }, complianceProfiles: ['us_states'] });
    const first = await create(states, ['+13055550191', '+13055550191']);
    await drain();
    setClock('2026-01-15T16:00:00.000Z');
    const second = await create(states, ['+13055550191', '+13055550191']);
    await drain();
    const waiting = (await calls(second)).find((c) => c.status !== 'completed')!;
    expect([waiting.status, waiting.waitReason, waiting.attempts, waiting.nextAttemptAt?.toISOString()]).toEqual([
      'queued',
      'frequency_cap',
      0,
      '2026-01-16T15:00:00.000Z',
    ]);
    expect((await dialTimes(first)).length + (await dialTimes(second)).length).toBe(3);
    const gql = await t.gql(`query($id: ID!) { call(id: $id) { waitReason } }`, { id: waiting.id }, states.apiKey);
    expect(gql.body.data.call.waitReason).toBe('FREQUENCY_CAP');
    setClock('2026-01-16T15:00:00.000Z');
    await drain();
    expect((await calls(second)).map((c) => c.status)).toEqual(['completed', 'completed']);
    await expectConsistentBatch(t.deps, second);
  });
});

function gqlInput() {
  return {
    agentId: byDefault.agent.id,
    versionId: byDefault.version.id,
    interruption: false,
    useAlternateNumber: false,
    startMode: 'immediate',
    scheduleDate: '2026-01-15',
    scheduleTime: '09:00',
    scheduleTimezone: 'America/New_York',
    contacts: [{ contactId: 'g1', phoneNumber: '+12125550192' }],
  };
}
