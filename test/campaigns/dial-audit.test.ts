// The evidence of every dial (issue 33 point 5): an entry written by the worker as it dials, saying
// which zones (with their local time), windows, profile rules and lists the dial was checked against
// and why it was allowed; read through GraphQL (Call.dialAudit) and REST (.../dial-audit); fenced by
// the lease (a write that does not apply leaves none); deleted with its call by retention.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { batchBody, CALL_BATCHES } from '../helpers/batch-requests.ts';
import { callEvents, expectConsistentBatch, testWorker } from '../helpers/dispatch.ts';
import { applyCallWrites, type CallWrite } from '../../src/services/calls/call-transitions.ts';
import { pruneFinishedBatches } from '../../src/services/retention/prune-batches.ts';
import { dialAuditOf, MAX_AUDIT_RULES, MAX_AUDIT_ZONES, MAX_AUDIT_NAME_LENGTH } from '../../src/domain/dial-audit.ts';
import { numberZoneTable } from '../../src/services/batches/number-zone-table.ts';
import { CALL_RECORD_FIELDS } from '../../src/services/representations.ts';
import { parseCsv } from '../../src/csv/csv.ts';
import { dialPermission, type DialAnswer } from '../../src/domain/dial-permission.ts';

let t: TestApp;
let a: SeededAccount;

beforeAll(async () => {
  // No default profile: these tests pin what the windows alone say (profiles: the last test).
  t = await createTestApp({ config: { RETRY_MIN_DELAY_SECONDS: '1', DEFAULT_COMPLIANCE_PROFILES: 'none' } });
  a = await t.seedAccount({ limits: { maxConcurrentCalls: 100 } });
});
afterAll(() => t.close());

interface Contact {
  phone: string;
  sim: string;
  alternate?: string;
  timezone?: string;
}

