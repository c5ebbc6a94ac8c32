// A batch's compliance report (issue 33 point 5): its dials per local hour in each zone they were
// judged in, and its calls blocked by reason - ended undialled (the do-not-call list at the claim),
// held back now (a closed calling window) and alternate numbers not dialled - on GraphQL
// (CallBatch.complianceReport) and REST (.../compliance-report), on the simulator and a test clock;
// the report's dial_audits statements read the batch's index range.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { batchBody, CALL_BATCHES } from '../helpers/batch-requests.ts';
import { expectConsistentBatch, testWorker } from '../helpers/dispatch.ts';
import { planOf } from '../helpers/statement-plans.ts';
import { runStatement } from '../../src/db/sql-statement.ts';
import { HOURS_SQL, MAX_REPORT_HOUR_ROWS, TOTALS_SQL } from '../../src/services/batches/compliance-report.ts';

let t: TestApp;
let a: SeededAccount;

beforeAll(async () => {
  // No default profile: a batch without a window is unrestricted here.
  t = await createTestApp({ config: { DEFAULT_COMPLIANCE_PROFILES: 'none' } });
  a = await t.seedAccount({ limits: { maxConcurrentCalls: 100 } });
});
afterAll(() => t.close());

interface Contact {
  phone: string;
  sim: string;
  alternate?: string;
}

