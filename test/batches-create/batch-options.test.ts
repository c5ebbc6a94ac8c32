// The batch options beside the contract (src/domain/batch-options.ts), shown by `label`: given on
// create (REST and GraphQL), checked like the contract's fields, stored, and shown wherever batch
// details are (REST, GraphQL, webhooks).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { batchBody, CALL_BATCHES, typedInput } from '../helpers/batch-requests.ts';
import { enqueueBatchWebhooks } from '../../src/services/webhooks/outbox.ts';
import { BATCH_DETAILS_FIELDS } from '../../src/services/representations.ts';
import { BATCH_OPTION_REST_NAMES } from '../../src/domain/batch-options.ts';

let t: TestApp;
let a: SeededAccount;
beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount();
});
afterAll(() => t.close());

const create = (body: unknown) => t.request('PUT', CALL_BATCHES, { key: a.apiKey, body });
const details = async (id: string) => (await t.request('GET', `${CALL_BATCHES}/${id}`, { key: a.apiKey })).body.data;
const refused = (details: string[]) => ({
  status_code: 422,
  message: 'Missing required parameter',
  error: { code: 'MISSING_PARAMETER', details },
  data: null,
});
let keys = 0;
const key = () => `options-${++keys}`;

describe('label, a batch option', () => {
  it('is stored as given and shown in batch details after the contract fields, with the other options', async () => {
    const res = await create(batchBody(a, { idempotency_key: key(), label: 'Spring renewals, west' }));
    expect(res.status).toBe(201);
    const batch = await details(res.body.data.batch_id);
    expect(batch.label).toBe('Spring renewals, west');
    const keys = Object.keys(batch);
    expect(keys.slice(keys.indexOf('enforced_calling_window') + 1)).toEqual(BATCH_OPTION_REST_NAMES);
  });

  it('absent, null or blank is none (null)', async () => {
    for (const label of [undefined, null, '   ']) {
      const res = await create(batchBody(a, { idempotency_key: key(), label }));
      expect(res.status, JSON.stringify(label)).toBe(201);
      expect((await details(res.body.data.batch_id)).label).toBeNull();
    }
  });

  it('is refused in the contract words when not text or over 200 characters, and nothing is stored', async () => {
    const before = await t.deps.db.prisma.batch.count();
    expect((await create(batchBody(a, { idempotency_key: key(), label: 5 }))).body).toEqual(refused(['label: Input should be a valid string']));
    expect((await create(batchBody(a, { idempotency_key: key(), label: 'x'.repeat(201) }))).body).toEqual(
      refused(['label: String should have at most 200 characters']),
    );
    // Listed after the contract's fields, in the order of the field table.
    expect((await create(batchBody(a, { idempotency_key: key(), label: 5, contacts: [] }))).body.error.details).toEqual([
      'contacts: List should have at least 1 item after validation, not 0',
      'label: Input should be a valid string',
    ]);
    expect(await t.deps.db.prisma.batch.count()).toBe(before);
    const ok = await create(batchBody(a, { idempotency_key: key(), label: '𝒜'.repeat(200) }));
    expect(ok.status).toBe(201);
  });

  it('GraphQL creates with it and reads it from a batch and from the list', async () => {
    const created = await t.gql(
      'mutation($input: CreateCallBatchInput!) { createCallBatch(input: $input) { batchId } }',
      { input: typedInput(a, { label: 'From GraphQL' }) },
      a.apiKey,
    );
    expect(created.body.errors).toBeUndefined();
    const id = created.body.data.createCallBatch.batchId;
    const read = await t.gql('query($id: ID!) { batch(id: $id) { label } batches(limit: 100) { items { id label } } }', { id }, a.apiKey);
    expect(read.body.errors).toBeUndefined();
    expect(read.body.data.batch.label).toBe('From GraphQL');
    expect(read.body.data.batches.items.find((b: { id: string }) => b.id === id).label).toBe('From GraphQL');
    const tooLong = await t.gql(
      'mutation($input: CreateCallBatchInput!) { createCallBatch(input: $input) { batchId } }',
      { input: typedInput(a, { label: 'x'.repeat(201) }) },
      a.apiKey,
    );
    expect(tooLong.body.errors[0].extensions).toMatchObject({
      code: 'MISSING_PARAMETER',
      details: ['label: String should have at most 200 characters'],
    });
  });

  it("is in a batch webhook's data, in the details' field order", async () => {
    const res = await create(batchBody(a, { idempotency_key: key(), label: 'Hooked' }));
    const id = res.body.data.batch_id;
    await t.deps.db.prisma.batch.update({ where: { id }, data: { callbackUrl: 'https://hooks.example.com/in' } });
    await t.deps.db.prisma.$transaction((tx) => enqueueBatchWebhooks(tx, [{ type: 'batch.started', batchId: id }], t.clock.now()));
    const [row] = await t.deps.db.prisma.webhookDelivery.findMany({ where: { batchId: id } });
    const data = (row!.payload as { data: Record<string, unknown> }).data;
    expect(data.label).toBe('Hooked');
    // Stored as jsonb, which keeps no key order: delivery restores it from BATCH_DETAILS_FIELDS.
    expect(Object.keys(data).sort()).toEqual([...BATCH_DETAILS_FIELDS].sort());
    expect(data).toEqual(await details(id));
  });
});

