// Batch creation: the Create result, what is stored, and how settings are resolved and defaulted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { batchBody, CALL_BATCHES, makeContacts, validPhone } from '../helpers/batch-requests.ts';
import { addDidNumber, createAgent, createPromptVersion } from '../../src/services/accounts/catalog.ts';
import { updateAccount } from '../../src/services/accounts/accounts.ts';

let t: TestApp;
let a: SeededAccount;

beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount({
    batchConcurrency: 4,
    recordingEnabled: true,
    limits: { maxConcurrentCalls: 10, maxCallDurationSeconds: 300, maxBatchSize: 1000 },
  });
});
afterAll(() => t.close());

const RESULT_KEYS = [
  'batch_id',
  'agent_id',
  'version_id',
  'status',
  'start_mode',
  'total_contacts',
  'accepted_contacts',
  'rejected_contacts',
  'validation_errors',
  'concurrency',
  'created_at',
  'idempotent',
  // Beside the contract's fields, after them (issue 33): docs/api.md "Create warnings".
  'warnings',
];

const post = (body: unknown, key = a.apiKey) => t.request('POST', CALL_BATCHES, { key, body });
const storedBatch = (id: string) => t.deps.db.prisma.batch.findUniqueOrThrow({ where: { id } });
const storedCalls = (batchId: string) => t.deps.db.prisma.call.findMany({ where: { batchId }, orderBy: { seq: 'asc' } });

describe('POST /call-batches: result', () => {
  it('returns 201 with every field of the Create result, created_at ISO 8601 UTC', async () => {
    t.clock.set(new Date('2029-06-01T12:34:56.789Z'));
    const res = await post(batchBody(a, { contacts: makeContacts(3) }));
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      status_code: 201,
      message: 'Call batch created successfully',
      error: null,
      data: {
        batch_id: expect.stringMatching(/^sched_[0-9a-f]{32}$/),
        agent_id: a.agent.id,
        version_id: a.version.id,
        status: 'pending',
        start_mode: 'immediate',
        total_contacts: 3,
        accepted_contacts: 3,
        rejected_contacts: 0,
        validation_errors: [],
        concurrency: 4,
        created_at: '2029-06-01T12:34:56.789Z',
        idempotent: false,
        // Beside the contract's fields: this batch has no calling window (docs/campaigns.md "Create warnings").
        warnings: [expect.objectContaining({ code: 'no_protective_window', contact_count: null })],
      },
    });
    expect(Object.keys(res.body.data)).toEqual(RESULT_KEYS);
  });

  it.each([
    ['immediate', 'queued'],
    ['manual', 'paused'],
    ['scheduled', 'pending'],
  ])('start_mode %s: the result says pending, the stored batch is %s', async (startMode, stored) => {
    const res = await post(batchBody(a, { start_mode: startMode }));
    expect(res.status).toBe(201);
    expect(res.body.data.status).toBe('pending');
    expect(res.body.data.start_mode).toBe(startMode);
    expect((await storedBatch(res.body.data.batch_id)).status).toBe(stored);
  });
});

