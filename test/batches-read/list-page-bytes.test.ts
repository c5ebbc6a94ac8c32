// The REST list pages byte for byte: each response body must equal the JSON.stringify of the
// contract's shape built here, independently of src's mappers and SQL, from the rows Prisma reads.
// The pages are read by raw statements and compiled GraphQL documents (docs/architecture.md, "Hot
// reads"); a column read differently, a date printed differently, a key out of order or a field
// missing changes the bytes and fails this.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { addAgent, callInState, insertBatch, type InsertedBatch } from '../helpers/fixtures.ts';
import { recordingUrl } from '../../src/services/recording-url.ts';
import type { Batch, Call } from '../../src/generated/prisma/client.ts';
import type { CallStatus } from '../../src/domain/call-state.ts';
import { retryReasonsByCallIds } from '../../src/services/calls/retry-reasons.ts';

let t: TestApp;
let a: SeededAccount;
let mixed: InsertedBatch;
let support: Pick<SeededAccount, 'agent' | 'version'>;
const AT = new Date('2026-07-01T08:00:00.000Z');
const STATUSES: CallStatus[] = ['completed', 'no_answer', 'pending', 'queued', 'in_progress', 'busy', 'failed', 'cancelled', 'completed', 'ringing'];

beforeAll(async () => {
  t = await createTestApp();
  // The recording links' expiry follows the clock: a frozen one makes them the same in both readings.
  t.clock.set(new Date('2026-07-02T10:00:00.000Z'));
  a = await t.seedAccount();
  support = await addAgent(t.deps, a, 'Support "Agent" ✓');
  mixed = await insertBatch(t.deps, a, {
    contacts: 23,
    status: 'running',
    createdAt: AT,
    batch: { voice: 'verse' },
    callOverrides: (i) => ({
      ...callInState(STATUSES[i % STATUSES.length], i, AT, { interested: i % 2 ? 'no' : 'yes', 'note "x"': 'é\n\u2028' }),
      ...(i === 2 ? { alternatePhone: '+14155559999', dialedNumber: '+14155559999', usedAlternate: true } : {}),
      ...(i === 3 ? { nextAttemptAt: new Date('2026-07-03T09:00:00.123Z'), timezone: 'America/New_York,America/Chicago', attempts: 2 } : {}),
      // Not an object: shown as null.
      ...(i === 4 ? { outcomes: ['yes'] } : {}),
      ...(i === 5 ? { summary: 'Line one\nline "two" \\ </script>' } : {}),
    }),
  });
  await insertBatch(t.deps, a, {
    contacts: 4,
    status: 'completed',
    createdAt: new Date(AT.getTime() + 60_000),
    agent: support,
    callOverrides: (i) => callInState('completed', i, AT),
  });
  await insertBatch(t.deps, a, {
    contacts: 2,
    status: 'cancelled',
    createdAt: new Date(AT.getTime() - 86_400_000),
    callOverrides: (i) => callInState('cancelled', i, AT),
  });
});
afterAll(() => t.close());

async function bodyOf(path: string): Promise<string> {
  const res = await t.app.fetch(new Request(`http://test.local/api/v1/public${path}`, { headers: { authorization: `Bearer ${a.apiKey}` } }));
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return text;
}

const iso = (d: Date | null) => (d === null ? null : d.toISOString());

async function labelsOf(batchId: string) {
  const b = await t.deps.db.prisma.batch.findUniqueOrThrow({ where: { id: batchId }, include: { agent: true, promptVersion: true } });
  return { agentName: b.agent.name, versionName: b.promptVersion.name, voice: b.voice };
}

/** The contract's Call record, key for key in the spec's order. */
async function callRecordOf(c: Call) {
  const labels = await labelsOf(c.batchId);
  const outcomes = c.outcomes !== null && typeof c.outcomes === 'object' && !Array.isArray(c.outcomes) ? c.outcomes : null;
  return {
    call_id: c.id,
    batch_id: c.batchId,
    contact_id: c.externalId,
    external_id: c.externalId,
    phone_number: c.dialedNumber ?? c.phoneNumber,
    agent_id: c.agentId,
    agent_name: labels.agentName,
    version_id: c.promptVersionId,
    version_name: labels.versionName,
    voice: labels.voice,
    status: c.status,
    call_status: c.status,
    transcript_status: c.transcriptStatus,
    duration_seconds: c.durationSeconds,
    answer_duration_seconds: c.answerDurationSeconds,
    timestamp: iso(c.timestamp),
    created_at: iso(c.createdAt),
    completed_at: iso(c.completedAt),
    hangup_by: c.hangupBy,
    disconnect_reason: c.disconnectReason,
    summary: c.summary,
    outcomes,
    recording_available: c.recordingAvailable,
    recording_url: c.recordingAvailable ? recordingUrl(t.deps, c.id) : null,
    llm_transcript: c.llmTranscript,
    attempts: c.attempts,
    next_attempt_at: iso(c.nextAttemptAt),
    timezone: c.timezone,
    // How the last attempt ended, from the call's history (none here: the rows are inserted).
    retry_reason: (await retryReasonsByCallIds(t.deps.db, c.accountId, [c.id]))[0],
    primary_phone_number: c.phoneNumber,
    consent: c.consentSource ? { source: c.consentSource, timestamp: iso(c.consentAt), text: c.consentText, reference: c.consentReference } : null,
    voicemail_left: c.voicemailLeft,
    from_number: c.fromNumber,
  };
}

