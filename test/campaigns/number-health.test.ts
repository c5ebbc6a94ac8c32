// Number health (docs/campaigns.md "Number health") with the simulator: each ended attempt counts
// for the caller-ID number it was dialled from, the job rests a number whose answer rate falls below
// threshold × the pool's median (webhook to the account's live callback URLs, metric), brings it back
// after the rest on the test clock, and GraphQL shows each account its own numbers' health only.
// Nothing sleeps: the worker drains what is due, the job is run directly and the test clock moves.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { batchBody, CALL_BATCHES, validPhone } from '../helpers/batch-requests.ts';
import { testWorker } from '../helpers/dispatch.ts';
import { runNumberHealth } from '../../src/services/number-health/run-health.ts';
import { applyCallWrites } from '../../src/services/calls/call-transitions.ts';

const START = new Date('2026-03-02T15:00:00.000Z');
const DAY = '2026-03-02';
const HOOK = 'https://hooks.example.com/number-health';

let t: TestApp;
let a: SeededAccount;
let other: SeededAccount;
let dids: { id: string; number: string }[];

beforeAll(async () => {
  t = await createTestApp({
    config: { NUMBER_HEALTH_MIN_DIALS: '5', NUMBER_HEALTH_THRESHOLD: '0.5', NUMBER_HEALTH_REST_HOURS: '24', NUMBER_HEALTH_EVERY_MS: '0' },
  });
  a = await t.seedAccount({ limits: { maxConcurrentCalls: 100 } });
  other = await t.seedAccount({ limits: { maxConcurrentCalls: 100 } });
  dids = [a.did];
  for (const number of ['+12125550101', '+13125550102']) {
    const added = await t.gql('mutation($n: String!) { addDidNumber(input: { number: $n }) { id number } }', { n: number }, a.apiKey);
    dids.push(added.body.data.addDidNumber);
  }
  // Number health's webhooks are opt-in (accounts.number_health_webhooks); `a` opts in, `d` below does not.
  const optIn = await t.gql(
    'mutation($id: ID!) { adminUpdateAccount(id: $id, input: { numberHealthWebhooks: true }) { numberHealthWebhooks } }',
    { id: a.account.id },
    ADMIN_TOKEN,
  );
  expect(optIn.body.data.adminUpdateAccount.numberHealthWebhooks).toBe(true);
  t.clock.set(START);
});
afterAll(() => t.close());
beforeEach(() => t.clock.set(t.clock.now()));

