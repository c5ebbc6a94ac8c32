// The spec's Idempotent creation rule: first use 201, any repeat 200 with the original result,
// keys scoped per account, POST never idempotent, and exactly one batch under concurrent PUTs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { openDatabase } from '../../src/db/client.ts';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { batchBody, CALL_BATCHES, makeContacts, validPhone } from '../helpers/batch-requests.ts';
import { startSiblingApi, type ServerProcess } from '../helpers/server-process.ts';

let t: TestApp;
let a: SeededAccount;

beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount();
});
afterAll(() => t.close());

const put = (body: unknown, key = a.apiKey) => t.request('PUT', CALL_BATCHES, { key, body });
const batchesWithKey = (accountId: string, key: string) => t.deps.db.prisma.batch.count({ where: { accountId, idempotencyKey: key } });

describe('PUT /call-batches idempotency', () => {
  it('first use creates (201, idempotent false); a repeat returns the original unchanged (200, idempotent true)', async () => {
    t.clock.set(new Date('2029-01-01T00:00:00.000Z'));
    const first = await put({
      ...batchBody(a, { idempotency_key: 'order-42', start_mode: 'scheduled', concurrency: 3 }),
      contacts: [
        { contact_id: 'a', phone_number: validPhone(1) },
        { contact_id: 'b', phone_number: '+12223333333' },
      ],
    });
    expect(first.status).toBe(201);
    expect(first.body.message).toBe('Call batch created with validation errors');
    expect(first.body.data.idempotent).toBe(false);

    // The retry differs in everything but the key; it is ignored.
    t.clock.set(new Date('2029-01-01T01:00:00.000Z'));
    const again = await put(batchBody(a, { idempotency_key: 'order-42', start_mode: 'immediate', concurrency: 1, contacts: makeContacts(4, 'z') }));
    expect(again.status).toBe(200);
    expect(again.body).toEqual({
      status_code: 200,
      message: 'Call batch already exists for this idempotency key',
      error: null,
      data: { ...first.body.data, idempotent: true },
    });
    expect(again.body.data).toMatchObject({
      status: 'pending',
      start_mode: 'scheduled',
      created_at: '2029-01-01T00:00:00.000Z',
      rejected_contacts: 1,
      validation_errors: [{ index: 2, external_id: 'b', field: 'phone_number', message: 'Invalid phone number' }],
    });
    expect(await batchesWithKey(a.account.id, 'order-42')).toBe(1);
    expect(await t.deps.db.prisma.call.count({ where: { batchId: first.body.data.batch_id } })).toBe(1);
  });

  it('first use with every contact valid: 201, Call batch created successfully, idempotent false', async () => {
    t.clock.set(new Date('2029-02-03T04:05:06.789Z'));
    const res = await put(batchBody(a, { idempotency_key: 'all-valid-1', contacts: makeContacts(3), concurrency: 2 }));
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      status_code: 201,
      message: 'Call batch created successfully',
      error: null,
      data: {
        batch_id: expect.stringMatching(/^sched_/),
        agent_id: a.agent.id,
        version_id: a.version.id,
        status: 'pending',
        start_mode: 'immediate',
        total_contacts: 3,
        accepted_contacts: 3,
        rejected_contacts: 0,
        validation_errors: [],
        concurrency: 2,
        created_at: '2029-02-03T04:05:06.789Z',
        idempotent: false,
        // Beside the contract's fields: this batch has no calling window (docs/campaigns.md "Create warnings").
        warnings: [expect.objectContaining({ code: 'no_protective_window', contact_count: null })],
      },
    });
    expect(await batchesWithKey(a.account.id, 'all-valid-1')).toBe(1);
    expect(await t.deps.db.prisma.call.count({ where: { batchId: res.body.data.batch_id } })).toBe(3);
  });

  it('the replay still says pending after the batch has moved on', async () => {
    const first = await put(batchBody(a, { idempotency_key: 'moved-on' }));
    await t.deps.db.prisma.batch.update({ where: { id: first.body.data.batch_id }, data: { status: 'running' } });
    const again = await put(batchBody(a, { idempotency_key: 'moved-on' }));
    expect(again.status).toBe(200);
    expect(again.body.data.status).toBe('pending');
  });

  it('a repeat is answered before agent resolution (the retry settings are ignored)', async () => {
    await put(batchBody(a, { idempotency_key: 'ignore-settings' }));
    const again = await put(batchBody(a, { idempotency_key: 'ignore-settings', agent_id: 'agt-gone', voice: 'nope' }));
    expect(again.status).toBe(200);
    expect(again.body.data.agent_id).toBe(a.agent.id);
  });

  it('keys are scoped per account', async () => {
    const b = await t.seedAccount();
    const mine = await put(batchBody(a, { idempotency_key: 'shared-key' }));
    const theirs = await put(batchBody(b, { idempotency_key: 'shared-key' }), b.apiKey);
    expect(mine.status).toBe(201);
    expect(theirs.status).toBe(201);
    expect(theirs.body.data.idempotent).toBe(false);
    expect(theirs.body.data.batch_id).not.toBe(mine.body.data.batch_id);
    expect(theirs.body.data.agent_id).toBe(b.agent.id);
    expect(await batchesWithKey(b.account.id, 'shared-key')).toBe(1);
    expect(await batchesWithKey(a.account.id, 'shared-key')).toBe(1);
  });

  it('POST always creates a new batch, and ignores an idempotency_key in its body', async () => {
    const body = batchBody(a, { idempotency_key: 'post-key' });
    const one = await t.request('POST', CALL_BATCHES, { key: a.apiKey, body });
    const two = await t.request('POST', CALL_BATCHES, { key: a.apiKey, body });
    expect([one.status, two.status]).toEqual([201, 201]);
    expect(one.body.data.batch_id).not.toBe(two.body.data.batch_id);
    expect(two.body.data.idempotent).toBe(false);
    expect(await batchesWithKey(a.account.id, 'post-key')).toBe(0);
    // A POST batch does not occupy the key for PUT.
    expect((await put(body)).status).toBe(201);
  });

  it('20 simultaneous PUTs with one new key create exactly one batch', async () => {
    const body = batchBody(a, { idempotency_key: 'burst-1', contacts: makeContacts(50) });
    const responses = await Promise.all(Array.from({ length: 20 }, () => put(body)));
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(19);
    expect(new Set(responses.map((r) => r.body.data.batch_id)).size).toBe(1);
    expect(await batchesWithKey(a.account.id, 'burst-1')).toBe(1);
    const batchId = responses[0].body.data.batch_id;
    expect(await t.deps.db.prisma.call.count({ where: { batchId } })).toBe(50);
  });
});