describe('voicemail and voicemail_message, a choice option and its text', () => {
  it('are stored as given and shown in batch details', async () => {
    const res = await create(batchBody(a, { idempotency_key: key(), voicemail: 'leave_message', voicemail_message: 'Please call us back.' }));
    expect(res.status).toBe(201);
    const batch = await details(res.body.data.batch_id);
    expect([batch.voicemail, batch.voicemail_message]).toEqual(['leave_message', 'Please call us back.']);
    const none = await details((await create(batchBody(a, { idempotency_key: key() }))).body.data.batch_id);
    expect([none.voicemail, none.voicemail_message]).toEqual([null, null]);
  });

  it('are refused in the contract words: a word outside the list, a missing or unused message, too long a message', async () => {
    expect((await create(batchBody(a, { idempotency_key: key(), voicemail: 'beep' }))).body).toEqual(
      refused(["voicemail: Input should be 'hangup' or 'leave_message'"]),
    );
    expect((await create(batchBody(a, { idempotency_key: key(), voicemail: 5 }))).body).toEqual(
      refused(["voicemail: Input should be 'hangup' or 'leave_message'"]),
    );
    expect((await create(batchBody(a, { idempotency_key: key(), voicemail: 'leave_message', voicemail_message: ' ' }))).body).toEqual(
      refused(["voicemail_message: Value error, voicemail_message is required when voicemail is 'leave_message'"]),
    );
    expect((await create(batchBody(a, { idempotency_key: key(), voicemail: 'hangup', voicemail_message: 'Hi' }))).body).toEqual(
      refused(["voicemail_message: Value error, voicemail_message is only used when voicemail is 'leave_message'"]),
    );
    expect((await create(batchBody(a, { idempotency_key: key(), voicemail: 'leave_message', voicemail_message: 'x'.repeat(1001) }))).body).toEqual(
      refused(['voicemail_message: String should have at most 1000 characters']),
    );
  });

  it('GraphQL takes the choice as its enum and reads both back', async () => {
    const created = await t.gql(
      'mutation($input: CreateCallBatchInput!) { createCallBatch(input: $input) { batchId } }',
      { input: typedInput(a, { voicemail: 'hangup' }) },
      a.apiKey,
    );
    expect(created.body.errors).toBeUndefined();
    const id = created.body.data.createCallBatch.batchId;
    const read = await t.gql('query($id: ID!) { batch(id: $id) { voicemail voicemailMessage } }', { id }, a.apiKey);
    expect(read.body.data.batch).toEqual({ voicemail: 'hangup', voicemailMessage: null });
    const unused = await t.gql(
      'mutation($input: CreateCallBatchInput!) { createCallBatch(input: $input) { batchId } }',
      { input: typedInput(a, { voicemail: 'hangup', voicemailMessage: 'Hi' }) },
      a.apiKey,
    );
    expect(unused.body.errors[0].extensions.details).toEqual([
      "voicemailMessage: Value error, voicemail_message is only used when voicemail is 'leave_message'",
    ]);
  });
});
