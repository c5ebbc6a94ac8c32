// Caller-ID pools and local presence (docs/campaigns.md) through the worker and the simulator: a
// pool with per-number daily caps, a few hundred calls over several area codes, each call's
// from_number chosen by the rule (same area code, else same state, else the default), no number
// past its cap (with two workers at once), calls no number may dial waiting for the next UTC day,
// a batch with its own DID dialling only from it, and from_number on REST, GraphQL and the CSV.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { batchBody, CALL_BATCHES } from '../helpers/batch-requests.ts';
import { expectConsistentBatch, testWorker } from '../helpers/dispatch.ts';
import { parseCsv } from '../../src/csv/csv.ts';
import { localityOf } from '../../src/domain/caller-id.ts';

const START = new Date('2026-03-02T15:00:00.000Z');
const NEXT_DAY = new Date('2026-03-03T00:00:00.000Z');

let t: TestApp;
let a: SeededAccount;
/** number → daily cap (null: none); the seeded +14155550100 is the oldest and so far the default. */
const caps = new Map<string, number | null>();
const ids = new Map<string, string>();

const ADD = 'mutation($input: AddDidNumberInput!) { addDidNumber(input: $input) { id number areaCode region dailyCap isDefault } }';

async function addDid(number: string, dailyCap: number | null, isDefault = false) {
  const res = await t.gql(ADD, { input: { number, dailyCap, isDefault } }, a.apiKey);
  expect(res.body.errors, JSON.stringify(res.body)).toBeUndefined();
  caps.set(number, dailyCap);
  ids.set(number, res.body.data.addDidNumber.id);
  return res.body.data.addDidNumber;
}

beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount({ limits: { maxConcurrentCalls: 100, maxBatchSize: 1000 }, batchConcurrency: 100 });
  caps.set(a.did.number, null);
  ids.set(a.did.number, a.did.id);
  await addDid('+12125550001', 40);
  await addDid('+12125550002', 40);
  await addDid('+17185550001', 30);
  await addDid('+13125550001', null);
  await addDid('+13055550001', 50, true);
});
afterAll(() => t.close());
beforeEach(() => t.clock.set(START));

const phone = (areaCode: string, i: number) => `+1${areaCode}${String(2_000_000 + i).padStart(7, '0')}`;

