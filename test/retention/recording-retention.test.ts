// Recording retention (RECORDING_RETENTION_DAYS) on a controllable clock: recordings stored before
// the retention are deleted and their calls read as calls without a recording (recording_available
// false, recording_url null), in REST, GraphQL and the CSV export; links handed out before answer
// 404. Newer recordings, the calls and their batches stay.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { batchBody, CALL_BATCHES } from '../helpers/batch-requests.ts';
import { testWorker } from '../helpers/dispatch.ts';
import { loadConfig } from '../../src/config.ts';
import { dropOldRecordings } from '../../src/services/retention/drop-recordings.ts';

const T0 = new Date('2031-05-01T08:00:00.000Z');
const DAY = 86_400_000;
const at = (ms: number) => new Date(T0.getTime() + ms);

let t: TestApp;
let a: SeededAccount;
beforeAll(async () => {
  t = await createTestApp({ config: { RECORDING_RETENTION_DAYS: '7' } });
  a = await t.seedAccount();
});
afterAll(() => t.close());

async function runBatch(sims: string[]): Promise<string> {
  const contacts = sims.map((sim, i) => ({ contact_id: `c${i + 1}`, phone_number: `+1415555${String(3000 + i)}`, metadata: { sim } }));
  const res = await t.request('POST', CALL_BATCHES, { key: a.apiKey, body: batchBody(a, { contacts, recording_enabled: true }) });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  await testWorker(t.deps).drain();
  return res.body.data.batch_id;
}

type Item = { call_id: string; recording_available: boolean | null; recording_url: string | null; status: string };
const callsOf = async (batchId: string): Promise<Item[]> =>
  (await t.request('GET', `${CALL_BATCHES}/${batchId}/calls`, { key: a.apiKey })).body.data.items;
const recordingsOf = async (batchId: string) =>
  (await t.deps.db.prisma.recording.findMany({ where: { call: { batchId } }, select: { callId: true } })).map((r) => r.callId).sort();

describe('recording retention', () => {
  it('drops recordings stored before the retention, a chunk at a time; their calls read as calls without one', async () => {
    expect(loadConfig({}).RECORDING_RETENTION_DAYS).toBe(0);
    t.clock.set(T0);
    const old = await runBatch(['completed', 'completed', 'no_answer', 'completed']);
    t.clock.set(at(2 * DAY));
    const recent = await runBatch(['completed', 'busy']);

    const oldCalls = await callsOf(old);
    expect(oldCalls.map((c) => c.recording_available)).toEqual([true, true, false, true]);
    const link = new URL(oldCalls[0]!.recording_url!);
    expect((await t.app.fetch(new Request(`http://test.local${link.pathname}${link.search}`))).status).toBe(200);
    const csvBefore = await t.request('GET', `${CALL_BATCHES}/${old}/results.csv`, { key: a.apiKey });
    expect(String(csvBefore.body)).toContain('/recordings/');
    const recentBefore = await callsOf(recent);
    const recentRecordings = await recordingsOf(recent);
    expect(recentRecordings).toHaveLength(1);

    // A link handed out just before the recordings are old enough.
    t.clock.set(at(7 * DAY - 60_000));
    const late = new URL((await callsOf(old))[0]!.recording_url!);
    // A minute past 7 days after the old batch's recordings were stored.
    t.clock.set(at(7 * DAY + 60_000));
    expect(await dropOldRecordings(t.deps, { chunk: 1 })).toBe(3);

    expect(await recordingsOf(old)).toEqual([]);
    const after = await callsOf(old);
    expect(after.map((c) => [c.status, c.recording_available, c.recording_url])).toEqual([
      ['completed', false, null],
      ['completed', false, null],
      ['no_answer', false, null],
      ['completed', false, null],
    ]);
    // The rest of each call record is as it was.
    const strip = (c: Item) => ({ ...c, recording_available: undefined, recording_url: undefined });
    expect(after.map(strip)).toEqual(oldCalls.map(strip));
    const gql = await t.gql('query($id: ID!) { call(id: $id) { recordingAvailable recordingUrl } }', { id: oldCalls[0]!.call_id }, a.apiKey);
    expect(gql.body.data.call).toEqual({ recordingAvailable: false, recordingUrl: null });
    const csv = await t.request('GET', `${CALL_BATCHES}/${old}/results.csv`, { key: a.apiKey });
    expect(csv.status).toBe(200);
    expect(String(csv.body)).not.toContain('/recordings/');
    // The link handed out before, still valid: the recording is gone.
    const gone = await t.app.fetch(new Request(`http://test.local${late.pathname}${late.search}`));
    expect({ status: gone.status, body: await gone.json() }).toEqual({ status: 404, body: { detail: 'Recording not found' } });

    // The newer batch is untouched; the old one and its calls stay.
    expect(await recordingsOf(recent)).toEqual(recentRecordings);
    expect((await callsOf(recent)).map((c) => c.recording_available)).toEqual(recentBefore.map((c) => c.recording_available));
    expect((await t.request('GET', `${CALL_BATCHES}/${old}`, { key: a.apiKey })).status).toBe(200);
    expect(await dropOldRecordings(t.deps)).toBe(0);

    // With 0 nothing goes, however old.
    t.clock.set(at(3650 * DAY));
    expect(await dropOldRecordings({ ...t.deps, config: { ...t.deps.config, RECORDING_RETENTION_DAYS: 0 } })).toBe(0);
    expect(await recordingsOf(recent)).toEqual(recentRecordings);
  });
});