async function create(contacts: Contact[], overrides: Record<string, unknown>) {
  const res = await t.request('POST', CALL_BATCHES, {
    key: a.apiKey,
    body: batchBody(a, {
      contacts: contacts.map((c, i) => ({
        contact_id: `c${i + 1}`,
        phone_number: c.phone,
        metadata: { sim: c.sim, ...(c.alternate ? { alternate_phone: c.alternate } : {}) },
        ...(c.timezone ? { timezone: c.timezone } : {}),
      })),
      ...overrides,
    }),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data as { batch_id: string };
}

const calls = (batchId: string) => t.deps.db.prisma.call.findMany({ where: { batchId }, orderBy: { seq: 'asc' } });
const drain = () => testWorker(t.deps).drain();
const setClock = (iso: string) => t.clock.set(new Date(iso));
const auditRows = (batchId: string) => t.deps.db.prisma.dialAudit.findMany({ where: { batchId }, orderBy: { id: 'asc' } });

const AUDIT_QUERY = `query($id: ID!) { call(id: $id) { dialAudit {
  attempt phoneNumber alternate dialledAt allowedBy zones { zone localTime } windows { start end days timezone }
  windowClosesAt rules rulesVersion lists } } }`;

async function gqlAudit(callId: string) {
  const res = await t.gql(AUDIT_QUERY, { id: callId }, a.apiKey);
  expect(res.body.errors).toBeUndefined();
  return res.body.data.call.dialAudit as any[];
}

const WINDOW = { start: '16:00', end: '20:00', timezone: 'recipient' };
const US_LISTS = ['account_do_not_call', 'us_national_dnc_registry', 'us_reassigned_numbers'];
const EVERY_DAY = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];

// 18:08 in New York, 15:08 in Los Angeles.
beforeEach(() => setClock('2026-01-15T23:08:00.000Z'));

describe('every dial leaves an entry', () => {
  it('a first dial: its zones with the local time there, the window, the lists, why it was allowed', async () => {
    const { batch_id: id } = await create([{ phone: '+12125550144', sim: 'completed' }], { calling_window: WINDOW });
    await drain();
    const [call] = await calls(id);
    expect(call.status).toBe('completed');
    expect(await gqlAudit(call.id)).toEqual([
      {
        attempt: 1,
        phoneNumber: '+12125550144',
        alternate: false,
        dialledAt: '2026-01-15T23:08:00.000Z',
        allowedBy: 'WINDOW_OPEN',
        zones: [{ zone: 'America/New_York', localTime: '2026-01-15T18:08:00-05:00' }],
        windows: [{ start: '16:00', end: '20:00', days: EVERY_DAY, timezone: 'recipient' }],
        // 20:00 in New York.
        windowClosesAt: '2026-01-16T01:00:00.000Z',
        rules: [],
        rulesVersion: null,
        lists: US_LISTS,
      },
    ]);
    // One entry per dial in the history, no more.
    const dialEvents = (await callEvents(t.deps, id)).filter((e) => e.detail?.event === 'dial');
    expect((await auditRows(id)).length).toBe(dialEvents.length);
    await expectConsistentBatch(t.deps, id);
  });

  it("a contact's zone narrows the number's: both are judged, each with its own local time", async () => {
    const { batch_id: id } = await create([{ phone: '+12125550145', sim: 'completed', timezone: 'America/Chicago' }], { calling_window: WINDOW });
    await drain();
    const [call] = await calls(id);
    const [entry] = await gqlAudit(call.id);
    expect(entry.zones).toEqual([
      { zone: 'America/New_York', localTime: '2026-01-15T18:08:00-05:00' },
      { zone: 'America/Chicago', localTime: '2026-01-15T17:08:00-06:00' },
    ]);
  });

  it('an alternate dialled at once rides in its own dial write; one that waited for its window gets its entry at the claim', async () => {
    // Both numbers in New York: the alternate is dialled right after the primary.
    const now = await create([{ phone: '+12125550146', alternate: '+12125550147', sim: 'no_answer,completed' }], {
      calling_window: WINDOW,
      use_alternate_number: true,
    });
    // A California alternate waits for 16:00 in Los Angeles.
    const later = await create([{ phone: '+12125550148', alternate: '+13105550148', sim: 'no_answer,completed' }], {
      calling_window: WINDOW,
      use_alternate_number: true,
    });
    await drain();
    const [c1] = await calls(now.batch_id);
    expect((await gqlAudit(c1.id)).map((e) => [e.attempt, e.phoneNumber, e.alternate, e.zones.map((z: any) => z.zone)])).toEqual([
      [1, '+12125550146', false, ['America/New_York']],
      [2, '+12125550147', true, ['America/New_York']],
    ]);
    setClock('2026-01-16T00:00:00.000Z');
    await drain();
    const [c2] = await calls(later.batch_id);
    expect(c2.status).toBe('completed');
    const entries = await gqlAudit(c2.id);
    expect(entries.map((e) => [e.attempt, e.phoneNumber, e.alternate, e.dialledAt, e.zones])).toEqual([
      [1, '+12125550148', false, '2026-01-15T23:08:00.000Z', [{ zone: 'America/New_York', localTime: '2026-01-15T18:08:00-05:00' }]],
      [2, '+13105550148', true, '2026-01-16T00:00:00.000Z', [{ zone: 'America/Los_Angeles', localTime: '2026-01-15T16:00:00-08:00' }]],
    ]);
    await expectConsistentBatch(t.deps, now.batch_id);
    await expectConsistentBatch(t.deps, later.batch_id);
  });

  it("a batch without a window: allowed by no_window, with the number's own zones for the record", async () => {
    const { batch_id: id } = await create([{ phone: '+13105550149', sim: 'completed' }], {});
    await drain();
    const [call] = await calls(id);
    const [entry] = await gqlAudit(call.id);
    expect([entry.allowedBy, entry.windows, entry.windowClosesAt, entry.zones]).toEqual([
      'NO_WINDOW',
      [],
      null,
      [{ zone: 'America/Los_Angeles', localTime: '2026-01-15T15:08:00-08:00' }],
    ]);
  });

  it('a retry is a dial of its own: one entry per attempt', async () => {
    const { batch_id: id } = await create([{ phone: '+12125550150', sim: 'busy,completed' }], {
      calling_window: WINDOW,
      retry: { max_attempts: 2, on: ['busy'], delay_seconds: 60 },
    });
    await drain();
    setClock('2026-01-15T23:09:30.000Z');
    await drain();
    const [call] = await calls(id);
    expect(call.status).toBe('completed');
    expect((await gqlAudit(call.id)).map((e) => [e.attempt, e.dialledAt])).toEqual([
      [1, '2026-01-15T23:08:00.000Z'],
      [2, '2026-01-15T23:09:30.000Z'],
    ]);
  });
});

describe('REST', () => {
  it('GET .../calls/{call_id}/dial-audit answers the entries in the envelope; another batch or an unknown call is 404', async () => {
    const { batch_id: id } = await create([{ phone: '+12125550151', sim: 'completed' }], { calling_window: WINDOW });
    const other = await create([{ phone: '+12125550152', sim: 'completed' }], {});
    await drain();
    const [call] = await calls(id);
    const res = await t.request('GET', `${CALL_BATCHES}/${id}/calls/${call.id}/dial-audit`, { key: a.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.message).toBe('Call dial audit fetched successfully');
    expect(res.body.data).toEqual({
      call_id: call.id,
      batch_id: id,
      items: [
        {
          attempt: 1,
          phone_number: '+12125550151',
          alternate: false,
          dialled_at: '2026-01-15T23:08:00.000Z',
          allowed_by: 'window_open',
          zones: [{ zone: 'America/New_York', local_time: '2026-01-15T18:08:00-05:00' }],
          windows: [{ start: '16:00', end: '20:00', days: EVERY_DAY, timezone: 'recipient' }],
          window_closes_at: '2026-01-16T01:00:00.000Z',
          rules: [],
          rules_version: null,
          lists: US_LISTS,
        },
      ],
    });
    expect((await t.request('GET', `${CALL_BATCHES}/${other.batch_id}/calls/${call.id}/dial-audit`, { key: a.apiKey })).status).toBe(404);
    expect((await t.request('GET', `${CALL_BATCHES}/${id}/calls/call_nope/dial-audit`, { key: a.apiKey })).status).toBe(404);
    const stranger = await t.seedAccount();
    expect((await t.request('GET', `${CALL_BATCHES}/${id}/calls/${call.id}/dial-audit`, { key: stranger.apiKey })).status).toBe(404);
  });
});

describe('CSV export', () => {
  it('?include=dial_audit adds a dial_audit column holding the REST entries as JSON; without it the file is unchanged', async () => {
    const { batch_id: id } = await create(
      [
        { phone: '+12125550157', sim: 'completed' },
        { phone: '+12125550158', sim: 'no_answer' },
      ],
      { calling_window: WINDOW },
    );
    await drain();
    const csv = async (query: string) => {
      const res = await t.request('GET', `${CALL_BATCHES}/${id}/results.csv${query}`, { key: a.apiKey });
      expect(res.status).toBe(200);
      return parseCsv(res.body as string).map((r) => r.cells);
    };
    const plain = await csv('');
    expect(plain[0]).toEqual([...CALL_RECORD_FIELDS]);
    const [header, ...rows] = await csv('?include=dial_audit');
    expect(header).toEqual([...CALL_RECORD_FIELDS, 'dial_audit']);
    expect(rows.map((r) => r.slice(0, -1))).toEqual(plain.slice(1));
    const api = await Promise.all(
      (await calls(id)).map(
        async (c) => (await t.request('GET', `${CALL_BATCHES}/${id}/calls/${c.id}/dial-audit`, { key: a.apiKey })).body.data.items,
      ),
    );
    expect(rows.map((r) => JSON.parse(r[r.length - 1]))).toEqual(api);
    expect(api.map((items: any[]) => items.length)).toEqual([1, 1]);
    const bad = await t.request('GET', `${CALL_BATCHES}/${id}/results.csv?include=everything`, { key: a.apiKey });
    expect(bad.status).toBe(422);
  });
});

describe('fencing and retention', () => {
  it('a write of a worker that no longer holds the lease leaves no entry', async () => {
    const { batch_id: id } = await create([{ phone: '+12125550153', sim: 'completed' }], { start_mode: 'manual' });
    const [call] = await calls(id);
    await t.deps.db.prisma.call.update({
      where: { id: call.id },
      data: { status: 'ringing', leaseOwner: 'worker-b', leaseExpiresAt: new Date('2026-01-16T00:00:00Z') },
    });
    const entry = dialAuditOf(numberZoneTable(), {
      answer: {
        allowed: true,
        zones: [],
        closesAt: null,
        rules: [],
        checks: { zones: [], windows: [], rules: [], rulesVersion: null, frequency: [] },
      },
      number: call.phoneNumber,
      contactZone: null,
      at: new Date('2026-01-15T23:08:00Z'),
      attempt: 1,
      alternate: false,
    });
    const write = (owner: string): CallWrite => ({
      callId: call.id,
      batchId: id,
      accountId: a.account.id,
      owner,
      from: 'ringing',
      to: 'ringing',
      events: [],
      set: {},
      audits: [entry],
    });
    const lost = await applyCallWrites(t.deps, [write('worker-a')], new Date('2026-01-15T23:08:01Z'));
    expect(lost.applied.size).toBe(0);
    expect(await auditRows(id)).toEqual([]);
    const held = await applyCallWrites(t.deps, [write('worker-b')], new Date('2026-01-15T23:08:01Z'));
    expect([...held.applied]).toEqual([call.id]);
    expect((await auditRows(id)).map((r) => [r.callId, r.attempt, r.number, r.allowedBy])).toEqual([[call.id, 1, '+12125550153', 'no_window']]);
  });

  it('entries go with their call when retention deletes the batch', async () => {
    const { batch_id: id } = await create([{ phone: '+12125550154', sim: 'completed' }], { calling_window: WINDOW });
    await drain();
    expect((await auditRows(id)).length).toBe(1);
    setClock('2026-03-01T00:00:00.000Z');
    const pruned = await pruneFinishedBatches({ ...t.deps, config: { ...t.deps.config, BATCH_RETENTION_DAYS: 30 } });
    expect(pruned.batches).toBeGreaterThanOrEqual(1);
    expect(await auditRows(id)).toEqual([]);
  });
});

describe('bounds', () => {
  it('zones, rules and names are cut to their documented limits', () => {
    const many = Array.from({ length: 100 }, (_, i) => `rule_${i}_${'x'.repeat(100)}`);
    const answer: DialAnswer = {
      allowed: true,
      zones: Array.from({ length: 40 }, () => 'America/New_York').concat(['Europe/Paris', 'Asia/Tokyo']),
      closesAt: null,
      rules: many,
      checks: { zones: [], windows: [], rules: many, rulesVersion: 'v1', frequency: [] },
    };
    const entry = dialAuditOf(numberZoneTable(), {
      answer,
      number: '+12125550155',
      contactZone: null,
      at: new Date('2026-07-01T12:00:00Z'),
      attempt: 1,
      alternate: false,
    });
    expect(entry.zones).toEqual(['America/New_York', 'Europe/Paris', 'Asia/Tokyo']);
    expect(entry.localTimes).toEqual(['2026-07-01T08:00:00-04:00', '2026-07-01T14:00:00+02:00', '2026-07-01T21:00:00+09:00']);
    expect(entry.rules.length).toBe(MAX_AUDIT_RULES);
    expect(entry.rules.every((r) => r.length <= MAX_AUDIT_NAME_LENGTH)).toBe(true);
    expect(entry.zones.length).toBeLessThanOrEqual(MAX_AUDIT_ZONES);
    expect(JSON.stringify(entry).length).toBeLessThan(4_096);
  });
});

describe('profiles', () => {
  it("the rules of the profiles in force and their table's version go in the entry", () => {
    const at = new Date('2026-07-01T16:00:00Z');
    const answer = dialPermission(numberZoneTable(), { number: '+13055550156', contactZone: null, windows: [], profiles: ['us_tcpa'], now: at });
    expect(answer.allowed).toBe(true);
    const entry = dialAuditOf(numberZoneTable(), { answer, number: '+13055550156', contactZone: null, at, attempt: 1, alternate: false });
    expect(entry.rules.length).toBeGreaterThan(0);
    expect(entry.rules).toEqual(answer.checks.rules);
    expect(entry.rulesVersion).toBe(answer.checks.rulesVersion);
    // An hours rule limited the dial: judged in the number's zone (Miami), not unrestricted.
    expect([entry.allowedBy, entry.zones, entry.localTimes]).toEqual(['window_open', ['America/New_York'], ['2026-07-01T12:00:00-04:00']]);
    expect(entry.lists).toEqual(US_LISTS);
    // A number outside +1 is checked against the account's list only.
    expect(dialAuditOf(numberZoneTable(), { answer, number: '+442071234567', contactZone: null, at, attempt: 1, alternate: false }).lists).toEqual([
      'account_do_not_call',
    ]);
  });
});
