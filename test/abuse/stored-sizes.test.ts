// Every value a client or a provider makes us store has a limit (docs/api.md, "Limits"), so a page of
// rows stays small in memory whatever clients send: the attack that found this stored a 30 MB
// metadata value, which the simulator copied into a transcript, and 200 such rows took the API
// past its heap limit.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { batchBody, CALL_BATCHES, validPhone } from '../helpers/batch-requests.ts';
import { insertBatch } from '../helpers/fixtures.ts';
import { testWorker } from '../helpers/dispatch.ts';
import { applyCallWrites } from '../../src/services/calls/call-transitions.ts';
import {
  CONTACT_METADATA_LIMITS,
  MAX_AGENTS_PER_ACCOUNT,
  MAX_OUTCOME_VALUE_LENGTH,
  MAX_PROVIDER_TEXT_LENGTH,
  MAX_SUMMARY_LENGTH,
  MAX_TRANSCRIPT_LENGTH,
} from '../../src/domain/limits.ts';

let t: TestApp;
let a: SeededAccount;

beforeAll(async () => {
  t = await createTestApp({ config: { SIM_CALL_MS: '50' } });
  a = await t.seedAccount({ limits: { rateLimitPerMinute: 100_000, maxBatchSize: 1_000 } });
});
afterAll(() => t.close());

const contact = (i: number, metadata: Record<string, unknown>) => ({ contact_id: `c${i}`, phone_number: validPhone(i), metadata });
/** Metadata as large as a contact may carry: 8 values of ~1,000 bytes each. */
const fullMetadata = () => Object.fromEntries(Array.from({ length: 8 }, (_, k) => [`field_${k}`, 'x'.repeat(950)]));

describe('contact metadata over its limits rejects that contact only', () => {
  it('REST: 201 with a validation_errors entry per oversized contact; nothing of it is stored', async () => {
    const res = await t.request('POST', CALL_BATCHES, {
      key: a.apiKey,
      body: batchBody(a, {
        contacts: [
          contact(1, { note: 'x'.repeat(30 * 1024 * 1024) }),
          contact(2, Object.fromEntries(Array.from({ length: 51 }, (_, k) => [`k${k}`, k]))),
          contact(3, { ['k'.repeat(101)]: 1 }),
          contact(4, Object.fromEntries(Array.from({ length: 9 }, (_, k) => [`k${k}`, 'y'.repeat(1_000)]))),
          contact(5, fullMetadata()),
        ],
      }),
    });
    expect(res.status).toBe(201);
    expect(res.body.message).toBe('Call batch created with validation errors');
    expect(res.body.data).toMatchObject({ total_contacts: 5, accepted_contacts: 1, rejected_contacts: 4 });
    expect(res.body.data.validation_errors).toEqual([
      { index: 1, external_id: 'c1', field: 'metadata', message: 'Metadata value longer than 2000 characters' },
      { index: 2, external_id: 'c2', field: 'metadata', message: 'Metadata has more than 50 keys' },
      { index: 3, external_id: 'c3', field: 'metadata', message: 'Metadata key longer than 100 characters' },
      { index: 4, external_id: 'c4', field: 'metadata', message: `Metadata is larger than ${CONTACT_METADATA_LIMITS.bytes} bytes` },
    ]);
    const calls = await t.deps.db.prisma.call.findMany({ where: { batchId: res.body.data.batch_id } });
    expect(calls.map((c) => c.externalId)).toEqual(['c5']);
  });

  it('REST: every contact oversized is the business 422 "All contacts are invalid"', async () => {
    const res = await t.request('POST', CALL_BATCHES, { key: a.apiKey, body: batchBody(a, { contacts: [contact(1, { note: 'x'.repeat(5_000) })] }) });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ detail: 'All contacts are invalid' });
  });

  it('GraphQL: the same rejection, in validationErrors', async () => {
    const res = await t.gql(
      `mutation($input: CreateCallBatchInput!) { createCallBatch(input: $input) { acceptedContacts validationErrors { index externalId field message } } }`,
      {
        input: {
          agentId: a.agent.id,
          versionId: a.version.id,
          interruption: true,
          useAlternateNumber: false,
          startMode: 'manual',
          scheduleDate: '2030-01-15',
          scheduleTime: '09:00',
          scheduleTimezone: 'America/New_York',
          contacts: [
            { contactId: 'g1', phoneNumber: validPhone(1), metadata: { note: 'x'.repeat(3_000) } },
            { contactId: 'g2', phoneNumber: validPhone(2) },
          ],
        },
      },
      a.apiKey,
    );
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.createCallBatch).toEqual({
      acceptedContacts: 1,
      validationErrors: [{ index: 1, externalId: 'g1', field: 'metadata', message: 'Metadata value longer than 2000 characters' }],
    });
  });
});