describe('POST /call-batches: stored state', () => {
  it('stores the batch with resolved settings, counters and schedule', async () => {
    t.clock.set(new Date('2029-07-01T08:00:00.123Z'));
    const res = await post(
      batchBody(a, {
        start_mode: 'scheduled',
        schedule_date: '2030-07-04',
        schedule_time: '14:15',
        schedule_timezone: 'Europe/Paris (CEST, UTC+02:00)',
        callback_url: 'https://example.com/hook',
        metadata: { campaign: 'Summer', nested: { a: [1, 2] } },
        max_duration_seconds_per_call: 120,
        use_alternate_number: true,
        contacts: makeContacts(4),
      }),
    );
    expect(res.status).toBe(201);
    const b = await storedBatch(res.body.data.batch_id);
    expect(b).toMatchObject({
      accountId: a.account.id,
      agentId: a.agent.id,
      promptVersionId: a.version.id,
      // None given: each dial's number is chosen from the account's caller-ID pool.
      didNumberId: null,
      status: 'pending',
      startMode: 'scheduled',
      scheduledAt: new Date('2030-07-04T12:15:00.000Z'),
      timezone: 'Europe/Paris',
      concurrency: 4,
      voice: 'alloy',
      interruption: true,
      useAlternateNumber: true,
      recordingEnabled: true,
      maxDurationSeconds: 120,
      deduplicateByPhone: false,
      callbackUrl: 'https://example.com/hook',
      metadata: { campaign: 'Summer', nested: { a: [1, 2] } },
      idempotencyKey: null,
      totalContacts: 4,
      acceptedContacts: 4,
      rejectedContacts: 0,
      validationErrors: [],
      queued: 4,
      inProgress: 0,
      completed: 0,
      failed: 0,
      cancelled: 0,
      callbacks: 0,
      createdAt: new Date('2029-07-01T08:00:00.123Z'),
      startedAt: null,
      completedAt: null,
    });
  });

  it('inserts one call per accepted contact in submission order, with normalised data', async () => {
    t.clock.set(new Date('2029-07-02T10:00:00.456Z'));
    const res = await post(
      batchBody(a, {
        contacts: [
          {
            contact_id: 'ext-1',
            name: 'Ann',
            phone_number: '+1 (415) 555-2671',
            metadata: { 'First Name': 'Ann', phoneNumber: 'x', 'Alternate Number': '+44 7911 123456' },
          },
          { contact_id: 'ext-2', phone_number: '1234' + '5678' }, // length ok, number invalid
          { contact_id: 'ext-3', phone_number: '447911123457', status: 'pending' },
          { contact_id: 'ext-4', phone_number: validPhone(9), status: 'queued' },
        ],
      }),
    );
    expect(res.status).toBe(201);
    const calls = await storedCalls(res.body.data.batch_id);
    expect(calls.map((c) => [c.seq, c.externalId, c.phoneNumber, c.status])).toEqual([
      [1, 'ext-1', '+14155552671', 'pending'],
      [2, 'ext-3', '+447911123457', 'pending'],
      [3, 'ext-4', validPhone(9), 'queued'],
    ]);
    const [first] = calls;
    expect(first).toMatchObject({
      accountId: a.account.id,
      batchId: res.body.data.batch_id,
      agentId: a.agent.id,
      promptVersionId: a.version.id,
      name: 'Ann',
      alternatePhone: '+447911123456',
      metadata: { first_name: 'Ann', phone_number: 'x', alternate_number: '+44 7911 123456' },
      transcriptStatus: null,
      attempts: 0,
      createdAt: new Date('2029-07-02T10:00:00.456Z'),
    });
    expect(calls.every((c) => /^call_[0-9a-f]{32}$/.test(c.id))).toBe(true);
    expect(calls[1].name).toBeNull();
    expect(calls[1].alternatePhone).toBeNull();
  });

  it('keeps normalised metadata available to the agent (first occurrence of equivalent keys wins)', async () => {
    const res = await post(
      batchBody(a, {
        contacts: [
          { contact_id: 'm1', phone_number: validPhone(1), metadata: { 'Phone Number': 'a', phone_number: 'b', phoneNumber: 'c', CustomerID: 7 } },
        ],
      }),
    );
    const [call] = await storedCalls(res.body.data.batch_id);
    expect(call.metadata).toEqual({ phone_number: 'a', customer_id: 7 });
  });

  it('stores awkward text exactly (quotes, backslashes, braces, commas, "NULL", \\N, tabs, line breaks, emoji)', async () => {
    const awkward = ['He said "hi"', 'back\\slash\\', '{braces},commas', 'NULL', '\\N', 'tab\tand\nbreak\r\n', 'ünïcødé 📞', "it's", ' spaced '];
    const res = await post(
      batchBody(a, {
        contacts: awkward.map((text, i) => ({
          contact_id: text,
          name: text,
          phone_number: validPhone(i),
          metadata: { note: text, nested: { list: [text, null, 1.5] } },
        })),
      }),
    );
    expect(res.status).toBe(201);
    const calls = await storedCalls(res.body.data.batch_id);
    expect(calls.map((c) => [c.externalId, c.name, c.metadata])).toEqual(
      awkward.map((text) => [text, text, { note: text, nested: { list: [text, null, 1.5] } }]),
    );
    // The bulk insert writes the rest of each row too: numbering, owner and the batch's instant.
    expect(calls.map((c) => [c.seq, c.batchId, c.accountId, c.status, c.createdAt.toISOString(), c.alternatePhone, c.windowClosesAt])).toEqual(
      awkward.map((_, i) => [i + 1, res.body.data.batch_id, a.account.id, 'pending', res.body.data.created_at, null, null]),
    );
  });
});

