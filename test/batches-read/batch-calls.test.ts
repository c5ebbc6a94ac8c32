import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { CALL_RECORD_KEYS, callInState, insertBatch, type InsertedBatch } from '../helpers/fixtures.ts';
import { verifyRecordingSignature } from '../../src/services/recording-url.ts';
import type { CallStatus } from '../../src/domain/call-state.ts';
import { generateCallRecording, WAV_CONTENT_TYPE } from '../../src/dispatch/recording/wav.ts';

let t: TestApp;
let a: SeededAccount;
let other: SeededAccount;
let big: InsertedBatch;
const AT = new Date('2026-06-01T08:00:00.000Z');
// Every 5th call completed, every 7th no_answer, the rest pending; call 3 dialled its alternate.
const statusOf = (i: number): CallStatus => (i % 5 === 0 ? 'completed' : i % 7 === 0 ? 'no_answer' : 'pending');

beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount();
  other = await t.seedAccount();
  big = await insertBatch(t.deps, a, {
    contacts: 250,
    status: 'running',
    createdAt: AT,
    // The batch's voice differs from the agent's: records show the batch's.
    batch: { voice: 'verse' },
    callOverrides: (i) => ({
      ...callInState(statusOf(i), i, AT),
      ...(i === 2 ? { alternatePhone: '+14155559999', dialedNumber: '+14155559999', usedAlternate: true } : {}),
    }),
  });
});
afterAll(() => t.close());

const calls = (batchId: string, query = '', key: string | null = a.apiKey) =>
  t.request('GET', `/api/v1/public/call-batches/${batchId}/calls${query}`, { key });
const seqs = (res: { body: any }) => res.body.data.items.map((c: { contact_id: string }) => Number(c.contact_id.split('-')[1]));
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, k) => from + k);