describe('batch fields over their limits are request errors', () => {
  it('REST: 422 envelope naming each field', async () => {
    const res = await t.request('POST', CALL_BATCHES, {
      key: a.apiKey,
      body: batchBody(a, {
        voice: 'v'.repeat(256),
        metadata: { blob: 'z'.repeat(3_000) },
        contacts: [{ contact_id: 'c'.repeat(256), name: 'n'.repeat(256), phone_number: validPhone(1) }],
      }),
    });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      status_code: 422,
      message: 'Missing required parameter',
      error: {
        code: 'MISSING_PARAMETER',
        details: [
          'voice: String should have at most 255 characters',
          'metadata: Value error, metadata value longer than 2000 characters',
          'contacts.0.contact_id: String should have at most 255 characters',
          'contacts.0.name: String should have at most 255 characters',
        ],
      },
      data: null,
    });
  });

  it('GraphQL catalogue inputs: names, prompt text and outcome keys', async () => {
    const agent = await t.gql(
      `mutation($name: String!, $keys: [String!]) { createAgent(input: { name: $name, voice: "alloy", outcomeKeys: $keys }) { id } }`,
      { name: 'a'.repeat(256), keys: Array.from({ length: 51 }, (_, i) => (i === 0 ? 'k'.repeat(101) : `k${i}`)) },
      a.apiKey,
    );
    expect(agent.body.errors?.[0]).toMatchObject({
      extensions: {
        code: 'MISSING_PARAMETER',
        details: [
          'name: String should have at most 255 characters',
          'outcomeKeys.0: String should have at most 100 characters',
          'outcomeKeys: List should have at most 50 items after validation, not 51',
        ],
      },
    });
    const version = await t.gql(
      `mutation($agentId: ID!, $prompt: String!) { createPromptVersion(input: { agentId: $agentId, name: "long", prompt: $prompt }) { id } }`,
      { agentId: a.agent.id, prompt: 'p'.repeat(32_769) },
      a.apiKey,
    );
    expect(version.body.errors?.[0]).toMatchObject({
      extensions: { code: 'MISSING_PARAMETER', details: ['prompt: String should have at most 32768 characters'] },
    });
  });
});

describe('an account catalogue is bounded, so its unpaged lists are', () => {
  it('the 501st agent is refused', async () => {
    const b = await t.seedAccount(); // with one agent of its own
    await t.deps.db.prisma.agent.createMany({
      data: Array.from({ length: MAX_AGENTS_PER_ACCOUNT - 2 }, (_, i) => ({
        id: `agt_cap_${i}_${b.account.id}`,
        accountId: b.account.id,
        name: `cap ${i}`,
        voice: 'alloy',
      })),
    });
    const create = (name: string) =>
      t.gql(`mutation($name: String!) { createAgent(input: { name: $name, voice: "alloy" }) { id } }`, { name }, b.apiKey);
    expect((await create('last one')).body.errors).toBeUndefined();
    const refused = await create('one too many');
    expect(refused.body.errors?.[0]?.message).toBe(`An account holds at most ${MAX_AGENTS_PER_ACCOUNT} agents`);
    expect(await t.deps.db.prisma.agent.count({ where: { accountId: b.account.id } })).toBe(MAX_AGENTS_PER_ACCOUNT);
  });
});