describe('POST /call-batches: resolution and defaults', () => {
  it('resolves agent and version by name', async () => {
    const res = await post(batchBody(a, { agent_id: undefined, version_id: undefined, agent_name: 'Sales Agent', version_name: 'v1' }));
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ agent_id: a.agent.id, version_id: a.version.id });
  });

  it('404 names the missing agent (by id and by name)', async () => {
    expect(await post(batchBody(a, { agent_id: 'agt-missing' }))).toMatchObject({
      status: 404,
      body: { detail: "Agent 'agt-missing' not found" },
    });
    expect(await post(batchBody(a, { agent_id: undefined, agent_name: 'Nobody' }))).toMatchObject({
      status: 404,
      body: { detail: "Agent named 'Nobody' not found" },
    });
  });

  it('404 for a missing version, and for a version of another agent', async () => {
    expect(await post(batchBody(a, { version_id: 'pmt-missing' }))).toMatchObject({
      status: 404,
      body: { detail: `Prompt version 'pmt-missing' not found for agent '${a.agent.id}'` },
    });
    const other = await createAgent(t.deps.db, a.account, { name: 'Other agent', voice: 'verse' });
    const otherVersion = await createPromptVersion(t.deps.db, a.account, { agentId: other.id, name: 'v9', prompt: 'p' });
    const res = await post(batchBody(a, { version_id: otherVersion.id }));
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ detail: `Prompt version '${otherVersion.id}' not found for agent '${a.agent.id}'` });
    expect(await post(batchBody(a, { version_id: undefined, version_name: 'v9' }))).toMatchObject({ status: 404 });
  });

  it("404 for another account's agent", async () => {
    const b = await t.seedAccount();
    const res = await post(batchBody(a, { agent_id: b.agent.id, version_id: b.version.id }));
    expect(res).toMatchObject({ status: 404, body: { detail: `Agent '${b.agent.id}' not found` } });
  });

  it('voice defaults to the agent voice; an unavailable voice is a 422 detail', async () => {
    const ok = await post(batchBody(a, { voice: 'verse' }));
    expect((await storedBatch(ok.body.data.batch_id)).voice).toBe('verse');
    const res = await post(batchBody(a, { voice: 'robot' }));
    expect(res).toMatchObject({ status: 422, body: { detail: "Voice 'robot' is not available on this account" } });
  });

  it('DID number: by id, by number, via the did_number alias; unknown one is a 422 detail', async () => {
    const second = await addDidNumber(t.deps.db, a.account, '+14155550199');
    for (const body of [
      batchBody(a, { did_number_id: second.id }),
      batchBody(a, { did_number_id: '+1 415 555 0199' }),
      batchBody(a, { did_number: second.id }),
    ]) {
      const res = await post(body);
      expect(res.status).toBe(201);
      expect((await storedBatch(res.body.data.batch_id)).didNumberId).toBe(second.id);
    }
    const b = await t.seedAccount();
    const res = await post(batchBody(a, { did_number_id: b.did.id }));
    expect(res).toMatchObject({ status: 422, body: { detail: `DID number '${b.did.id}' is not available on this account` } });
  });

  it('without a DID number dials from the caller-ID pool (none stored); one given is kept; none on the account is a 422 detail', async () => {
    const res = await post(batchBody(a));
    expect((await storedBatch(res.body.data.batch_id)).didNumberId).toBeNull();
    const own = await post(batchBody(a, { did_number_id: a.did.id }));
    expect((await storedBatch(own.body.data.batch_id)).didNumberId).toBe(a.did.id);
    const b = await t.seedAccount();
    await t.deps.db.prisma.didNumber.deleteMany({ where: { accountId: b.account.id } });
    const none = await post(batchBody(b), b.apiKey);
    expect(none).toMatchObject({ status: 422, body: { detail: 'No DID number is available on this account' } });
    expect(await t.deps.db.prisma.batch.count({ where: { accountId: b.account.id } })).toBe(0);
  });

  it('concurrency defaults to the account batch concurrency and is capped at max_concurrent_calls', async () => {
    expect((await post(batchBody(a))).body.data.concurrency).toBe(4);
    expect((await post(batchBody(a, { concurrency: 7 }))).body.data.concurrency).toBe(7);
    const capped = await post(batchBody(a, { concurrency: 50 }));
    expect(capped.body.data.concurrency).toBe(10);
    expect((await storedBatch(capped.body.data.batch_id)).concurrency).toBe(10);
    const b = await t.seedAccount({ batchConcurrency: 30, limits: { maxConcurrentCalls: 12 } });
    expect((await post(batchBody(b), b.apiKey)).body.data.concurrency).toBe(12);
  });

  it('recording_enabled: explicit value, else the agent setting, else the account setting', async () => {
    const b = await t.seedAccount({ recordingEnabled: false });
    const agentOn = await createAgent(t.deps.db, b.account, { name: 'Recorder', voice: 'alloy', recordingEnabled: true });
    const agentOnVersion = await createPromptVersion(t.deps.db, b.account, { agentId: agentOn.id, name: 'v1', prompt: 'p' });
    const recording = async (body: Record<string, unknown>) => (await storedBatch((await post(body, b.apiKey)).body.data.batch_id)).recordingEnabled;
    expect(await recording(batchBody(b))).toBe(false); // agent unset -> account (off)
    expect(await recording(batchBody(b, { agent_id: agentOn.id, version_id: agentOnVersion.id }))).toBe(true);
    expect(await recording(batchBody(b, { recording_enabled: true }))).toBe(true);
    expect(await recording(batchBody(b, { agent_id: agentOn.id, version_id: agentOnVersion.id, recording_enabled: false }))).toBe(false);
  });

  it('interruption takes effect only when the account allows it', async () => {
    const b = await t.seedAccount({ interruptionEnabled: false });
    const res = await post(batchBody(b, { interruption: true }), b.apiKey);
    expect((await storedBatch(res.body.data.batch_id)).interruption).toBe(false);
    expect((await storedBatch((await post(batchBody(a, { interruption: true }))).body.data.batch_id)).interruption).toBe(true);
    expect((await storedBatch((await post(batchBody(a, { interruption: false }))).body.data.batch_id)).interruption).toBe(false);
  });

  it('max_duration_seconds_per_call defaults to the account limit', async () => {
    const res = await post(batchBody(a));
    expect((await storedBatch(res.body.data.batch_id)).maxDurationSeconds).toBe(300);
  });

  it('ignores unknown fields', async () => {
    const res = await post(batchBody(a, { surprise: { deep: true }, another: 1 }));
    expect(res.status).toBe(201);
  });

  it('the account change of voices applies to later batches', async () => {
    const b = await t.seedAccount();
    await updateAccount(t.deps.db, b.account.id, { voices: ['verse'] }, t.clock.now());
    const res = await t.request('POST', CALL_BATCHES, { key: b.apiKey, body: batchBody(b) });
    expect(res).toMatchObject({ status: 422, body: { detail: "Voice 'alloy' is not available on this account" } });
  });
});