const batchListItemOf = (b: Batch) => ({
  batch_id: b.id,
  agent_id: b.agentId,
  version_id: b.promptVersionId,
  status: b.status,
  total_contacts: b.totalContacts,
  queued: b.queued,
  in_progress: b.inProgress,
  completed: b.completed,
  failed: b.failed,
  cancelled: b.cancelled,
  created_at: iso(b.createdAt),
});

const envelope = (message: string, data: unknown) => JSON.stringify({ status_code: 200, message, error: null, data });
const paginationOf = (page: number, limit: number, total: number) => ({ page, limit, total, has_more: (page - 1) * limit + limit < total });

async function callsPage(where: object, orderBy: object | object[], page: number, limit: number) {
  const prisma = t.deps.db.prisma;
  const [rows, total] = await Promise.all([
    prisma.call.findMany({ where, orderBy, skip: (page - 1) * limit, take: limit }),
    prisma.call.count({ where }),
  ]);
  return { items: await Promise.all(rows.map(callRecordOf)), pagination: paginationOf(page, limit, total) };
}

describe('REST list pages, byte for byte against the contract built from the rows', () => {
  const batchId = () => mixed.batch.id;
  const BY_SEQ = { seq: 'asc' };

  it('calls: unfiltered, by status, by contact, and a later page', async () => {
    const cases: [string, object, number, number][] = [
      ['?limit=200', {}, 1, 200],
      ['', {}, 1, 100],
      ['?status=completed', { status: 'completed' }, 1, 100],
      ['?external_id=contact-4', { externalId: 'contact-4' }, 1, 100],
      ['?limit=5&page=3', {}, 3, 5],
      ['?limit=5&page=9', {}, 9, 5],
    ];
    for (const [query, where, page, limit] of cases) {
      const expected = envelope('Batch calls fetched successfully', await callsPage({ batchId: batchId(), ...where }, BY_SEQ, page, limit));
      expect(await bodyOf(`/call-batches/${batchId()}/calls${query}`), query).toBe(expected);
    }
  });

  it('results: unfiltered, by status and transcript, by outcome', async () => {
    const outcomeYes = (await t.deps.db.prisma.call.findMany({ where: { batchId: batchId() } }))
      // An object holding the value (an array of outcomes is not an object of them).
      .filter((c) => c.outcomes !== null && typeof c.outcomes === 'object' && !Array.isArray(c.outcomes) && Object.values(c.outcomes).includes('yes'))
      .map((c) => c.id);
    const cases: [string, object, number, number][] = [
      ['?limit=200', {}, 1, 200],
      ['?status=completed&transcript_status=ready', { status: 'completed', transcriptStatus: 'ready' }, 1, 100],
      ['?outcome=yes&limit=2&page=2', { id: { in: outcomeYes } }, 2, 2],
    ];
    for (const [query, where, page, limit] of cases) {
      const data = { status: 'pending', ...(await callsPage({ batchId: batchId(), ...where }, BY_SEQ, page, limit)) };
      expect(await bodyOf(`/call-batches/${batchId()}/results${query}`), query).toBe(envelope('Batch results fetched successfully', data));
    }
  });

  it('call records: a day of several batches and agents, and one agent', async () => {
    const day = { accountId: a.account.id, createdAt: { gte: new Date('2026-07-01T00:00:00.000Z'), lte: new Date('2026-07-01T23:59:59.999Z') } };
    const NEWEST = [{ createdAt: 'desc' }, { id: 'desc' }];
    const cases: [string, object, number, number][] = [
      ['&page_size=200', day, 1, 200],
      ['', day, 1, 50],
      [`&agent_id=${support.agent.id}&page_size=3&page=2`, { ...day, agentId: support.agent.id }, 2, 3],
    ];
    for (const [query, where, page, limit] of cases) {
      const expected = envelope('Call records fetched successfully', await callsPage(where, NEWEST, page, limit));
      expect(await bodyOf(`/call-records?start_date=2026-07-01&end_date=2026-07-01${query}`), query).toBe(expected);
    }
  });

  it('batch list: all, by status, by agent and creation time', async () => {
    const NEWEST = [{ createdAt: 'desc' as const }, { id: 'desc' as const }];
    const cases: [string, object, number, number][] = [
      ['?limit=200', {}, 1, 200],
      ['?status=active', { status: { in: ['queued', 'dispatching', 'running', 'paused'] } }, 1, 50],
      ['?status=completed', { status: 'completed' }, 1, 50],
      [`?agent_id=${a.agent.id}&created_at_from=2026-07-01T00:00:00Z&limit=1&page=1`, { agentId: a.agent.id, createdAt: { gte: AT } }, 1, 1],
    ];
    for (const [query, where, page, limit] of cases) {
      const full = { accountId: a.account.id, ...where };
      const [rows, total] = await Promise.all([
        t.deps.db.prisma.batch.findMany({ where: full, orderBy: NEWEST, skip: (page - 1) * limit, take: limit }),
        t.deps.db.prisma.batch.count({ where: full }),
      ]);
      const expected = envelope('Call batches fetched successfully', {
        items: rows.map(batchListItemOf),
        pagination: paginationOf(page, limit, total),
      });
      expect(await bodyOf(`/call-batches${query}`), query).toBe(expected);
    }
  });
});