// Two API processes share only the database; two apps with their own connection pools on the
// same PostgreSQL database are the same situation for the unique constraint.
describe.runIf(process.env.TEST_DATABASE_URL)('PUT idempotency across processes (PostgreSQL)', () => {
  it('20 parallel PUTs through two independent apps create exactly one batch', async () => {
    const otherDb = await openDatabase({ databaseUrl: t.testDb.url!, poolSize: 10 });
    const other = buildApp({ ...t.deps, db: otherDb });
    try {
      const body = JSON.stringify(batchBody(a, { idempotency_key: 'cross-process', contacts: makeContacts(200) }));
      const send = (i: number) =>
        (i % 2 ? other : t.app).fetch(
          new Request(`http://test.local${CALL_BATCHES}`, {
            method: 'PUT',
            headers: { authorization: `Bearer ${a.apiKey}`, 'content-type': 'application/json' },
            body,
          }),
        );
      const responses = await Promise.all(Array.from({ length: 20 }, (_, i) => send(i)));
      const bodies = await Promise.all(responses.map((r) => r.json()));
      expect(responses.map((r) => r.status).filter((s) => s === 201)).toHaveLength(1);
      expect(responses.map((r) => r.status).filter((s) => s === 200)).toHaveLength(19);
      expect(new Set(bodies.map((b) => b.data.batch_id)).size).toBe(1);
      expect(await batchesWithKey(a.account.id, 'cross-process')).toBe(1);
      expect(await t.deps.db.prisma.call.count({ where: { batchId: bodies[0].data.batch_id } })).toBe(200);
    } finally {
      await other.stop();
      await otherDb.close();
    }
  });
});

// The same, with a real second API process (src/main.ts) beside this one: the unique constraint is
// the only thing the two share besides the database.
describe.runIf(process.env.TEST_DATABASE_URL)('PUT idempotency across real processes (PostgreSQL)', () => {
  let child: ServerProcess | undefined;
  afterAll(async () => {
    child?.child.kill('SIGTERM');
    await child?.waitForExit();
  });

  it('20 simultaneous PUTs split between this process and a child server create exactly one batch', async () => {
    child = await startSiblingApi(t);
    const body = JSON.stringify(batchBody(a, { idempotency_key: 'two-processes', contacts: makeContacts(300) }));
    const init = (): RequestInit => ({
      method: 'PUT',
      headers: { authorization: `Bearer ${a.apiKey}`, 'content-type': 'application/json' },
      body,
    });
    const sends = Array.from({ length: 20 }, (_, i) =>
      i % 2 ? fetch(`${child!.url}${CALL_BATCHES}`, init()) : t.app.fetch(new Request(`http://test.local${CALL_BATCHES}`, init())),
    );
    const responses = await Promise.all(sends);
    const bodies = (await Promise.all(responses.map((r) => r.json()))) as any[];
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(19);
    expect(new Set(bodies.map((b) => b.data.batch_id)).size).toBe(1);
    for (const [i, b] of bodies.entries()) {
      expect(b.data.idempotent).toBe(statuses[i] === 200);
      expect(b.message).toBe(statuses[i] === 201 ? 'Call batch created successfully' : 'Call batch already exists for this idempotency key');
    }
    expect(await batchesWithKey(a.account.id, 'two-processes')).toBe(1);
    expect(await t.deps.db.prisma.call.count({ where: { batchId: bodies[0].data.batch_id } })).toBe(300);
  }, 120_000);
});