async function create(contacts: Contact[], overrides: Record<string, unknown>) {
  const res = await t.request('POST', CALL_BATCHES, {
    key: a.apiKey,
    body: batchBody(a, {
      contacts: contacts.map((c, i) => ({
        contact_id: `c${i + 1}`,
        phone_number: c.phone,
        metadata: { sim: c.sim, ...(c.alternate ? { alternate_phone: c.alternate } : {}) },
      })),
      ...overrides,
    }),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return (res.body.data as { batch_id: string }).batch_id;
}

async function suppress(numbers: string[]) {
  const res = await t.request('POST', '/api/v1/public/suppressions', { key: a.apiKey, body: { phone_numbers: numbers } });
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
}

const REPORT = `query($id: ID!) { batch(id: $id) { complianceReport {
  dials unrestrictedDials dialsWithoutZone dialsByLocalHour { zone hour dials } truncated blocked { stage reason calls } } } }`;

async function report(batchId: string) {
  const res = await t.gql(REPORT, { id: batchId }, a.apiKey);
  expect(res.body.errors).toBeUndefined();
  return res.body.data.batch.complianceReport;
}

const drain = () => testWorker(t.deps).drain();
const setClock = (iso: string) => t.clock.set(new Date(iso));
const WINDOW = { start: '09:00', end: '20:00', timezone: 'recipient' };

// 10:00 in New York, 07:00 in Los Angeles.
beforeEach(() => setClock('2026-01-15T15:00:00.000Z'));

describe('compliance report', () => {
  it('counts dials per local hour per zone and blocked calls by stage and reason, as the batch moves on', async () => {
    const id = await create(
      [
        { phone: '+12125550160', sim: 'completed' },
        { phone: '+12125550161', sim: 'completed' },
        // Los Angeles: its window opens at 09:00 there (17:00 UTC).
        { phone: '+13105550162', sim: 'completed' },
        // Put on the do-not-call list after the create: the claim cancels it.
        { phone: '+12125550163', sim: 'completed' },
        // Its alternate is on the list: the primary goes unanswered, the alternate is not dialled.
        { phone: '+12125550164', alternate: '+12125550165', sim: 'no_answer' },
      ],
      { calling_window: WINDOW, use_alternate_number: true },
    );
    await suppress(['+12125550163', '+12125550165']);
    await drain();
    expect(await report(id)).toEqual({
      dials: 3,
      unrestrictedDials: 0,
      dialsWithoutZone: 0,
      dialsByLocalHour: [{ zone: 'America/New_York', hour: 10, dials: 3 }],
      truncated: false,
      blocked: [
        { stage: 'alternate', reason: 'suppressed', calls: 1 },
        { stage: 'ended', reason: 'suppressed', calls: 1 },
        { stage: 'waiting', reason: 'calling_window', calls: 1 },
      ],
    });

    // 12:30 in New York, 09:30 in Los Angeles: the waiting call is dialled at 09 local.
    setClock('2026-01-15T17:30:00.000Z');
    await drain();
    const after = await report(id);
    expect(after.dials).toBe(4);
    expect(after.dialsByLocalHour).toEqual([
      { zone: 'America/Los_Angeles', hour: 9, dials: 1 },
      { zone: 'America/New_York', hour: 10, dials: 3 },
    ]);
    expect(after.blocked).toEqual([
      { stage: 'alternate', reason: 'suppressed', calls: 1 },
      { stage: 'ended', reason: 'suppressed', calls: 1 },
    ]);
    await expectConsistentBatch(t.deps, id);

    // REST answers the same figures in snake_case.
    const res = await t.request('GET', `${CALL_BATCHES}/${id}/compliance-report`, { key: a.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.message).toBe('Batch compliance report fetched successfully');
    expect(res.body.data).toEqual({
      batch_id: id,
      dials: 4,
      unrestricted_dials: 0,
      dials_without_zone: 0,
      dials_by_local_hour: [
        { zone: 'America/Los_Angeles', hour: 9, dials: 1 },
        { zone: 'America/New_York', hour: 10, dials: 3 },
      ],
      truncated: false,
      blocked: [
        { stage: 'alternate', reason: 'suppressed', calls: 1 },
        { stage: 'ended', reason: 'suppressed', calls: 1 },
      ],
    });
  });

  it('a number in several zones counts in each, at its own local hour', async () => {
    // A contact zone narrows the number's: the dial is judged in both.
    const res = await t.request('POST', CALL_BATCHES, {
      key: a.apiKey,
      body: batchBody(a, {
        contacts: [{ contact_id: 'c1', phone_number: '+12125550170', timezone: 'America/Chicago', metadata: { sim: 'completed' } }],
        calling_window: WINDOW,
      }),
    });
    expect(res.status).toBe(201);
    const id = res.body.data.batch_id as string;
    await drain();
    expect((await report(id)).dialsByLocalHour).toEqual([
      { zone: 'America/Chicago', hour: 9, dials: 1 },
      { zone: 'America/New_York', hour: 10, dials: 1 },
    ]);
  });

  it('a batch without a window: its dials are unrestricted, placed at the local hour of the number', async () => {
    // 07:00 in Los Angeles: nothing held it back.
    const id = await create([{ phone: '+13105550171', sim: 'completed' }], {});
    await drain();
    expect(await report(id)).toEqual({
      dials: 1,
      unrestrictedDials: 1,
      dialsWithoutZone: 0,
      dialsByLocalHour: [{ zone: 'America/Los_Angeles', hour: 7, dials: 1 }],
      truncated: false,
      blocked: [],
    });
  });

  it('a claimed dial the check at the dial refuses counts as withheld, and the call as waiting for its window', async () => {
    // Los Angeles, 07:00: the create places the call at 09:00 there (17:00 UTC).
    const id = await create([{ phone: '+13105550174', sim: 'completed' }], { calling_window: WINDOW });
    // A stale slot (as after a window change the sweep has not reached yet): the claim takes the call now.
    await runStatement(t.deps.db, 'UPDATE calls SET next_attempt_at = NULL WHERE batch_id = $1', [id]);
    await drain();
    const [call] = await t.deps.db.prisma.call.findMany({ where: { batchId: id } });
    expect([call.status, call.attempts, call.nextAttemptAt?.toISOString()]).toEqual(['queued', 0, '2026-01-15T17:00:00.000Z']);
    expect(await report(id)).toEqual({
      dials: 0,
      unrestrictedDials: 0,
      dialsWithoutZone: 0,
      dialsByLocalHour: [],
      truncated: false,
      blocked: [
        { stage: 'waiting', reason: 'calling_window', calls: 1 },
        { stage: 'withheld', reason: 'calling_window', calls: 1 },
      ],
    });
  });

  it("reads only the batch's range of dial_audits, by its index, whatever the table holds", async () => {
    const id = await create([{ phone: '+12125550173', sim: 'completed' }], { calling_window: WINDOW });
    await drain();
    const [call] = await t.deps.db.prisma.call.findMany({ where: { batchId: id } });
    // 20,000 entries of 200 other batches (the foreign key only needs a call).
    await runStatement(
      t.deps.db,
      `INSERT INTO dial_audits (account_id, batch_id, call_id, attempt, number, alternate, dialled_at, allowed_by, zones, detail)
       SELECT $1, 'sched_other_' || (g % 200), $2, 1, '+12125550000', false, $3::timestamptz, 'window_open', ARRAY['America/New_York'], '{}'::jsonb
         FROM generate_series(1, 20000) g`,
      [a.account.id, call.id, '2026-01-15T15:00:00Z'],
    );
    await runStatement(t.deps.db, 'ANALYZE dial_audits');
    for (const [text, values] of [
      [TOTALS_SQL, [id]],
      [HOURS_SQL, [id, MAX_REPORT_HOUR_ROWS + 1]],
    ] as const) {
      const nodes = await planOf(t.deps.db, { text, values: [...values], settings: [] }, true);
      const audits = nodes.filter((n) => n['Relation Name'] === 'dial_audits');
      expect(audits.length).toBeGreaterThan(0);
      expect(audits.filter((n) => n['Node Type'] === 'Seq Scan')).toEqual([]);
      expect(nodes.some((n) => n['Index Name'] === 'dial_audits_batch_id_dialled_at_idx')).toBe(true);
    }
    expect((await report(id)).dialsByLocalHour).toEqual([{ zone: 'America/New_York', hour: 10, dials: 1 }]);
  });

  it("a batch never dialled reports nothing; another account's batch is 404 on both surfaces", async () => {
    const id = await create([{ phone: '+12125550172', sim: 'completed' }], { start_mode: 'manual' });
    expect(await report(id)).toEqual({ dials: 0, unrestrictedDials: 0, dialsWithoutZone: 0, dialsByLocalHour: [], truncated: false, blocked: [] });
    const stranger = await t.seedAccount();
    expect((await t.request('GET', `${CALL_BATCHES}/${id}/compliance-report`, { key: stranger.apiKey })).status).toBe(404);
    const gql = await t.gql(REPORT, { id }, stranger.apiKey);
    expect(gql.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect((await t.request('GET', `${CALL_BATCHES}/sched_nope/compliance-report`, { key: a.apiKey })).status).toBe(404);
  });
});