describe('what a provider reports is stored within limits', () => {
  it('transcript, summary, outcomes and provider texts are cut when stored', async () => {
    const { batch, calls } = await insertBatch(t.deps, a, {
      contacts: 1,
      status: 'running',
      callOverrides: () => ({ status: 'in_progress', leaseOwner: 'w1', leaseExpiresAt: new Date(Date.now() + 60_000) }),
      batch: { queued: 0, inProgress: 1 },
    });
    const at = t.clock.now();
    const outcomes = Object.fromEntries(Array.from({ length: 80 }, (_, i) => [`k${i}`, 'o'.repeat(5_000)]));
    await applyCallWrites(
      t.deps,
      [
        {
          callId: calls[0].id,
          batchId: batch.id,
          accountId: a.account.id,
          owner: 'w1',
          from: 'in_progress',
          to: 'completed',
          events: [{ from: 'in_progress', to: 'completed', at }],
          set: {
            completedAt: at,
            disconnectReason: 'd'.repeat(10_000),
            llmTranscript: 'Agent: ' + '😀'.repeat(MAX_TRANSCRIPT_LENGTH),
            transcriptStatus: 'ready',
            summary: 's'.repeat(1_000_000),
            outcomes,
          },
          releaseLease: true,
        },
      ],
      at,
    );
    const stored = await t.deps.db.prisma.call.findUniqueOrThrow({ where: { id: calls[0].id } });
    expect(stored.status).toBe('completed');
    expect(stored.llmTranscript!.length).toBeLessThanOrEqual(MAX_TRANSCRIPT_LENGTH);
    expect(stored.llmTranscript!.endsWith('😀')).toBe(true); // never cut through a surrogate pair
    expect(stored.summary).toHaveLength(MAX_SUMMARY_LENGTH);
    expect(stored.disconnectReason).toHaveLength(MAX_PROVIDER_TEXT_LENGTH);
    const storedOutcomes = stored.outcomes as Record<string, string>;
    expect(Object.keys(storedOutcomes)).toHaveLength(50);
    expect(Object.values(storedOutcomes).every((v) => v.length === MAX_OUTCOME_VALUE_LENGTH)).toBe(true);
  });

  it('a page of 200 simulated results from contacts with the largest metadata stays small', async () => {
    const contacts = Array.from({ length: 200 }, (_, i) => contact(i + 1, fullMetadata()));
    const created = await t.request('POST', CALL_BATCHES, {
      key: a.apiKey,
      body: batchBody(a, { start_mode: 'immediate', concurrency: 50, contacts }),
    });
    expect(created.status).toBe(201);
    await testWorker(t.deps).drain({ timeoutMs: 120_000 });
    const page = await t.request('GET', `${CALL_BATCHES}/${created.body.data.batch_id}/results?limit=200`, { key: a.apiKey });
    expect(page.status).toBe(200);
    expect(page.body.data.items).toHaveLength(200);
    const longest = Math.max(...page.body.data.items.map((c: { llm_transcript: string | null }) => c.llm_transcript?.length ?? 0));
    // The simulator reads back at most 20 fields of at most 200 characters: ~5 KB, not 8 KB of metadata per field.
    expect(longest).toBeGreaterThan(0);
    expect(longest).toBeLessThan(6_000);
    expect(JSON.stringify(page.body).length).toBeLessThan(200 * 8_000);
  });
});

describe('values stored before the limits existed', () => {
  it('the migration cuts them to the limits', async () => {
    const { calls } = await insertBatch(t.deps, a, {
      contacts: 2,
      callOverrides: (i) =>
        i === 0
          ? { llmTranscript: 't'.repeat(MAX_TRANSCRIPT_LENGTH + 10), summary: 's'.repeat(20_000), metadata: { note: 'm'.repeat(40_000) } }
          : { metadata: { note: 'kept' } },
    });
    const sql = fs.readFileSync(new URL('../../prisma/migrations/20261125030000_stored_value_limits/migration.sql', import.meta.url), 'utf8');
    for (const statement of sql
      .replace(/--.*$/gm, '')
      .split(';')
      .map((s) => s.trim())
      .filter(Boolean)) {
      await t.deps.db.prisma.$executeRawUnsafe(statement);
    }
    const [cut, kept] = await Promise.all(calls.map((c) => t.deps.db.prisma.call.findUniqueOrThrow({ where: { id: c.id } })));
    expect(cut.llmTranscript).toHaveLength(MAX_TRANSCRIPT_LENGTH);
    expect(cut.summary).toHaveLength(MAX_SUMMARY_LENGTH);
    expect(cut.metadata).toEqual({});
    expect(kept.metadata).toEqual({ note: 'kept' });
  });
});