async function create(contacts: string[], overrides: Record<string, unknown> = {}): Promise<string> {
  const res = await t.request('POST', CALL_BATCHES, {
    key: a.apiKey,
    body: batchBody(a, { contacts: contacts.map((p, i) => ({ contact_id: `c${i + 1}`, phone_number: p })), concurrency: 100, ...overrides }),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.batch_id;
}

async function calls(batchId: string) {
  return t.deps.db.prisma.call.findMany({
    where: { batchId },
    orderBy: { seq: 'asc' },
    select: { externalId: true, phoneNumber: true, fromNumber: true, status: true, waitReason: true, nextAttemptAt: true },
  });
}

async function dialsPerNumber(): Promise<Map<string, number>> {
  const rows = await t.deps.db.prisma.call.groupBy({
    by: ['fromNumber'],
    where: { accountId: a.account.id, fromNumber: { not: null } },
    _count: true,
  });
  return new Map(rows.map((r) => [r.fromNumber!, r._count]));
}

describe('caller-ID pools', () => {
  it('derives where a number is local when it is added, and refuses a bad cap with a clear message', async () => {
    const bad = await t.gql(ADD, { input: { number: '+16175550001', dailyCap: 0 } }, a.apiKey);
    expect(bad.body.errors?.[0]?.message ?? '', JSON.stringify(bad.body)).toMatch(/./);
    expect(JSON.stringify(bad.body)).toContain('dailyCap');
    const over = await t.gql(ADD, { input: { number: '+16175550001', dailyCap: 100_001 } }, a.apiKey);
    expect(JSON.stringify(over.body)).toContain('dailyCap');
    const list = await t.gql('{ didNumbers { number areaCode region dailyCap isDefault } }', {}, a.apiKey);
    expect(list.body.data.didNumbers).toContainEqual({ number: '+17185550001', areaCode: '718', region: 'US-NY', dailyCap: 30, isDefault: false });
    expect(list.body.data.didNumbers.filter((d: { isDefault: boolean }) => d.isDefault).map((d: { number: string }) => d.number)).toEqual([
      '+13055550001',
    ]);
    const missing = await t.gql('mutation { updateDidNumber(id: "did_missing", input: { dailyCap: 5 }) { id } }', {}, a.apiKey);
    expect(JSON.stringify(missing.body)).toContain('not found');
  });

  it('places each call from the best number under its cap, with two workers at once', async () => {
    // 120 in 212 (two local numbers, 40 each), 60 in 347 (NY: 718 and 212 by state), 60 in 617
    // (no local number: the default, 50), 60 in 312 (an uncapped local number).
    const contacts = [
      ...Array.from({ length: 120 }, (_, i) => phone('212', i)),
      ...Array.from({ length: 60 }, (_, i) => phone('347', i)),
      ...Array.from({ length: 60 }, (_, i) => phone('617', i)),
      ...Array.from({ length: 60 }, (_, i) => phone('312', i)),
    ];
    const id = await create(contacts);
    const workers = [testWorker(t.deps), testWorker(t.deps)];
    await Promise.all(workers.map((w) => w.drain({ timeoutMs: 60_000 })));
    const got = await calls(id);
    const used = await dialsPerNumber();
    for (const [n, c] of used) expect(c, n).toBeLessThanOrEqual(caps.get(n) ?? Infinity);
    const dialled = got.filter((c) => c.fromNumber !== null);
    for (const c of dialled) {
      const to = localityOf(c.phoneNumber);
      const from = localityOf(c.fromNumber!);
      const full = (n: string) => caps.get(n) !== null && (used.get(n) ?? 0) >= caps.get(n)!;
      // A call placed from another area code: every number of its own was at its cap by then.
      if (from.areaCode !== to.areaCode)
        for (const n of caps.keys()) if (localityOf(n).areaCode === to.areaCode) expect(full(n), `${c.phoneNumber} from ${c.fromNumber}`).toBe(true);
      if (from.region !== to.region)
        for (const n of caps.keys()) if (localityOf(n).region === to.region) expect(full(n), `${c.phoneNumber} from ${c.fromNumber}`).toBe(true);
    }
    // Demand passes every capped number's cap: each is used up, none passed.
    for (const n of ['+12125550001', '+12125550002', '+17185550001', '+13055550001']) expect(used.get(n), n).toBe(caps.get(n));
    // The rest from the two uncapped numbers: 312's own 60 calls, and those with no number of their
    // own left spread over both (least dialled first).
    expect(dialled).toHaveLength(300);
    expect(used.get('+13125550001')! + used.get(a.did.number)!).toBe(300 - 40 - 40 - 30 - 50);
    expect(used.get('+13125550001')).toBeGreaterThanOrEqual(60);
    expect(got.filter((c) => c.phoneNumber.startsWith('+1312')).every((c) => c.fromNumber === '+13125550001')).toBe(true);
    await expectConsistentBatch(t.deps, id);
  });

  it('a batch with its own DID dials only from it; past its cap its calls wait (caller_id_cap) until the next UTC day', async () => {
    const did = ids.get('+17185550001')!;
    // 718's cap (30) was used up by the test before: nothing dials today.
    const id = await create(
      Array.from({ length: 5 }, (_, i) => phone('917', i)),
      { did_number_id: did },
    );
    await testWorker(t.deps).drain();
    const waiting = await calls(id);
    expect(waiting.map((c) => [c.status, c.waitReason, c.fromNumber, c.nextAttemptAt?.toISOString()])).toEqual(
      waiting.map(() => ['queued', 'caller_id_cap', null, NEXT_DAY.toISOString()]),
    );
    const rest = await t.request('GET', `${CALL_BATCHES}/${id}/calls`, { key: a.apiKey });
    expect(rest.body.data.items[0].from_number).toBeNull();
    t.clock.set(new Date(NEXT_DAY.getTime() + 60_000));
    await testWorker(t.deps).drain();
    const done = await calls(id);
    // Dialled (the simulator's outcomes vary by number): ended, from the batch's own number.
    expect(done.map((c) => [['pending', 'queued'].includes(c.status), c.fromNumber])).toEqual(done.map(() => [false, '+17185550001']));
    await expectConsistentBatch(t.deps, id);

    // The record shows it: REST results, GraphQL, and the CSV column.
    const results = await t.request('GET', `${CALL_BATCHES}/${id}/results`, { key: a.apiKey });
    expect(results.body.data.items.map((c: { from_number: string }) => c.from_number)).toEqual(done.map(() => '+17185550001'));
    const gql = await t.gql('query($id: ID!) { calls(batchId: $id) { items { externalId fromNumber } } }', { id }, a.apiKey);
    expect(gql.body.data.calls.items[0]).toEqual({ externalId: 'c1', fromNumber: '+17185550001' });
    const csv = await t.app.fetch(
      new Request(`http://test.local${CALL_BATCHES}/${id}/results.csv`, { headers: { authorization: `Bearer ${a.apiKey}` } }),
    );
    const [header, ...rows] = parseCsv(await csv.text());
    const col = header.cells.indexOf('from_number');
    expect(col).toBeGreaterThan(-1);
    expect(rows.map((r) => r.cells[col])).toEqual(done.map(() => '+17185550001'));
  });

  it('a cap can be changed; the default moves with isDefault', async () => {
    const res = await t.gql(
      'mutation($id: ID!) { updateDidNumber(id: $id, input: { dailyCap: null, isDefault: true }) { number dailyCap isDefault } }',
      { id: ids.get('+17185550001') },
      a.apiKey,
    );
    expect(res.body.data.updateDidNumber).toEqual({ number: '+17185550001', dailyCap: null, isDefault: true });
    const list = await t.gql('{ didNumbers { number isDefault } }', {}, a.apiKey);
    expect(list.body.data.didNumbers.filter((d: { isDefault: boolean }) => d.isDefault).map((d: { number: string }) => d.number)).toEqual([
      '+17185550001',
    ]);
  });

  it("another account's key cannot change or read the account's numbers", async () => {
    const stranger = await t.seedAccount();
    const id = ids.get('+17185550001');
    const res = await t.gql('mutation($id: ID!) { updateDidNumber(id: $id, input: { dailyCap: 1 }) { dailyCap } }', { id }, stranger.apiKey);
    expect(res.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect((await t.deps.db.prisma.didNumber.findUniqueOrThrow({ where: { id } })).dailyCap).toBe(null);
    const list = await t.gql('{ didNumbers { id } }', {}, stranger.apiKey);
    expect(list.body.data.didNumbers.map((d: { id: string }) => d.id)).toEqual([stranger.did.id]);
  });

  it('the alternate number is dialled from a number chosen again for it, its own area code', async () => {
    const day = async () =>
      new Map(
        (await t.deps.db.prisma.didDailyDial.findMany({ where: { day: new Date('2026-03-02T00:00:00.000Z') } })).map((r) => [r.didId, r.dials]),
      );
    const before = await day();
    const id = await create([], {
      use_alternate_number: true,
      contacts: [{ contact_id: 'alt1', phone_number: phone('646', 1), metadata: { sim: 'no_answer,completed', alternate_phone: phone('312', 900) } }],
    });
    await testWorker(t.deps).drain();
    const [call] = await t.deps.db.prisma.call.findMany({
      where: { batchId: id },
      select: { usedAlternate: true, fromNumber: true, attempts: true },
    });
    expect(call).toEqual({ usedAlternate: true, fromNumber: '+13125550001', attempts: 2 });
    // The primary (a New York number, New York City's 212 numbers capped today) went out from New
    // York's 718 (uncapped by the test before); the alternate from Chicago's own number.
    const after = await day();
    const grew = [...after].filter(([did, n]) => n !== (before.get(did) ?? 0)).map(([did, n]) => [did, n - (before.get(did) ?? 0)] as const);
    expect(new Map(grew)).toEqual(
      new Map([
        [ids.get('+17185550001')!, 1],
        [ids.get('+13125550001')!, 1],
      ]),
    );
  });
});