describe('GET /call-batches/{batch_id}/calls', () => {
  it('default page: 100 calls in submission order', async () => {
    const res = await calls(big.batch.id);
    expect(res.status).toBe(200);
    expect(res.body.message).toBe('Batch calls fetched successfully');
    expect(seqs(res)).toEqual(range(1, 100));
    expect(res.body.data.pagination).toEqual({ page: 1, limit: 100, total: 250, has_more: true });
  });

  it('pages to the end; past the end is empty', async () => {
    const p3 = await calls(big.batch.id, '?page=3');
    expect(seqs(p3)).toEqual(range(201, 250));
    expect(p3.body.data.pagination).toEqual({ page: 3, limit: 100, total: 250, has_more: false });
    const p4 = await calls(big.batch.id, '?page=4');
    expect(p4.body.data).toEqual({ items: [], pagination: { page: 4, limit: 100, total: 250, has_more: false } });
    const max = await calls(big.batch.id, '?limit=200&page=2');
    expect(seqs(max)).toEqual(range(201, 250));
    expect(max.body.data.pagination).toEqual({ page: 2, limit: 200, total: 250, has_more: false });
    expect((await calls(big.batch.id, '?limit=50&page=5')).body.data.pagination).toEqual({ page: 5, limit: 50, total: 250, has_more: false });
  });

  it('status filter keeps submission order and counts only matches', async () => {
    const expected = range(1, 250).filter((s) => statusOf(s - 1) === 'completed');
    const res = await calls(big.batch.id, '?status=completed&limit=20');
    expect(seqs(res)).toEqual(expected.slice(0, 20));
    expect(res.body.data.pagination).toEqual({ page: 1, limit: 20, total: expected.length, has_more: true });
    expect(res.body.data.items.every((c: { status: string }) => c.status === 'completed')).toBe(true);
    const noAnswer = await calls(big.batch.id, '?status=no_answer&limit=200');
    expect(seqs(noAnswer)).toEqual(range(1, 250).filter((s) => statusOf(s - 1) === 'no_answer'));
    expect((await calls(big.batch.id, '?status=busy')).body.data).toEqual({
      items: [],
      pagination: { page: 1, limit: 100, total: 0, has_more: false },
    });
  });

  it('external_id filter, alone and with status', async () => {
    const one = await calls(big.batch.id, '?external_id=contact-7');
    expect(seqs(one)).toEqual([7]);
    expect(one.body.data.pagination).toEqual({ page: 1, limit: 100, total: 1, has_more: false });
    expect(seqs(await calls(big.batch.id, '?external_id=contact-6&status=completed'))).toEqual([6]);
    expect(seqs(await calls(big.batch.id, '?external_id=contact-7&status=completed'))).toEqual([]);
    expect(seqs(await calls(big.batch.id, '?external_id=nobody'))).toEqual([]);
  });

  it('a call not yet made: contract fields with nulls, call_status = status, external_id = contact_id', async () => {
    const item = (await calls(big.batch.id, '?external_id=contact-2')).body.data.items[0];
    const row = big.calls[1];
    expect(Object.keys(item)).toEqual(CALL_RECORD_KEYS);
    expect(item).toEqual({
      call_id: row.id,
      batch_id: big.batch.id,
      contact_id: 'contact-2',
      external_id: 'contact-2',
      phone_number: row.phoneNumber,
      agent_id: a.agent.id,
      agent_name: 'Sales Agent',
      version_id: a.version.id,
      version_name: 'v1',
      voice: 'verse',
      status: 'pending',
      call_status: 'pending',
      transcript_status: null,
      duration_seconds: null,
      answer_duration_seconds: null,
      timestamp: null,
      created_at: '2026-06-01T08:00:00.000Z',
      completed_at: null,
      hangup_by: null,
      disconnect_reason: null,
      summary: null,
      outcomes: null,
      recording_available: null,
      recording_url: null,
      llm_transcript: null,
      attempts: 0,
      next_attempt_at: null,
      timezone: null,
      retry_reason: null,
      primary_phone_number: row.phoneNumber,
      consent: null,
      voicemail_left: null,
      from_number: null,
    });
  });

  it('a finished call: timings, analysis and a signed, expiring recording URL', async () => {
    const item = (await calls(big.batch.id, '?external_id=contact-6')).body.data.items[0];
    const row = big.calls[5];
    expect(item).toMatchObject({
      call_id: row.id,
      status: 'completed',
      call_status: 'completed',
      transcript_status: 'ready',
      duration_seconds: row.durationSeconds,
      answer_duration_seconds: row.answerDurationSeconds,
      timestamp: row.timestamp!.toISOString(),
      completed_at: row.completedAt!.toISOString(),
      hangup_by: row.hangupBy,
      disconnect_reason: row.disconnectReason,
      summary: row.summary,
      outcomes: row.outcomes,
      recording_available: true,
      llm_transcript: row.llmTranscript,
      voice: 'verse',
    });
    const url = new URL(item.recording_url);
    expect(url.pathname).toBe(`/recordings/${row.id}.wav`);
    const expires = url.searchParams.get('expires');
    expect(Number(expires) * 1000).toBeGreaterThan(t.clock.now().getTime());
    expect(verifyRecordingSignature(t.deps, row.id, expires, url.searchParams.get('signature'))).toBe(true);
    expect(verifyRecordingSignature(t.deps, big.calls[4].id, expires, url.searchParams.get('signature'))).toBe(false);
  });

  it('phone_number is the number dialled (the alternate when used)', async () => {
    expect((await calls(big.batch.id, '?external_id=contact-3')).body.data.items[0].phone_number).toBe('+14155559999');
  });

  it('404 for an absent or foreign batch, also with filters', async () => {
    const { batch: foreign } = await insertBatch(t.deps, other, { contacts: 2 });
    for (const id of [foreign.id, 'sched_missing']) {
      for (const q of ['', '?status=pending&limit=5']) {
        const res = await calls(id, q);
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ detail: 'Call batch not found' });
      }
    }
    expect((await calls(foreign.id, '', other.apiKey)).body.data.pagination.total).toBe(2);
    expect((await calls(big.batch.id, '', other.apiKey)).status).toBe(404);
  });

  it('bad query values: 422 envelope', async () => {
    const cases: [string, string[]][] = [
      ['?limit=201', ['query.limit: Input should be less than or equal to 200']],
      ['?limit=0', ['query.limit: Input should be greater than or equal to 1']],
      ['?page=1e3', ['query.page: Input should be a valid integer, unable to parse string as an integer']],
      [
        '?status=done',
        [
          "query.status: Input should be 'pending', 'queued', 'ringing', 'answered', 'in_progress', 'completed', 'failed', 'no_answer', 'busy' or 'cancelled'",
        ],
      ],
    ];
    for (const [query, details] of cases) {
      const res = await calls(big.batch.id, query);
      expect(res.status).toBe(422);
      expect(res.body).toEqual({
        status_code: 422,
        message: 'Missing required parameter',
        error: { code: 'MISSING_PARAMETER', details },
        data: null,
      });
    }
  });

  it('401 detail without a valid key', async () => {
    for (const key of [null, 'sk_wrongwrongwrongwrongwrongwrongwrongwrong', 'not-a-key']) {
      const res = await calls(big.batch.id, '?limit=5', key);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ detail: 'Invalid API key' });
    }
  });

  it('403 FORBIDDEN envelope for an account whose API access is disabled', async () => {
    const disabled = await t.seedAccount({ apiAccessEnabled: false });
    const { batch } = await insertBatch(t.deps, disabled, { contacts: 1 });
    const res = await calls(batch.id, '', disabled.apiKey);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({
      status_code: 403,
      message: 'API access is not enabled for this account',
      error: { code: 'FORBIDDEN', details: [] },
      data: null,
    });
  });

  it('an empty batch lists nothing', async () => {
    const { batch } = await insertBatch(t.deps, a, { contacts: 0 });
    expect((await calls(batch.id)).body.data).toEqual({ items: [], pagination: { page: 1, limit: 100, total: 0, has_more: false } });
  });
});