async function create(didId: string, sims: string[], offset: number, overrides: Record<string, unknown> = {}): Promise<string> {
  const res = await t.request('POST', CALL_BATCHES, {
    key: a.apiKey,
    body: batchBody(a, {
      did_number_id: didId,
      contacts: sims.map((sim, i) => ({ contact_id: `c${i + 1}`, phone_number: validPhone(offset + i), metadata: { sim } })),
      ...overrides,
    }),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.batch_id;
}

/** Chicago numbers: local presence picks the pool's 312 number (dids[2]) for them while it is available. */
const chicago = (i: number) => `+1312555${String(2000 + i).padStart(4, '0')}`;

/** A pool batch (no did_number_id) to Chicago numbers; the caller IDs its calls were dialled from. */
async function poolBatchFroms(n: number, offset: number): Promise<string[]> {
  const res = await t.request('POST', CALL_BATCHES, {
    key: a.apiKey,
    body: batchBody(a, {
      did_number_id: undefined,
      contacts: Array.from({ length: n }, (_, i) => ({ contact_id: `p${i + 1}`, phone_number: chicago(offset + i), metadata: { sim: 'completed' } })),
    }),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  await testWorker(t.deps).drain();
  const calls = await t.deps.db.prisma.call.findMany({ where: { batchId: res.body.data.batch_id }, orderBy: { seq: 'asc' } });
  expect(calls.map((c) => c.status)).toEqual(Array(n).fill('completed'));
  return calls.map((c) => c.fromNumber!);
}

const stats = () =>
  t.deps.db.prisma.didDailyStat
    .findMany({ orderBy: { didId: 'asc' } })
    .then((rows) => Object.fromEntries(rows.map((r) => [r.didId, [r.day.toISOString().slice(0, 10), r.dials, r.answered, r.shortCalls]])));
const deliveries = (type: string) => t.deps.db.prisma.webhookDelivery.findMany({ where: { eventType: type }, orderBy: { createdAt: 'asc' } });
const restingGauge = async () => (await t.deps.metrics.registry.getSingleMetric('callbatch_dids_rested')!.get()).values[0]?.value;
const restedCount = async (reason: string) => (await t.deps.metrics.didRested.get()).values.find((v) => v.labels.reason === reason)?.value ?? 0;

const HEALTH =
  'query { didNumbers { id number health { dials answered shortCalls answerRate shortCallRate restedUntil restReason flagged days { day dials answered shortCalls } } } }';

describe('number health', () => {
  it('counts each ended attempt for the number it was dialled from, in the write that ends it', async () => {
    await create(dids[0].id, Array(6).fill('completed'), 0);
    await create(dids[1].id, ['completed', 'completed', 'completed', 'completed', 'completed', 'no_answer'], 100);
    await create(dids[2].id, Array(6).fill('no_answer'), 200);
    await testWorker(t.deps).drain();
    // The simulator talks for 0 s (SIM_CALL_MS 0): every answered call is short.
    expect(await stats()).toEqual({
      [dids[0].id]: [DAY, 6, 6, 6],
      [dids[1].id]: [DAY, 6, 5, 5],
      [dids[2].id]: [DAY, 6, 0, 0],
    });
  });

  it('a write that does not apply (the lease is another worker’s) adds nothing', async () => {
    const call = await t.deps.db.prisma.call.findFirstOrThrow({ where: { accountId: a.account.id } });
    const before = await stats();
    const result = await applyCallWrites(
      t.deps,
      [
        {
          callId: call.id,
          batchId: call.batchId,
          accountId: call.accountId,
          owner: 'a-worker-that-lost-it',
          from: 'ringing',
          to: 'no_answer',
          events: [],
          set: {},
          didStats: [{ fromNumber: dids[0].number, day: DAY, answered: false, short: false }],
        },
      ],
      t.clock.now(),
    );
    expect(result.applied.size).toBe(0);
    expect(await stats()).toEqual(before);
  });

  it('rests the number below threshold × the pool median: webhook to the live callback URL, metric, once', async () => {
    const alerts = await create(dids[0].id, ['completed'], 300, { start_mode: 'manual', callback_url: HOOK });
    const restedBefore = await restedCount('low_answer_rate');
    const run = await runNumberHealth(t.deps);
    expect(run).toMatchObject({ rested: 1, restored: 0, webhooks: 1 });
    const did = await t.deps.db.prisma.didNumber.findUniqueOrThrow({ where: { id: dids[2].id } });
    expect(did.restedUntil).toEqual(new Date(START.getTime() + 24 * 3_600_000));
    expect(did.restReason).toBe('low_answer_rate');
    const [d] = await deliveries('number.rested');
    expect(d).toMatchObject({ batchId: alerts, url: HOOK, accountId: a.account.id });
    expect((d.payload as { data: unknown }).data).toEqual({
      number: { id: dids[2].id, number: dids[2].number, area_code: '312', region: 'US-IL' },
      reason: 'low_answer_rate',
      rested_until: '2026-03-03T15:00:00.000Z',
      dials: 6,
      answer_rate: 0,
      short_call_rate: null,
      // The median of 1, 5/6 and 0, to four places.
      pool_median_answer_rate: 0.8333,
    });
    expect(await restedCount('low_answer_rate')).toBe(restedBefore + 1);
    expect(await restingGauge()).toBe(1);
    // A second run changes nothing and announces nothing.
    expect(await runNumberHealth(t.deps)).toMatchObject({ rested: 0, restored: 0 });
    expect(await deliveries('number.rested')).toHaveLength(1);
  });

  it('the chooser dials nothing from a rested number: calls local to it go out from the others', async () => {
    const froms = await poolBatchFroms(4, 0);
    expect(
      froms.every((f) => f !== dids[2].number && dids.some((d) => d.number === f)),
      froms.join(),
    ).toBe(true);
  });

  it('GraphQL shows each number its health, to its own account only', async () => {
    const own = await t.gql(HEALTH, {}, a.apiKey);
    expect(own.body.errors).toBeUndefined();
    const byId = new Map(own.body.data.didNumbers.map((n: { id: string }) => [n.id, n]));
    expect(byId.get(dids[2].id)).toMatchObject({
      health: { dials: 6, answered: 0, answerRate: 0, restedUntil: '2026-03-03T15:00:00.000Z', restReason: 'low_answer_rate', flagged: false },
    });
    expect(byId.get(dids[1].id)).toMatchObject({
      health: {
        dials: 6,
        answered: 5,
        shortCalls: 5,
        shortCallRate: 1,
        restedUntil: null,
        days: [{ day: DAY, dials: 6, answered: 5, shortCalls: 5 }],
      },
    });
    // The operator reads an account's numbers with the admin token acting as it (the CLI's --account).
    const asAdmin = await t.request('POST', '/graphql', { key: ADMIN_TOKEN, body: { query: HEALTH }, headers: { 'x-act-as-account': a.account.id } });
    expect(asAdmin.body.data.didNumbers).toEqual(own.body.data.didNumbers);
    const theirs = await t.gql(HEALTH, {}, other.apiKey);
    expect(theirs.body.data.didNumbers.map((n: { id: string }) => n.id)).toEqual([other.did.id]);
    expect(theirs.body.data.didNumbers[0].health).toMatchObject({ dials: 0, answerRate: null, days: [] });
  });

  it('brings the number back after its rest, judged afresh from the day after its rest began', async () => {
    t.clock.set(new Date(START.getTime() + 24 * 3_600_000 - 1000));
    expect(await runNumberHealth(t.deps)).toMatchObject({ restored: 0 });
    t.clock.set(new Date(START.getTime() + 24 * 3_600_000 + 1000));
    expect(await runNumberHealth(t.deps)).toMatchObject({ restored: 1, rested: 0 });
    const did = await t.deps.db.prisma.didNumber.findUniqueOrThrow({ where: { id: dids[2].id } });
    expect([did.restedUntil, did.restReason, did.judgedFrom?.toISOString().slice(0, 10)]).toEqual([null, null, '2026-03-03']);
    expect(await restingGauge()).toBe(0);
    const [d] = await deliveries('number.restored');
    expect((d.payload as { data: { number: { id: string } } }).data.number.id).toBe(dids[2].id);
    // Available again: local presence picks it for its own area code.
    expect(await poolBatchFroms(2, 100)).toEqual([dids[2].number, dids[2].number]);
  });

  it('a flag from the operator rests a number whatever its rate; tenants cannot flag', async () => {
    const q = 'mutation($id: ID!, $f: Boolean!, $r: String) { adminFlagDidNumber(id: $id, flagged: $f, reason: $r) { id health { flagged } } }';
    const denied = await t.gql(q, { id: dids[0].id, f: true }, a.apiKey);
    expect(denied.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const tooLong = await t.gql(q, { id: dids[0].id, f: true, r: 'x'.repeat(201) }, ADMIN_TOKEN);
    expect(tooLong.body.errors?.[0]?.extensions?.code).toBe('UNPROCESSABLE');
    const ok = await t.gql(q, { id: dids[0].id, f: true, r: 'carrier reported spam label' }, ADMIN_TOKEN);
    expect(ok.body.errors).toBeUndefined();
    expect(ok.body.data.adminFlagDidNumber.health.flagged).toBe(true);
    const flaggedBefore = await restedCount('flagged');
    expect(await runNumberHealth(t.deps)).toMatchObject({ rested: 1 });
    expect(await restedCount('flagged')).toBe(flaggedBefore + 1);
    expect((await deliveries('number.rested')).at(-1)?.payload).toMatchObject({ data: { number: { id: dids[0].id }, reason: 'flagged' } });
    // Cleared: the flag's rest ends at once and the next run announces the number back.
    await t.gql(q, { id: dids[0].id, f: false }, ADMIN_TOKEN);
    expect(await runNumberHealth(t.deps)).toMatchObject({ restored: 1 });
  });

  it("an attempt counts for its own dial's caller ID: the alternate number's new choice does not take the first dial's count", async () => {
    const c = await t.seedAccount({ limits: { maxConcurrentCalls: 100 } });
    const add = async (n: string) =>
      (await t.gql('mutation($n: String!) { addDidNumber(input: { number: $n }) { id } }', { n }, c.apiKey)).body.data.addDidNumber.id as string;
    const chicagoDid = await add('+13125550201');
    const newYorkDid = await add('+12125550202');
    const res = await t.request('POST', CALL_BATCHES, {
      key: c.apiKey,
      body: batchBody(c, {
        use_alternate_number: true,
        contacts: [{ contact_id: 'x1', phone_number: chicago(500), metadata: { sim: 'no_answer,completed', alternate_phone: '+12125553001' } }],
      }),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    await testWorker(t.deps).drain();
    const call = await t.deps.db.prisma.call.findFirstOrThrow({ where: { batchId: res.body.data.batch_id } });
    expect([call.status, call.attempts, call.fromNumber]).toEqual(['completed', 2, '+12125550202']);
    const all = await stats();
    expect([all[chicagoDid]?.slice(1), all[newYorkDid]?.slice(1), all[c.did.id]]).toEqual([[1, 0, 0], [1, 1, 1], undefined]);
  });

  it.each([true, false])('two runs at once (two worker processes) rest a number once; announced once only if opted in (%s)', async (optedIn) => {
    const d = await t.seedAccount({ limits: { maxConcurrentCalls: 100 } });
    if (optedIn) await t.deps.db.prisma.account.update({ where: { id: d.account.id }, data: { numberHealthWebhooks: true } });
    const ids = [d.did.id];
    for (const n of ['+12125550301', '+13125550302'])
      ids.push((await t.gql('mutation($n: String!) { addDidNumber(input: { number: $n }) { id } }', { n }, d.apiKey)).body.data.addDidNumber.id);
    const day = t.clock.now().toISOString().slice(0, 10);
    await t.deps.db.prisma.didDailyStat.createMany({
      data: ids.map((didId, i) => ({ didId, day: new Date(`${day}T00:00:00Z`), dials: 40, answered: i === 2 ? 1 : 20, shortCalls: 0 })),
    });
    const hook = await t.request('POST', CALL_BATCHES, { key: d.apiKey, body: batchBody(d, { start_mode: 'manual', callback_url: HOOK }) });
    expect(hook.status).toBe(201);
    const runs = await Promise.all([runNumberHealth(t.deps), runNumberHealth(t.deps), runNumberHealth(t.deps)]);
    expect(runs.reduce((n, r) => n + r.rested, 0)).toBe(1);
    expect((await t.deps.db.prisma.didNumber.findUniqueOrThrow({ where: { id: ids[2] } })).restReason).toBe('low_answer_rate');
    if (optedIn) {
      const events = await t.deps.db.prisma.webhookDelivery.findMany({ where: { eventType: 'number.rested', accountId: d.account.id } });
      expect(events.map((e) => (e.payload as { data: { number: { id: string } } }).data.number.id)).toEqual([ids[2]]);
    } else {
      expect(runs.reduce((n, r) => n + r.webhooks, 0)).toBe(0);
      expect(await t.deps.db.prisma.webhookDelivery.count({ where: { eventType: 'number.rested', accountId: d.account.id } })).toBe(0);
    }
  });
});
