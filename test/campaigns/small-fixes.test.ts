// Issue 33's smaller defects (point 8), each reproduced on a controllable clock: batches created
// through REST, dialled by the worker with the simulator. Nothing sleeps: the clock moves, and the
// worker drains what is due.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { batchBody, CALL_BATCHES } from '../helpers/batch-requests.ts';
import { callEvents, expectConsistentBatch, testWorker } from '../helpers/dispatch.ts';
import { NO_ZONE_MESSAGE } from '../../src/domain/call-windows.ts';
import { callingWindowProblems, normalizeWindow, windowIntervals } from '../../src/domain/calling-window.ts';
import { parseWindowSpec } from '../../src/cli/window-spec.ts';
import { parseCsv } from '../../src/csv/csv.ts';
import { exportCells } from '../../src/rest/results-csv.ts';

// Friday 2026-03-06 13:30Z: 08:30 in New York (EST).
const FRIDAY = new Date('2026-03-06T13:30:00.000Z');
const NY = '+12125550100';
const MINUTE = 60_000;

let t: TestApp;

beforeAll(async () => {
  // No default compliance profile: each case here is about one rule (a profile's recipient window
  // would narrow every window below, and refuse a toll-free number under any of them).
  t = await createTestApp({ config: { RETRY_MIN_DELAY_SECONDS: '1', DEFAULT_COMPLIANCE_PROFILES: 'none' } });
});
afterAll(() => t.close());
beforeEach(() => t.clock.set(FRIDAY));

const account = () => t.seedAccount({ limits: { maxConcurrentCalls: 100 } });
const calls = (batchId: string) => t.deps.db.prisma.call.findMany({ where: { batchId }, orderBy: { seq: 'asc' } });
const batchRow = (id: string) => t.deps.db.prisma.batch.findUniqueOrThrow({ where: { id } });
const drain = () => testWorker(t.deps).drain();
const later = (ms: number) => t.clock.set(new Date(t.clock.now().getTime() + ms));