describe('recording_url over HTTP', () => {
  const fetchUrl = (href: string) => {
    const u = new URL(href);
    return t.app.fetch(new Request(`http://test.local${u.pathname}${u.search}`));
  };
  const denied = { detail: 'Recording link is invalid or has expired' };

  it('serves audio/wav until the link expires, then 403; a tampered link is 403', async () => {
    const row = big.calls[5];
    const wav = generateCallRecording({ durationMs: 1_000, seed: 7 });
    // Base64 through SQL: the PGlite adapter takes no bytea parameters.
    await t.deps.db.prisma.$executeRaw`INSERT INTO recordings (call_id, account_id, content_type, data)
      VALUES (${row.id}, ${a.account.id}, ${WAV_CONTENT_TYPE}, decode(${Buffer.from(wav).toString('base64')}, 'base64'))`;
    t.clock.set(new Date('2026-06-02T12:00:30.000Z'));
    const href: string = (await calls(big.batch.id, '?external_id=contact-6')).body.data.items[0].recording_url;
    const url = new URL(href);
    const expires = Number(url.searchParams.get('expires'));
    const signature = url.searchParams.get('signature')!;
    // The link lives at least the documented hour from when it was handed out.
    expect(expires * 1000).toBeGreaterThanOrEqual(t.clock.now().getTime() + 3_600_000);

    const ok = await fetchUrl(href);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toBe('audio/wav');
    expect(Buffer.from(await ok.arrayBuffer())).toEqual(Buffer.from(wav));
    // HEAD answers like GET, without the body; a bad signature is the same 403.
    const u = new URL(href);
    const head = await t.app.fetch(new Request(`http://test.local${u.pathname}${u.search}`, { method: 'HEAD' }));
    expect({ status: head.status, type: head.headers.get('content-type'), length: head.headers.get('content-length') }).toEqual({
      status: 200,
      type: 'audio/wav',
      length: String(wav.byteLength),
    });
    expect(await head.text()).toBe('');
    const badHead = await t.app.fetch(
      new Request(`http://test.local${u.pathname}?expires=${u.searchParams.get('expires')}&signature=x`, { method: 'HEAD' }),
    );
    expect(badHead.status).toBe(403);

    // Still valid at the expiry instant, refused a millisecond later.
    t.clock.set(new Date(expires * 1000));
    expect((await fetchUrl(href)).status).toBe(200);
    t.clock.set(new Date(expires * 1000 + 1));
    const expired = await fetchUrl(href);
    expect(expired.status).toBe(403);
    expect(await expired.json()).toEqual(denied);

    // Back inside the lifetime: any change to the signed parts is refused.
    t.clock.set(new Date('2026-06-02T12:00:30.000Z'));
    const flipped = signature.slice(0, -1) + (signature.endsWith('A') ? 'B' : 'A');
    const tampered = [
      `${url.pathname}?expires=${expires}&signature=${flipped}`,
      // A later expiry with the old signature: the expiry is signed too.
      `${url.pathname}?expires=${expires + 86_400}&signature=${signature}`,
      // Another call's recording with this call's signature.
      `/recordings/${big.calls[4].id}.wav?expires=${expires}&signature=${signature}`,
      `${url.pathname}?expires=${expires}`,
      `${url.pathname}?expires=${expires}&signature=`,
      `${url.pathname}?expires=soon&signature=${signature}`,
    ];
    for (const path of tampered) {
      const res = await t.app.fetch(new Request(`http://test.local${path}`));
      expect({ path, status: res.status, body: await res.json() }).toEqual({ path, status: 403, body: denied });
    }
    // The untouched link still works: nothing above was a clock or storage problem.
    expect((await fetchUrl(href)).status).toBe(200);
  });
});
