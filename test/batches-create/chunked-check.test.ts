// A create checks each chunk's contacts as it screens the chunk, so the first chunks are written
// while the later ones are checked: a contact that fails late still refuses the whole request in
// the whole check's words, writes nothing, and wins over every other refusal, as when the list was
// checked before anything else.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { asCreateRequest, batchBody, CALL_BATCHES, makeContacts } from '../helpers/batch-requests.ts';
import { createBatch } from '../../src/services/batches/create-batch.ts';
import { checkCreateBatchRequest } from '../../src/domain/create-batch-request.ts';
import { AppError } from '../../src/errors.ts';

let t: TestApp;
let a: SeededAccount;

beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount();
});
afterAll(() => t.close());

const counts = async () => ({
  batches: await t.deps.db.prisma.batch.count({ where: { accountId: a.account.id } }),
  calls: await t.deps.db.prisma.call.count({ where: { accountId: a.account.id } }),
});

/** Ten contacts, the ninth (in the third chunk of three) with a contact_id longer than allowed. */
function lateBadContacts() {
  const contacts = makeContacts(10);
  contacts[8] = { ...contacts[8], contact_id: 'x'.repeat(300) };
  return contacts;
}

const chunksOfThree = { insert: { chunkSize: 3 } };

describe('contacts checked a chunk at a time', () => {
  it('a contact failing in a later chunk refuses the request with the whole check’s issues and leaves nothing written', async () => {
    const before = await counts();
    const request = asCreateRequest(batchBody(a, { idempotency_key: 'late-bad', contacts: lateBadContacts() }));
    const error = await createBatch(t.deps, a.account, request, chunksOfThree).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    const whole = checkCreateBatchRequest(request, { maxCallDurationSeconds: a.account.maxCallDurationSeconds, now: t.deps.clock.now() });
    expect(whole.ok).toBe(false);
    expect((error as AppError).issues).toEqual(whole.ok ? [] : whole.issues);
    expect(await counts()).toEqual(before);
  });

  it('in the default chunks (growing, the lists read a chunk ahead), a contact failing late refuses the request and leaves nothing written', async () => {
    // A do-not-call entry makes every chunk read the list while the next is screened.
    await t.gql('mutation($n: [String!]!) { addSuppressions(phoneNumbers: $n) { added } }', { n: ['+12125550100'] }, a.apiKey);
    const before = await counts();
    const contacts = makeContacts(3_000);
    contacts[2_900] = { ...contacts[2_900], contact_id: 'x'.repeat(300) };
    const request = asCreateRequest(batchBody(a, { idempotency_key: 'late-bad-default', contacts }));
    const error = await createBatch(t.deps, a.account, request).catch((e: unknown) => e);
    const whole = checkCreateBatchRequest(request, { maxCallDurationSeconds: a.account.maxCallDurationSeconds, now: t.deps.clock.now() });
    expect(whole.ok).toBe(false);
    expect((error as AppError).issues).toEqual(whole.ok ? [] : whole.issues);
    expect(await counts()).toEqual(before);
    // The same list without the bad contact goes in whole.
    contacts[2_900] = makeContacts(2_901)[2_900];
    const created = await createBatch(t.deps, a.account, asCreateRequest(batchBody(a, { idempotency_key: 'good-default', contacts })));
    expect(created.acceptedContacts).toBe(3_000);
  });

  it('its refusal wins over an unknown agent, as when the contacts were checked first', async () => {
    const unknownAgent = await t.request('PUT', CALL_BATCHES, {
      key: a.apiKey,
      body: batchBody(a, { idempotency_key: 'late-bad-agent', agent_id: 'agt-nope', contacts: lateBadContacts() }),
    });
    const expected = await t.request('PUT', CALL_BATCHES, {
      key: a.apiKey,
      body: batchBody(a, { idempotency_key: 'late-bad-ref', contacts: lateBadContacts() }),
    });
    expect(expected.status).toBe(422);
    expect(unknownAgent.status).toBe(422);
    expect(unknownAgent.body).toEqual(expected.body);
  });

  it('a repeated idempotency key with a failing contact is refused, not answered with the original batch', async () => {
    const first = await t.request('PUT', CALL_BATCHES, {
      key: a.apiKey,
      body: batchBody(a, { idempotency_key: 'replayed', contacts: makeContacts(3) }),
    });
    expect(first.status).toBe(201);
    const retry = await t.request('PUT', CALL_BATCHES, {
      key: a.apiKey,
      body: batchBody(a, { idempotency_key: 'replayed', contacts: lateBadContacts() }),
    });
    expect(retry.status).toBe(422);
    const clean = await t.request('PUT', CALL_BATCHES, {
      key: a.apiKey,
      body: batchBody(a, { idempotency_key: 'replayed', contacts: makeContacts(10) }),
    });
    expect([clean.status, clean.body.data.batch_id]).toEqual([200, first.body.data.batch_id]);
  });
});