async function create(a: SeededAccount, contacts: Record<string, unknown>[], overrides: Record<string, unknown> = {}) {
  const res = await t.request('POST', CALL_BATCHES, {
    key: a.apiKey,
    body: batchBody(a, {
      contacts: contacts.map((c, i) => ({ contact_id: `c${i + 1}`, metadata: { sim: 'completed' }, ...c })),
      ...overrides,
    }),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data as { batch_id: string; accepted_contacts: number; rejected_contacts: number; validation_errors: any[] };
}

async function enforce(a: SeededAccount, window: Record<string, unknown> | null) {
  const r = await t.gql(
    `mutation($id: ID!, $w: CallingWindowInput) { adminUpdateAccount(id: $id, input: { enforcedCallingWindow: $w }) { id } }`,
    { id: a.account.id, w: window },
    ADMIN_TOKEN,
  );
  expect(r.body.errors).toBeUndefined();
}

describe('a: a manual batch never started, at its expires_at', () => {
  it('ends its calls expired and completes, as a started batch does; starting it then is refused', async () => {
    const a = await account();
    const { batch_id: id } = await create(a, [{ phone_number: '+14155550104' }, { phone_number: '+14155550114' }], {
      start_mode: 'manual',
      expires_at: '2026-03-06T13:40:00Z',
    });
    await drain();
    expect((await batchRow(id)).status).toBe('paused');
    expect((await calls(id)).map((c) => c.status)).toEqual(['pending', 'pending']);

    later(10 * MINUTE);
    await drain();
    expect((await calls(id)).map((c) => [c.status, c.disconnectReason, c.attempts])).toEqual([
      ['cancelled', 'expired', 0],
      ['cancelled', 'expired', 0],
    ]);
    const { batch } = await expectConsistentBatch(t.deps, id);
    expect([batch.status, batch.cancelled, batch.queued]).toEqual(['completed', 2, 0]);
    const start = await t.request('POST', `${CALL_BATCHES}/${id}/start`, { key: a.apiKey });
    expect(start.status).toBe(409);
    expect((await callEvents(t.deps, id)).filter((e) => e.detail?.event === 'dial')).toEqual([]);
  });
});

describe("e: an enforced window that never meets a paused batch's window", () => {
  // Noon in Tokyo is 22:00-23:00 in New York: never inside 09:00-20:00 there.
  const DISJOINT = { start: '12:00', end: '13:00', timezone: 'Asia/Tokyo' };
  const WINDOW = { start: '09:00', end: '20:00', days: ['mon', 'tue', 'wed', 'thu', 'fri'], timezone: 'recipient' };
  const op = (a: SeededAccount, id: string, name: string) => t.request('POST', `${CALL_BATCHES}/${id}/${name}`, { key: a.apiKey });

  it('leaves its calls waiting; they dial under the window in force once it resumes', async () => {
    const a = await account();
    const { batch_id: id } = await create(a, [{ phone_number: NY }], { calling_window: WINDOW });
    expect((await op(a, id, 'pause')).status).toBe(200);
    await enforce(a, DISJOINT);
    await drain();
    later(24 * 60 * MINUTE);
    await drain();
    expect((await calls(id)).map((c) => [c.status, c.disconnectReason])).toEqual([['pending', null]]);
    expect((await batchRow(id)).windowResetCursor).toBe(0);

    // The operator takes the enforced window back, then resumes: Monday 09:00 in New York.
    await enforce(a, null);
    expect((await op(a, id, 'resume')).status).toBe(200);
    await drain();
    expect((await calls(id)).map((c) => [c.status, c.nextAttemptAt?.toISOString()])).toEqual([['pending', '2026-03-09T13:00:00.000Z']]);
    t.clock.set(new Date('2026-03-09T13:00:00.000Z'));
    await drain();
    expect((await expectConsistentBatch(t.deps, id)).batch).toMatchObject({ status: 'completed', completed: 1 });
  });

  it('ends them no_calling_window once the batch resumes under it, as in a running batch', async () => {
    const a = await account();
    const { batch_id: id } = await create(a, [{ phone_number: NY }], { calling_window: WINDOW });
    expect((await op(a, id, 'pause')).status).toBe(200);
    await enforce(a, DISJOINT);
    await drain();
    expect((await calls(id)).map((c) => c.status)).toEqual(['pending']);
    expect((await op(a, id, 'resume')).status).toBe(200);
    await drain();
    expect((await calls(id)).map((c) => [c.status, c.disconnectReason])).toEqual([['cancelled', 'no_calling_window']]);
    expect((await expectConsistentBatch(t.deps, id)).batch).toMatchObject({ status: 'completed', cancelled: 1 });
  });
});

describe('b: a toll-free number under a recipient window', () => {
  it("is judged the same in every season: no zone of its own, so the contact's timezone is needed", async () => {
    const a = await account();
    // January (Newfoundland on standard time: the 42 North American zones shared 23:00-23:30 UTC
    // under 09:00-20:00, so the number was accepted) and July (they share nothing: rejected).
    for (const at of ['2026-01-14T15:00:00.000Z', '2026-07-15T15:00:00.000Z']) {
      t.clock.set(new Date(at));
      const codes = ['800', '833', '844', '855', '866', '877', '888'];
      const created = await create(
        a,
        [...codes.map((code) => ({ phone_number: `+1${code}2345678` })), { phone_number: '+18002345678', timezone: 'America/Chicago' }],
        { calling_window: { start: '09:00', end: '20:00', timezone: 'recipient' }, start_mode: 'manual' },
      );
      expect({ at, errors: created.validation_errors.map((e) => [e.index, e.field, e.message]) }).toEqual({
        at,
        errors: codes.map((_, i) => [i + 1, 'phone_number', NO_ZONE_MESSAGE]),
      });
      expect((await calls(created.batch_id)).map((c) => [c.phoneNumber, c.timezone])).toEqual([['+18002345678', 'America/Chicago']]);
    }
  });

  it('with a window in a fixed zone needs no zone of its own', async () => {
    const a = await account();
    const created = await create(a, [{ phone_number: '+18002345678' }], {
      calling_window: { start: '09:00', end: '20:00', timezone: 'America/New_York' },
      start_mode: 'manual',
    });
    expect(created.accepted_contacts).toBe(1);
  });
});

describe('g: a window that ends at 24:00', () => {
  const NEW_YORK_EVENINGS = { start: '20:00', end: '24:00', timezone: 'America/New_York' };

  it('runs to the end of the local day, also across a DST change', () => {
    // Saturday 2026-03-07 (EST) and Sunday 03-08 (EDT from 02:00): each to its own midnight.
    const w = normalizeWindow({ ...NEW_YORK_EVENINGS, days: ['sat', 'sun'] });
    const got = windowIntervals(w, 'America/New_York', new Date('2026-03-07T12:00:00Z')).slice(0, 2);
    expect(got.map(([a, b]) => [new Date(a).toISOString(), new Date(b).toISOString()])).toEqual([
      ['2026-03-08T01:00:00.000Z', '2026-03-08T05:00:00.000Z'],
      ['2026-03-09T00:00:00.000Z', '2026-03-09T04:00:00.000Z'],
    ]);
    // A zone with no change ahead takes the arithmetic path: the same end.
    const utc = windowIntervals(normalizeWindow({ start: '00:00', end: '24:00', timezone: 'UTC' }), 'UTC', new Date('2026-03-07T12:00:00Z'));
    expect(utc.every(([a, b]) => b - a === 24 * 60 * MINUTE)).toBe(true);
    expect(callingWindowProblems({ start: '24:00', end: '24:00' }).map(([f]) => f)).toEqual(['start']);
    expect(callingWindowProblems({ start: '09:00', end: '24:01' }).map(([f]) => f)).toEqual(['end']);
  });

  it("is accepted by REST, GraphQL and the CLI's window spec", async () => {
    const a = await account();
    const created = await create(a, [{ phone_number: NY }], { calling_window: NEW_YORK_EVENINGS });
    const [call] = await calls(created.batch_id);
    expect([call.nextAttemptAt?.toISOString(), call.windowClosesAt?.toISOString()]).toEqual(['2026-03-07T01:00:00.000Z', '2026-03-07T05:00:00.000Z']);
    const details = await t.request('GET', `${CALL_BATCHES}/${created.batch_id}`, { key: a.apiKey });
    expect(details.body.data.calling_window).toMatchObject({ start: '20:00', end: '24:00' });

    const set = await t.gql(
      `mutation($id: ID!) { adminUpdateAccount(id: $id, input: { enforcedCallingWindow: { start: "08:00", end: "24:00" } }) { enforcedCallingWindow { start end } } }`,
      { id: a.account.id },
      ADMIN_TOKEN,
    );
    expect(set.body).toEqual({ data: { adminUpdateAccount: { enforcedCallingWindow: { start: '08:00', end: '24:00' } } } });
    expect(parseWindowSpec('08:00-24:00 mon-fri recipient')).toEqual({
      start: '08:00',
      end: '24:00',
      days: ['mon', 'tue', 'wed', 'thu', 'fri'],
      timezone: 'recipient',
    });
    await enforce(a, null);
  });
});

describe('i: a window edge in the spring-forward gap (New York, 2026-03-08, 02:00 EST -> 03:00 EDT)', () => {
  const sunday = (start: string, end: string) =>
    windowIntervals(
      normalizeWindow({ start, end, days: ['sun'], timezone: 'America/New_York' }),
      'America/New_York',
      new Date('2026-03-08T04:00:00Z'),
    )
      .filter(([a]) => a >= Date.parse('2026-03-08T04:00:00Z') && a < Date.parse('2026-03-09T04:00:00Z'))
      .map(([a, b]) => [new Date(a).toISOString(), new Date(b).toISOString()]);

  it("a start the clocks skip opens the gap's length later, the later reading (02:30 -> 03:30 EDT)", () => {
    expect(sunday('02:30', '05:00')).toEqual([['2026-03-08T07:30:00.000Z', '2026-03-08T09:00:00.000Z']]);
  });

  it('an end the clocks skip closes when they jump past it (02:30 -> 03:00 EDT), not at 03:30 EDT', () => {
    expect(sunday('01:00', '02:30')).toEqual([['2026-03-08T06:00:00.000Z', '2026-03-08T07:00:00.000Z']]);
    // A window wholly inside the gap never opens that day.
    expect(sunday('02:00', '02:45')).toEqual([]);
    // Lord Howe moves by half an hour (02:00 -> 02:30 on 2026-10-04): 01:00-02:15 closes at the jump.
    const lordHowe = windowIntervals(
      normalizeWindow({ start: '01:00', end: '02:15', days: ['sun'], timezone: 'Australia/Lord_Howe' }),
      'Australia/Lord_Howe',
      new Date('2026-10-03T12:00:00Z'),
    );
    expect(lordHowe.map(([a, b]) => [new Date(a).toISOString(), new Date(b).toISOString()])[0]).toEqual([
      '2026-10-03T14:30:00.000Z',
      '2026-10-03T15:30:00.000Z',
    ]);
  });

  it('a time the clocks show twice (fall back, 2026-11-01) is its first occurrence: 01:00-01:30 is open once', () => {
    const w = normalizeWindow({ start: '01:00', end: '01:30', days: ['sun'], timezone: 'America/New_York' });
    const got = windowIntervals(w, 'America/New_York', new Date('2026-10-31T12:00:00Z')).filter(([a]) => a < Date.parse('2026-11-02T00:00:00Z'));
    expect(got.map(([a, b]) => [new Date(a).toISOString(), new Date(b).toISOString()])).toEqual([
      ['2026-11-01T05:00:00.000Z', '2026-11-01T05:30:00.000Z'],
    ]);
  });
});

describe('f: a change of the frequency cap', () => {
  const capCalls = (a: SeededAccount, cap: string) =>
    t.gql(
      `mutation($id: ID!) { adminUpdateAccount(id: $id, input: { frequencyCap: ${cap} }) { frequencyCap { maxCalls } } }`,
      { id: a.account.id },
      ADMIN_TOKEN,
    );

  it('releases the calls it held at once: cleared, they dial at the next claim; raised, as far as the new cap allows', async () => {
    const a = await t.seedAccount({ limits: { maxConcurrentCalls: 100 }, frequencyCap: { maxCalls: 1, periodSeconds: 7 * 24 * 3600 } });
    const b = await t.seedAccount({ limits: { maxConcurrentCalls: 100 }, frequencyCap: { maxCalls: 1, periodSeconds: 7 * 24 * 3600 } });
    // Three calls of one number, taken by one claim: the first is dialled, the other two held for a week.
    const held = async (acc: SeededAccount) => {
      const { batch_id: id } = await create(acc, [{ phone_number: NY }, { phone_number: NY }, { phone_number: NY }], { concurrency: 5 });
      await drain();
      expect((await calls(id)).map((c) => [c.status, c.waitReason])).toEqual([
        ['completed', null],
        ['pending', 'frequency_cap'],
        ['pending', 'frequency_cap'],
      ]);
      return id;
    };
    const cleared = await held(a);
    const raised = await held(b);

    later(MINUTE);
    expect((await capCalls(a, 'null')).body.errors).toBeUndefined();
    expect((await capCalls(b, '{ maxCalls: 2, periodSeconds: 604800 }')).body.errors).toBeUndefined();
    await drain();
    expect((await calls(cleared)).map((c) => c.status)).toEqual(['completed', 'completed', 'completed']);
    // A cap of 2: one more dial now; the third waits for a week after the first dial.
    const rows = await calls(raised);
    expect(rows.map((c) => [c.status, c.waitReason])).toEqual([
      ['completed', null],
      ['completed', null],
      ['pending', 'frequency_cap'],
    ]);
    expect(rows[2].nextAttemptAt?.toISOString()).toBe(new Date(FRIDAY.getTime() + 7 * 24 * 60 * MINUTE).toISOString());
  });
});

const csvOf = async (a: SeededAccount, id: string) => {
  const res = await t.app.fetch(
    new Request(`http://test.local${CALL_BATCHES}/${id}/results.csv`, { headers: { authorization: `Bearer ${a.apiKey}` } }),
  );
  expect(res.status).toBe(200);
  const [header, ...rows] = parseCsv(await res.text()).map((r) => r.cells);
  return rows.map((r) => Object.fromEntries(header.map((h, i) => [h, r[i]])));
};

describe('c: why a call waits for a retry', () => {
  it('is in REST call records, the call.retry_scheduled webhook and the CSV export (retry_reason), null once it no longer waits', async () => {
    const a = await account();
    const { batch_id: id } = await create(
      a,
      [
        { phone_number: '+14155550104', metadata: { sim: 'busy,completed' } },
        { phone_number: '+14155550114', metadata: { sim: 'voicemail,completed' } },
      ],
      { retry: { max_attempts: 2, delay_seconds: 600 }, callback_url: 'https://hooks.example.com/calls' },
    );
    await drain();
    const listed = await t.request('GET', `${CALL_BATCHES}/${id}/calls`, { key: a.apiKey });
    expect(listed.body.data.items.map((c: any) => [c.status, c.retry_reason])).toEqual([
      ['queued', 'busy'],
      ['queued', 'voicemail'],
    ]);
    const results = await t.request('GET', `${CALL_BATCHES}/${id}/results`, { key: a.apiKey });
    expect(results.body.data.items.map((c: any) => c.retry_reason)).toEqual(['busy', 'voicemail']);
    expect((await csvOf(a, id)).map((r) => r.retry_reason)).toEqual(['busy', 'voicemail']);
    const deliveries = await t.deps.db.prisma.webhookDelivery.findMany({
      where: { batchId: id, eventType: 'call.retry_scheduled' },
      orderBy: { id: 'asc' },
    });
    expect(deliveries.map((d) => (d.payload as any).data.retry_reason).sort()).toEqual(['busy', 'voicemail']);

    later(10 * MINUTE);
    await drain();
    const done = await t.request('GET', `${CALL_BATCHES}/${id}/calls`, { key: a.apiKey });
    expect(done.body.data.items.map((c: any) => [c.status, c.retry_reason])).toEqual([
      ['completed', null],
      ['completed', null],
    ]);
    const completed = await t.deps.db.prisma.webhookDelivery.findMany({ where: { batchId: id, eventType: 'call.completed' } });
    expect(completed.map((d) => (d.payload as any).data.retry_reason)).toEqual([null, null]);
  });
});

describe('d: batch details under an enforced window', () => {
  it('show it beside calling_window (enforced_calling_window), in REST and the batch webhooks', async () => {
    const a = await account();
    await enforce(a, { start: '09:00', end: '20:00', days: ['mon', 'tue', 'wed', 'thu', 'fri'] });
    const { batch_id: id } = await create(a, [{ phone_number: NY }], { callback_url: 'https://hooks.example.com/calls' });
    const details = (await t.request('GET', `${CALL_BATCHES}/${id}`, { key: a.apiKey })).body.data;
    expect([details.calling_window, details.enforced_calling_window]).toEqual([
      null,
      { start: '09:00', end: '20:00', days: ['mon', 'tue', 'wed', 'thu', 'fri'], timezone: 'recipient' },
    ]);
    // 08:30 in New York: the enforced window holds the call until 09:00.
    await drain();
    expect((await calls(id)).map((c) => [c.status, c.nextAttemptAt?.toISOString()])).toEqual([['pending', '2026-03-06T14:00:00.000Z']]);
    t.clock.set(new Date('2026-03-06T14:00:00.000Z'));
    await drain();
    const started = await t.deps.db.prisma.webhookDelivery.findFirstOrThrow({ where: { batchId: id, eventType: 'batch.started' } });
    expect((started.payload as any).data.enforced_calling_window).toMatchObject({ start: '09:00', end: '20:00' });
    // A finished batch keeps the window it ran under; an unfinished one follows the account's.
    const waiting = await create(a, [{ phone_number: NY }], { start_mode: 'manual' });
    await enforce(a, null);
    expect((await t.request('GET', `${CALL_BATCHES}/${waiting.batch_id}`, { key: a.apiKey })).body.data.enforced_calling_window).toBeNull();
    expect((await t.request('GET', `${CALL_BATCHES}/${id}`, { key: a.apiKey })).body.data.enforced_calling_window).toMatchObject({ start: '09:00' });
  });
});

describe('h: the CSV export', () => {
  it('guards a formula behind leading spaces or line breaks, and keeps plain numbers and text', () => {
    const cells = ['=1+1', ' =1+1', '\n=HYPERLINK("x")', ' \t+cmd', '\r\n@SUM(A1)', '  -2+3', '-42', '+14155550104', 'hello', ' plain', '\t'];
    const [row] = parseCsv(exportCells([cells])).map((r) => r.cells);
    expect(row).toEqual([
      "'=1+1",
      "' =1+1",
      '\'\n=HYPERLINK("x")',
      "' \t+cmd",
      "'\r\n@SUM(A1)",
      "'  -2+3",
      '-42',
      '+14155550104',
      'hello',
      ' plain',
      "'\t",
    ]);
  });

  it('has the primary number beside the number dialled when the alternate was dialled', async () => {
    const a = await account();
    const { batch_id: id } = await create(
      a,
      [{ phone_number: '+14155550100', metadata: { sim: 'no_answer,completed', alternate_phone: '+14155550124' } }],
      { use_alternate_number: true },
    );
    await drain();
    const [row] = await csvOf(a, id);
    expect([row.phone_number, row.primary_phone_number]).toEqual(['+14155550124', '+14155550100']);
    const [record] = (await t.request('GET', `${CALL_BATCHES}/${id}/calls`, { key: a.apiKey })).body.data.items;
    expect([record.phone_number, record.primary_phone_number]).toEqual(['+14155550124', '+14155550100']);
  });
});