describe('GraphQL createCallBatch', () => {
  const MUTATION = `mutation($input: CreateCallBatchInput!) {
    createCallBatch(input: $input) {
      batchId agentId versionId status startMode totalContacts acceptedContacts rejectedContacts
      validationErrors { index externalId field message } concurrency createdAt idempotent
      batch { id status queued timezone }
    }
  }`;
  const input = (over: Record<string, unknown> = {}) => ({
    agentId: a.agent.id,
    versionId: a.version.id,
    interruption: false,
    useAlternateNumber: false,
    startMode: 'manual',
    scheduleDate: '2030-01-15',
    scheduleTime: '09:30',
    scheduleTimezone: 'America/New_York',
    contacts: [
      { contactId: 'g1', phoneNumber: validPhone(1), metadata: { 'Account Tier': 'gold' } },
      { contactId: 'g2', phoneNumber: '+99912345678' },
    ],
    ...over,
  });

  it('creates with the same result as REST (camelCase)', async () => {
    t.clock.set(new Date('2029-08-01T00:00:00.000Z'));
    const res = await t.gql(MUTATION, { input: input() }, a.apiKey);
    expect(res.body.errors).toBeUndefined();
    const r = res.body.data!.createCallBatch;
    expect(r).toEqual({
      batchId: expect.stringMatching(/^sched_/),
      agentId: a.agent.id,
      versionId: a.version.id,
      status: 'pending',
      startMode: 'manual',
      totalContacts: 2,
      acceptedContacts: 1,
      rejectedContacts: 1,
      validationErrors: [{ index: 2, externalId: 'g2', field: 'phone_number', message: 'Invalid phone number' }],
      concurrency: 4,
      createdAt: '2029-08-01T00:00:00.000Z',
      idempotent: false,
      batch: { id: r.batchId, status: 'paused', queued: 1, timezone: 'America/New_York' },
    });
    const [call] = await storedCalls(r.batchId);
    expect(call.metadata).toEqual({ account_tier: 'gold' });
  });

  it('with idempotencyKey it is idempotent', async () => {
    const first = await t.gql(MUTATION, { input: input({ idempotencyKey: 'gql-key-1' }) }, a.apiKey);
    const again = await t.gql(
      MUTATION,
      { input: input({ idempotencyKey: 'gql-key-1', contacts: [{ contactId: 'z', phoneNumber: validPhone(50) }] }) },
      a.apiKey,
    );
    expect(first.body.data!.createCallBatch.idempotent).toBe(false);
    expect(again.body.data!.createCallBatch).toEqual({ ...first.body.data!.createCallBatch, idempotent: true });
  });

  it('validation errors carry MISSING_PARAMETER and camelCase detail paths', async () => {
    const res = await t.gql(
      MUTATION,
      { input: input({ scheduleDate: '15/01/2030', contacts: [{ contactId: 'x', phoneNumber: '123' }], maxDurationSecondsPerCall: 301 }) },
      a.apiKey,
    );
    expect(res.body.errors).toHaveLength(1);
    expect(res.body.errors![0]).toMatchObject({
      message: 'Missing required parameter',
      extensions: {
        code: 'MISSING_PARAMETER',
        details: [
          'scheduleDate: Value error, Invalid date, expected YYYY-MM-DD',
          'maxDurationSecondsPerCall: Input should be less than or equal to 300',
          'contacts.0.phoneNumber: String should have at least 8 characters',
        ],
      },
    });
  });

  it('contactList gives the same batch as contacts, checked in one value', async () => {
    t.clock.set(new Date('2029-08-01T00:00:00.000Z'));
    const { contacts, ...rest } = input();
    const res = await t.gql(MUTATION, { input: { ...rest, contactList: contacts } }, a.apiKey);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data!.createCallBatch).toMatchObject({
      totalContacts: 2,
      acceptedContacts: 1,
      validationErrors: [{ index: 2, externalId: 'g2', field: 'phone_number', message: 'Invalid phone number' }],
    });
    const [call] = await storedCalls(res.body.data!.createCallBatch.batchId);
    expect(call.metadata).toEqual({ account_tier: 'gold' });
  });

  it('contactList: type problems are a variable error naming the contact; value problems are details at contacts.<index>', async () => {
    const { contacts: _c, ...rest } = input();
    const mistyped = await t.gql(MUTATION, { input: { ...rest, contactList: [{ contactId: 'a', phoneNumber: 5 }, 'x'] } }, a.apiKey);
    expect(mistyped.body.errors).toHaveLength(1);
    expect(mistyped.body.errors![0].message).toContain(
      'contacts.0.phoneNumber: Input should be a valid string; contacts.1: Input should be a valid dictionary',
    );
    const short = await t.gql(MUTATION, { input: { ...rest, contactList: [{ contactId: 'a', phoneNumber: '12' }] } }, a.apiKey);
    expect(short.body.errors![0].extensions).toMatchObject({
      code: 'MISSING_PARAMETER',
      details: ['contacts.0.phoneNumber: String should have at least 8 characters'],
    });
  });

  it('an omitted agentId and agentName is the one-of detail, as on REST', async () => {
    const { agentId: _a, ...rest } = input();
    const res = await t.gql(MUTATION, { input: rest }, a.apiKey);
    expect(res.body.errors![0].extensions).toMatchObject({
      code: 'MISSING_PARAMETER',
      details: ['agentId: Value error, agent_id or agent_name is required'],
    });
  });

  it('exactly one of contacts and contactList', async () => {
    const { contacts, ...rest } = input();
    const neither = await t.gql(MUTATION, { input: rest }, a.apiKey);
    expect(neither.body.errors![0].extensions).toMatchObject({ code: 'MISSING_PARAMETER', details: ['contacts: Field required'] });
    const both = await t.gql(MUTATION, { input: { ...rest, contacts, contactList: contacts } }, a.apiKey);
    expect(both.body.errors![0].extensions).toMatchObject({
      code: 'MISSING_PARAMETER',
      details: ['contactList: Give contacts or contactList, not both'],
    });
  });

  it('business errors come through with their code', async () => {
    const res = await t.gql(MUTATION, { input: input({ agentId: 'agt-nope' }) }, a.apiKey);
    expect(res.body.errors![0]).toMatchObject({ message: "Agent 'agt-nope' not found", extensions: { code: 'NOT_FOUND' } });
    const unauth = await t.gql(MUTATION, { input: input() }, 'sk_wrong');
    expect(unauth.status).toBe(401);
  });
});
