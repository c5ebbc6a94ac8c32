// The batch and all its calls are written in one transaction: a failure part-way leaves nothing,
// and an idempotency key whose first attempt failed is still free.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { asCreateRequest, batchBody, CALL_BATCHES, makeContacts } from '../helpers/batch-requests.ts';
import { createBatch } from '../../src/services/batches/create-batch.ts';
import { watchLockWaits } from '../helpers/lock-waits.ts';
import { waitFor } from '../helpers/wait.ts';

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

describe('atomic creation', () => {
  it('a failure after some chunks were inserted leaves no batch and no calls', async () => {
    const before = await counts();
    const chunksDone: number[] = [];
    const attempt = createBatch(t.deps, a.account, asCreateRequest(batchBody(a, { idempotency_key: 'atomic-1', contacts: makeContacts(10) })), {
      insert: {
        chunkSize: 3,
        afterChunk: (chunk) => {
          chunksDone.push(chunk);
          if (chunk === 2) throw new Error('injected failure after the third chunk');
        },
      },
    });
    await expect(attempt).rejects.toThrow('injected failure after the third chunk');
    expect(chunksDone).toEqual([0, 1, 2]);
    expect(await counts()).toEqual(before);

    // The key was not consumed: the retry creates the batch with all its calls.
    const res = await t.request('PUT', CALL_BATCHES, {
      key: a.apiKey,
      body: batchBody(a, { idempotency_key: 'atomic-1', contacts: makeContacts(10) }),
    });
    expect(res.status).toBe(201);
    expect(await counts()).toEqual({ batches: before.batches + 1, calls: before.calls + 10 });
  });

  it('a database error mid-insert (duplicate call id) rolls back the whole batch', async () => {
    const before = await counts();
    const attempt = createBatch(t.deps, a.account, asCreateRequest(batchBody(a, { contacts: makeContacts(6) })), {
      insert: {
        chunkSize: 2,
        // Re-inserting a call id of this batch makes a statement fail inside the transaction.
        afterChunk: async (chunk, tx) => {
          if (chunk !== 1) return;
          await tx.query(
            `INSERT INTO calls (id, account_id, batch_id, agent_id, prompt_version_id, seq, external_id, phone_number, status, created_at)
             SELECT id, account_id, batch_id, agent_id, prompt_version_id, seq, external_id, phone_number, status, created_at
               FROM calls WHERE account_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1`,
            [a.account.id],
          );
        },
      },
    });
    await expect(attempt).rejects.toThrow(/duplicate key|unique/i);
    expect(await counts()).toEqual(before);
  });

  it('a concurrent PUT waiting on the same key gets the committed batch, not a second one', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let reached!: () => void;
    const holding = new Promise<void>((r) => (reached = r));
    const body = batchBody(a, { idempotency_key: 'held-open', contacts: makeContacts(4) });
    const first = createBatch(t.deps, a.account, asCreateRequest(body), {
      insert: {
        chunkSize: 2,
        afterChunk: async () => {
          reached();
          await gate;
        },
      },
    });
    await holding; // the batch row is inserted, the transaction still open
    let secondSettled = false;
    const locks = watchLockWaits(t.deps.db);
    const second = createBatch(
      t.deps,
      a.account,
      asCreateRequest(batchBody(a, { idempotency_key: 'held-open', contacts: makeContacts(1) })),
      {},
    ).finally(() => (secondSettled = true));
    try {
      await waitFor(locks.waiting, { what: "the second create to wait behind the first one's transaction" });
    } finally {
      locks.stop();
    }
    expect(secondSettled).toBe(false); // it cannot decide before the first commits or rolls back
    release();
    const [r1, r2] = await Promise.all([first, second]);
    expect(r1.idempotent).toBe(false);
    expect(r2).toEqual({ ...r1, idempotent: true });
    expect(await t.deps.db.prisma.batch.count({ where: { idempotencyKey: 'held-open' } })).toBe(1);
    expect(await t.deps.db.prisma.call.count({ where: { batchId: r1.batchId } })).toBe(4);
  });

  it('when the first holder of a key fails, a waiting PUT with that key creates the batch', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let reached!: () => void;
    const holding = new Promise<void>((r) => (reached = r));
    const first = createBatch(t.deps, a.account, asCreateRequest(batchBody(a, { idempotency_key: 'fails-first', contacts: makeContacts(4) })), {
      insert: {
        chunkSize: 2,
        afterChunk: async () => {
          reached();
          await gate;
          throw new Error('first attempt fails');
        },
      },
    });
    const firstOutcome = first.catch((e: Error) => e);
    await holding;
    const locks = watchLockWaits(t.deps.db);
    const second = createBatch(t.deps, a.account, asCreateRequest(batchBody(a, { idempotency_key: 'fails-first', contacts: makeContacts(3) })), {});
    try {
      await waitFor(locks.waiting, { what: "the second create to wait behind the first one's transaction" });
    } finally {
      locks.stop();
    }
    release();
    expect(await firstOutcome).toBeInstanceOf(Error);
    const r2 = await second;
    expect(r2).toMatchObject({ idempotent: false, acceptedContacts: 3 });
    expect(await t.deps.db.prisma.call.count({ where: { batchId: r2.batchId } })).toBe(3);
  });
});
