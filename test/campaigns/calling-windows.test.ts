// Calling windows on a controllable clock: batches created through REST (and an account's default
// and enforced windows set through GraphQL), dialled by the worker with the simulator. Nothing
// sleeps: the test clock moves, and the worker drains what is due.
import { IANAZone } from 'luxon';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { ADMIN_TOKEN, createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { asCreateRequest, batchBody, CALL_BATCHES } from '../helpers/batch-requests.ts';
import { callEvents, expectConsistentBatch, manualSimulator, testWorker } from '../helpers/dispatch.ts';
import { resetWindows } from '../../src/dispatch/store/reset-windows.ts';
import { createBatch } from '../../src/services/batches/create-batch.ts';
import { NO_ZONE_MESSAGE } from '../../src/domain/call-windows.ts';

// Friday 2026-03-06 13:30Z: 08:30 in New York (EST), 05:30 in Los Angeles, 13:30 in London.
const FRIDAY = new Date('2026-03-06T13:30:00.000Z');
const NY = '+12125550100';
const LA = '+13105550100';
const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri'];

let t: TestApp;
let a: SeededAccount;

beforeAll(async () => {
  t = await createTestApp({ config: { RETRY_MIN_DELAY_SECONDS: '1' } });
  a = await t.seedAccount({ limits: { maxConcurrentCalls: 100 } });
});
afterAll(() => t.close());
beforeEach(() => t.clock.set(FRIDAY));

interface Contact {
  phone: string;
  sim?: string;
  timezone?: string;
}

async function create(account: SeededAccount, contacts: Contact[], overrides: Record<string, unknown> = {}) {
  const res = await t.request('POST', CALL_BATCHES, {
    key: account.apiKey,
    body: batchBody(account, {
      contacts: contacts.map((c, i) => ({
        contact_id: `c${i + 1}`,
        phone_number: c.phone.replace(/00$/, String(i).padStart(2, '0')),
        metadata: { sim: c.sim ?? 'completed' },
        ...(c.timezone ? { timezone: c.timezone } : {}),
      })),
      ...overrides,
    }),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data as { batch_id: string; accepted_contacts: number; validation_errors: any[] };
}

const calls = (batchId: string) => t.deps.db.prisma.call.findMany({ where: { batchId }, orderBy: { seq: 'asc' } });
const drain = () => testWorker(t.deps).drain();
const setClock = (iso: string) => t.clock.set(new Date(iso));
const dialled = async (batchId: string) => (await calls(batchId)).map((c) => c.attempts);

describe("calling window in the recipient's zone", () => {
  it('places each call only while the window is open where its contact is', async () => {
    const window = { start: '09:00', end: '20:00', days: WEEKDAYS, timezone: 'recipient' };
    const created = await create(a, [{ phone: NY }, { phone: LA }, { phone: NY, timezone: 'Europe/London' }, { phone: '+18005550100' }], {
      calling_window: window,
    });
    // A toll-free number says nothing about where its person is: no zone, a timezone is needed.
    expect(created.accepted_contacts).toBe(3);
    expect(created.validation_errors).toEqual([{ index: 4, external_id: 'c4', field: 'phone_number', message: NO_ZONE_MESSAGE }]);
    const id = created.batch_id;

    // A contact's own zone narrows its number's zones: 09:00 in New York and in London.
    let rows = await calls(id);
    expect(rows.map((r) => [r.timezone, r.nextAttemptAt?.toISOString() ?? null])).toEqual([
      ['America/New_York', '2026-03-06T14:00:00.000Z'],
      ['America/Los_Angeles', '2026-03-06T17:00:00.000Z'],
      ['America/New_York,Europe/London', '2026-03-06T14:00:00.000Z'],
    ]);

    await drain();
    expect(await dialled(id)).toEqual([0, 0, 0]);

    // The records show the wait: pending, next_attempt_at, the zone; the batch its window.
    const page = await t.request('GET', `${CALL_BATCHES}/${id}/calls`, { key: a.apiKey });
    expect(page.body.data.items.map((c: any) => [c.status, c.next_attempt_at, c.timezone])).toEqual([
      ['pending', '2026-03-06T14:00:00.000Z', 'America/New_York'],
      ['pending', '2026-03-06T17:00:00.000Z', 'America/Los_Angeles'],
      ['pending', '2026-03-06T14:00:00.000Z', 'America/New_York,Europe/London'],
    ]);
    const details = await t.request('GET', `${CALL_BATCHES}/${id}`, { key: a.apiKey });
    expect(details.body.data).toMatchObject({ calling_window: window, queued: 3, completed: 0 });

    setClock('2026-03-06T13:59:59.000Z');
    await drain();
    expect(await dialled(id)).toEqual([0, 0, 0]);
    setClock('2026-03-06T14:00:00.000Z');
    await drain();
    expect(await dialled(id)).toEqual([1, 0, 1]);
    setClock('2026-03-06T17:00:00.000Z');
    await drain();
    rows = await calls(id);
    expect(rows.map((r) => [r.status, r.attempts])).toEqual([
      ['completed', 1],
      ['completed', 1],
      ['completed', 1],
    ]);
    const dials = (await callEvents(t.deps, id)).filter((e) => e.detail?.event === 'dial').map((e) => e.at.toISOString());
    expect(dials.sort()).toEqual(['2026-03-06T14:00:00.000Z', '2026-03-06T14:00:00.000Z', '2026-03-06T17:00:00.000Z']);
    const { batch } = await expectConsistentBatch(t.deps, id);
    expect(batch.status).toBe('completed');
  });

  it('moves calls whose window closed undialled to the next opening, over a weekend and a DST change', async () => {
    // Created Friday in the window, started after it closed (20:30 EST = 01:30Z Saturday).
    const { batch_id: id } = await create(a, [{ phone: NY }, { phone: NY }], {
      start_mode: 'manual',
      calling_window: { start: '09:00', end: '20:00', days: WEEKDAYS },
    });
    setClock('2026-03-07T01:30:00.000Z');
    expect((await t.request('POST', `${CALL_BATCHES}/${id}/start`, { key: a.apiKey })).status).toBe(200);
    await drain();
    // Monday 09:00 EDT: the clocks went forward on Sunday.
    expect((await calls(id)).map((r) => [r.status, r.attempts, r.nextAttemptAt?.toISOString()])).toEqual([
      ['pending', 0, '2026-03-09T13:00:00.000Z'],
      ['pending', 0, '2026-03-09T13:00:00.000Z'],
    ]);
    await expectConsistentBatch(t.deps, id);
    setClock('2026-03-09T12:59:00.000Z');
    await drain();
    expect(await dialled(id)).toEqual([0, 0]);
    setClock('2026-03-09T13:00:00.000Z');
    await drain();
    expect((await calls(id)).map((r) => r.status)).toEqual(['completed', 'completed']);
  });

  it('puts a retry at the next opening after its delay', async () => {
    // 19:30 EST Friday: the retry is due at 20:30, after the window closes.
    setClock('2026-03-07T00:30:00.000Z');
    const { batch_id: id } = await create(a, [{ phone: NY, sim: 'no_answer,completed' }], {
      calling_window: { start: '09:00', end: '20:00', days: WEEKDAYS },
      retry: { max_attempts: 2, delay_seconds: 3600 },
    });
    await drain();
    const [waiting] = await calls(id);
    expect([waiting.status, waiting.attempts, waiting.nextAttemptAt?.toISOString()]).toEqual(['queued', 1, '2026-03-09T13:00:00.000Z']);
    const gql = await t.gql(`query($id: ID!) { call(id: $id) { status nextAttemptAt timezone retryReason } }`, { id: waiting.id }, a.apiKey);
    expect(gql.body.data.call).toEqual({
      status: 'queued',
      nextAttemptAt: '2026-03-09T13:00:00.000Z',
      timezone: 'America/New_York',
      retryReason: 'no_answer',
    });
    setClock('2026-03-09T13:00:00.000Z');
    await drain();
    expect((await calls(id)).map((r) => [r.status, r.attempts])).toEqual([['completed', 2]]);
  });
});

describe('account windows', () => {
  it('gives a batch without a window the default, and narrows every batch to the enforced window', async () => {
    const b = await t.seedAccount({ limits: { maxConcurrentCalls: 100 } });
    const set = await t.gql(
      `mutation($id: ID!, $input: AdminUpdateAccountInput!) { adminUpdateAccount(id: $id, input: $input) {
         defaultCallingWindow { start end days timezone } enforcedCallingWindow { start end days timezone } } }`,
      {
        id: b.account.id,
        input: {
          defaultCallingWindow: { start: '08:00', end: '20:00', timezone: 'America/New_York' },
          enforcedCallingWindow: { start: '10:00', end: '21:00', days: WEEKDAYS },
        },
      },
      ADMIN_TOKEN,
    );
    expect(set.body.errors).toBeUndefined();
    expect(set.body.data.adminUpdateAccount.enforcedCallingWindow).toEqual({ start: '10:00', end: '21:00', days: WEEKDAYS, timezone: 'recipient' });

    // 09:30 in New York: the default window is open, the enforced one not until 10:00.
    setClock('2026-03-06T14:30:00.000Z');
    const { batch_id: id } = await create(b, [{ phone: NY }]);
    const q = await t.gql(
      `query($id: ID!) { batch(id: $id) { callingWindow { start end timezone } enforcedCallingWindow { start end timezone } } }`,
      { id },
      b.apiKey,
    );
    expect(q.body.data.batch).toEqual({
      callingWindow: { start: '08:00', end: '20:00', timezone: 'America/New_York' },
      enforcedCallingWindow: { start: '10:00', end: '21:00', timezone: 'recipient' },
    });
    await drain();
    expect(await dialled(id)).toEqual([0]);
    expect((await calls(id))[0].nextAttemptAt?.toISOString()).toBe('2026-03-06T15:00:00.000Z');
    setClock('2026-03-06T15:00:00.000Z');
    await drain();
    expect(await dialled(id)).toEqual([1]);

    // A batch's own window is narrowed too: 09:00-12:00 and 10:00-21:00 meet from 10:00 to 12:00.
    const own = await create(b, [{ phone: NY }], { calling_window: { start: '09:00', end: '12:00' } });
    const [row] = await calls(own.batch_id);
    expect(row.windowClosesAt?.toISOString()).toBe('2026-03-06T17:00:00.000Z');

    const cleared = await t.gql(
      `mutation($id: ID!) { adminUpdateAccount(id: $id, input: { defaultCallingWindow: null, enforcedCallingWindow: null }) { defaultCallingWindow { start } enforcedCallingWindow { start } } }`,
      { id: b.account.id },
      ADMIN_TOKEN,
    );
    expect(cleared.body.data.adminUpdateAccount).toEqual({ defaultCallingWindow: null, enforcedCallingWindow: null });
    const bad = await t.gql(
      `mutation($id: ID!) { adminUpdateAccount(id: $id, input: { enforcedCallingWindow: { start: "21:00", end: "08:00" } }) { id } }`,
      { id: b.account.id },
      ADMIN_TOKEN,
    );
    expect(JSON.stringify(bad.body.errors[0])).toContain('enforcedCallingWindow.end: Value error, end must be after start');
  });
});

type WindowResetTurn = [replaced: number, finished: number];

describe('an enforced window set while batches run', () => {
  const enforce = async (account: SeededAccount, window: Record<string, unknown> | null) => {
    const r = await t.gql(
      `mutation($id: ID!, $w: CallingWindowInput) { adminUpdateAccount(id: $id, input: { enforcedCallingWindow: $w }) { id } }`,
      { id: account.account.id, w: window },
      ADMIN_TOKEN,
    );
    expect(r.body.errors).toBeUndefined();
  };
  const batchRow = (id: string) => t.deps.db.prisma.batch.findUniqueOrThrow({ where: { id } });
  const placement = async (id: string) =>
    (await calls(id)).map((r) => [r.status, r.attempts, r.timezone, r.nextAttemptAt?.toISOString() ?? null, r.disconnectReason]);

  it('reaches a batch created without a window: its calls wait for the window in their own zones', async () => {
    const b = await t.seedAccount({ limits: { maxConcurrentCalls: 100 } });
    // 08:30 in New York: a plain batch would dial both at once.
    const { batch_id: id } = await create(b, [{ phone: NY }, { phone: '+18005550100' }, { phone: LA }], { start_mode: 'manual' });
    await enforce(b, { start: '09:00', end: '20:00', days: WEEKDAYS });
    expect((await batchRow(id)).enforcedWindow).toEqual({ start: '09:00', end: '20:00', days: WEEKDAYS, timezone: 'recipient' });
    expect((await t.request('POST', `${CALL_BATCHES}/${id}/start`, { key: b.apiKey })).status).toBe(200);
    await drain();
    // The toll-free number has no zone of its own: it ends instead of waiting forever.
    expect(await placement(id)).toEqual([
      ['pending', 0, 'America/New_York', '2026-03-06T14:00:00.000Z', null],
      ['cancelled', 0, null, null, 'no_calling_window'],
      ['pending', 0, 'America/Los_Angeles', '2026-03-06T17:00:00.000Z', null],
    ]);
    expect((await batchRow(id)).windowResetCursor).toBeNull();
    setClock('2026-03-06T14:00:00.000Z');
    await drain();
    expect(await dialled(id)).toEqual([1, 0, 0]);
    expect((await batchRow(id)).status).toBe('running'); // LA waits
    setClock('2026-03-06T17:00:00.000Z');
    await drain();
    expect((await expectConsistentBatch(t.deps, id)).batch).toMatchObject({ status: 'completed', completed: 2, cancelled: 1 });
  });

  it("narrows a running batch's window once its calls in flight have ended", async () => {
    const b = await t.seedAccount({ limits: { maxConcurrentCalls: 100 } });
    // 09:30 in New York: the batch's window is open, the first call is dialled at once.
    setClock('2026-03-06T14:30:00.000Z');
    const { batch_id: id } = await create(b, [{ phone: NY }, { phone: NY }], {
      calling_window: { start: '09:00', end: '20:00', days: WEEKDAYS },
    });
    const sim = manualSimulator(t.clock, { callMs: 60_000 });
    // One call per claim: the second would be claimed by the next one but for the change.
    const worker = testWorker(t.deps, { providers: sim.registry, claimBatchSize: 1 });
    await worker.runOnce();
    await sim.dialled(1);
    await enforce(b, { start: '12:00', end: '13:00', timezone: 'America/New_York' });

    // A call in flight records its end under the window it was placed in: nothing is re-placed
    // (or dialled) until it has ended.
    await worker.runOnce();
    expect((await batchRow(id)).windowResetCursor).toBe(0);
    expect((await calls(id))[1].windowClosesAt?.toISOString()).toBe('2026-03-07T01:00:00.000Z');
    sim.timers.advance(61_000);
    await worker.settle();
    await worker.runOnce();
    await worker.settle();
    expect((await batchRow(id)).windowResetCursor).toBeNull();
    expect(await placement(id)).toEqual([
      ['completed', 1, 'America/New_York', null, expect.any(String)],
      ['pending', 0, 'America/New_York', '2026-03-06T17:00:00.000Z', null],
    ]);
    expect((await calls(id))[1].windowClosesAt?.toISOString()).toBe('2026-03-06T18:00:00.000Z');
    await sim.provider.close();
    setClock('2026-03-06T17:00:00.000Z');
    await drain();
    const dials = (await callEvents(t.deps, id)).filter((e) => e.detail?.event === 'dial').map((e) => e.at.toISOString());
    expect(dials).toEqual(['2026-03-06T14:30:00.000Z', '2026-03-06T17:00:00.000Z']);
  });

  it('puts a retry under the new window, also in a worker that read the old one', async () => {
    const b = await t.seedAccount({ limits: { maxConcurrentCalls: 100 } });
    setClock('2026-03-06T14:00:00.000Z');
    const { batch_id: id } = await create(b, [{ phone: NY, sim: 'no_answer,no_answer,completed' }], {
      calling_window: { start: '09:00', end: '20:00', days: WEEKDAYS },
      retry: { max_attempts: 3, on: ['no_answer'], delay_seconds: 3600 },
    });
    const worker = testWorker(t.deps);
    await worker.drain();
    expect(await placement(id)).toEqual([['queued', 1, 'America/New_York', '2026-03-06T15:00:00.000Z', null]]);

    // 10:00-13:00 in New York: the retry due at 10:00 stays; the worker that read the batch's
    // 09:00-20:00 window reads it again when it next claims the batch.
    await enforce(b, { start: '10:00', end: '13:00', days: WEEKDAYS });
    await worker.drain();
    expect(await placement(id)).toEqual([['queued', 1, 'America/New_York', '2026-03-06T15:00:00.000Z', null]]);
    setClock('2026-03-06T17:30:00.000Z');
    await worker.drain();
    // Its second attempt at 12:30 is due again at 13:30, after the window: Monday 10:00 EDT.
    expect(await placement(id)).toEqual([['queued', 2, 'America/New_York', '2026-03-09T14:00:00.000Z', null]]);
  });

  it("re-places a turn's worth of calls at a time, the batches taking turns", async () => {
    const b = await t.seedAccount({ limits: { maxConcurrentCalls: 100 } });
    // Started batches (a paused one is reset when it resumes); nothing drains them here.
    const first = await create(
      b,
      Array.from({ length: 5 }, () => ({ phone: NY })),
    );
    const second = await create(
      b,
      Array.from({ length: 3 }, () => ({ phone: LA })),
    );
    await enforce(b, { start: '09:00', end: '20:00' });
    const cursors = async () => [(await batchRow(first.batch_id)).windowResetCursor, (await batchRow(second.batch_id)).windowResetCursor];
    const turns: WindowResetTurn[] = [];
    for (let i = 0; i < 6 && (await cursors()).some((c) => c !== null); i++) {
      setClock(new Date(FRIDAY.getTime() + (i + 1) * 1000).toISOString());
      const r = await resetWindows(t.deps, t.clock.now(), 3);
      turns.push([r.replaced, r.finished.length]);
    }
    // Three calls a turn: three of one batch, then three of the other (the one re-placed longer
    // ago goes first), then the last two of the first, and with the budget left the second is
    // found done.
    expect(turns).toEqual([
      [3, 0],
      [3, 0],
      [2, 2],
    ]);
    expect((await calls(first.batch_id)).map((r) => r.nextAttemptAt?.toISOString())).toEqual(Array(5).fill('2026-03-06T14:00:00.000Z'));
    expect((await calls(second.batch_id)).map((r) => r.nextAttemptAt?.toISOString())).toEqual(Array(3).fill('2026-03-06T17:00:00.000Z'));
  });

  it('reaches a batch whose create was under way when it changed', async () => {
    const b = await t.seedAccount({ limits: { maxConcurrentCalls: 100 } });
    // The request read the account without an enforced window; the change commits while its
    // calls are being written, before the batch is there for the change to reach.
    const body = batchBody(b, { contacts: [{ contact_id: 'c1', phone_number: NY }] });
    const created = await createBatch(t.deps, b.account, asCreateRequest(body), {
      insert: {
        afterChunk: async (_chunk, tx) => {
          await tx.query(`UPDATE accounts SET enforced_calling_window = $2::jsonb WHERE id = $1`, [
            b.account.id,
            JSON.stringify({ start: '09:00', end: '20:00', days: WEEKDAYS, timezone: 'recipient' }),
          ]);
        },
      },
    });
    const row = await batchRow(created.batchId);
    expect([row.windowsVersion, row.windowResetCursor, row.recipientKeys]).toEqual([1, 0, false]);
    await drain();
    expect(await placement(created.batchId)).toEqual([['pending', 0, 'America/New_York', '2026-03-06T14:00:00.000Z', null]]);
  });

  it('clearing it lets a batch that had only that window dial at once', async () => {
    const b = await t.seedAccount({ limits: { maxConcurrentCalls: 100 } });
    await enforce(b, { start: '10:00', end: '21:00', days: WEEKDAYS });
    setClock('2026-03-06T14:30:00.000Z');
    const { batch_id: id } = await create(b, [{ phone: NY }]);
    await drain();
    expect(await placement(id)).toEqual([['pending', 0, 'America/New_York', '2026-03-06T15:00:00.000Z', null]]);
    await enforce(b, null);
    expect((await batchRow(id)).enforcedWindow).toBeNull();
    await drain();
    const [row] = await calls(id);
    expect([row.status, row.attempts, row.windowClosesAt]).toEqual(['completed', 1, null]);
    // Another change of nothing leaves the batches alone.
    const before = (await batchRow(id)).windowsVersion;
    await enforce(b, null);
    expect((await batchRow(id)).windowsVersion).toBe(before);
  });
});

// A contact's own zone is judged by its window's openings over 15 days, which luxon computes with
// an Intl offset lookup (~10 µs) at a time. Computed day by day and chunk by chunk, a create whose
// contacts spread over the world's zones spent seconds of the event loop on them (~200 lookups a
// zone, again in every chunk); now a zone costs ~20 lookups, once per create.
describe('a create whose contacts name every zone', () => {
  it("computes each zone's opening once, from a few offset lookups", async () => {
    const zones = Intl.supportedValuesOf('timeZone');
    // Odd line numbers: create() rewrites a number ending in 00.
    const contacts = Array.from({ length: 2 * zones.length }, (_, i) => ({ phone: `+1212555${2001 + 2 * i}`, timezone: zones[i % zones.length] }));
    const lookups = vi.spyOn(IANAZone.prototype, 'offset');
    try {
      const created = await create(a, contacts, { calling_window: { start: '09:00', end: '20:00', days: WEEKDAYS, timezone: 'recipient' } });
      // Each is judged in New York and its own zone: those that never share an hour with New York are rejected.
      expect(created.accepted_contacts + created.validation_errors.length).toBe(contacts.length);
      expect(created.validation_errors.every((e) => e.field === 'timezone')).toBe(true);
      expect(lookups.mock.calls.length).toBeGreaterThan(zones.length);
      expect(lookups.mock.calls.length).toBeLessThan(40 * zones.length);
    } finally {
      lookups.mockRestore();
    }
  });
});
