// Contacts go into the database in bulk: creating a batch costs a fixed number of SQL statements
// plus, per chunk of contacts, one COPY and a read of each do-not-call list that holds anything
// (the account's and the national registry); never one per contact. Counted at the driver, inside
// the create transaction too. The last test empties the registry: it stays last.
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { asCreateRequest, batchBody, CALL_BATCHES, makeContacts } from '../helpers/batch-requests.ts';
import { countQueries } from '../helpers/query-counter.ts';
import { createBatch } from '../../src/services/batches/create-batch.ts';
import { CALL_CHUNK_SIZE, callChunkSizes, FIRST_CALL_CHUNK_SIZE } from '../../src/services/batches/insert-calls.ts';
import { importRegistryNumbers } from '../../src/services/registry/import-registry.ts';
import { runStatement } from '../../src/db/sql-statement.ts';

const N = 10_000;

let t: TestApp;
let a: SeededAccount;

beforeAll(async () => {
  // The statement counts below include the key lookup of every request: no key cache.
  t = await createTestApp({ config: { API_KEY_CACHE_MS: '0' } });
  a = await t.seedAccount({ limits: { maxBatchSize: N, rateLimitPerMinute: 100_000 } });
  // Both lists hold a number (none of the contacts'), so both are asked about every chunk.
  const added = await t.gql('mutation($n: [String!]!) { addSuppressions(phoneNumbers: $n) { added } }', { n: ['+12125550100'] }, a.apiKey);
  expect(added.body.errors).toBeUndefined();
  await importRegistryNumbers(t.deps.db, Readable.from([Buffer.from('2125550101\n')]), { mode: 'add' });
});
afterAll(() => t.close());

const isCallInsert = (sql: string) => /^\s*(INSERT INTO|COPY) calls\b/i.test(sql);
// Per chunk: the account's do-not-call list and the national registry (with reassigned numbers),
// each only when it holds anything.
const isListRead = (sql: string) => /FROM suppressions WHERE account_id = \$1 AND|FROM dnc_registry_blocks b/.test(sql);

async function statementsOf(run: () => Promise<unknown>) {
  const counter = countQueries(t.deps.db, { transactions: true });
  try {
    await run();
  } finally {
    counter.stop();
  }
  const statements = [...counter.statements];
  const callInserts = statements.filter(isCallInsert).length;
  const listReads = statements.filter(isListRead).length;
  return { total: statements.length, callInserts, listReads, fixed: statements.length - callInserts - listReads, statements };
}

describe('bulk insert of contacts', () => {
  it(`PUT of ${N} contacts: the statements of a 1-contact batch plus a COPY and a list read per chunk of contacts (${FIRST_CALL_CHUNK_SIZE}, then 1.5 times the last up to ${CALL_CHUNK_SIZE.postgres} on PostgreSQL, ${CALL_CHUNK_SIZE.pglite} in PGlite)`, async () => {
    let seq = 0;
    const put = (n: number) => async () => {
      const res = await t.request('PUT', CALL_BATCHES, {
        key: a.apiKey,
        body: batchBody(a, { idempotency_key: `bulk-${++seq}`, contacts: makeContacts(n) }),
      });
      expect(res.status).toBe(201);
      expect(res.body.data.accepted_contacts).toBe(n);
    };
    await put(1)(); // warm-up: first-use reads (rate-limit window, caches) are not part of the cost
    // The fewer of two runs: a background loop's statement (a prune, a refresh) can land in either
    // window on a busy machine.
    const fewest = async (run: () => Promise<void>) => [await statementsOf(run), await statementsOf(run)].sort((x, y) => x.fixed - y.fixed)[0];
    const one = await fewest(put(1));
    const many = await fewest(put(N));
    // The first chunk is FIRST_CALL_CHUNK_SIZE contacts at most; each later one 1.5 times the last, up to CALL_CHUNK_SIZE.
    const size = CALL_CHUNK_SIZE[t.deps.db.kind];
    const chunks = callChunkSizes(N, Math.min(FIRST_CALL_CHUNK_SIZE, size), size).length;
    expect(chunks).toBe(t.deps.db.kind === 'postgres' ? 6 : 11);
    expect([one.callInserts, one.listReads]).toEqual([1, 2]);
    expect([many.callInserts, many.listReads]).toEqual([chunks, 2 * chunks]);
    expect(many.fixed).toBe(one.fixed);
    // The fixed part is small: auth, lookups, the batch row, the transaction.
    expect(one.total, one.statements.join('\n---\n')).toBeLessThanOrEqual(20);
    expect(await t.deps.db.prisma.call.count({ where: { accountId: a.account.id } })).toBe(2 * N + 3);
  }, 120_000);

  it('the number of call COPYs and list reads is ceil(n / chunk size) whatever the chunk size', async () => {
    const create = (n: number, chunkSize: number) => () =>
      createBatch(t.deps, a.account, asCreateRequest(batchBody(a, { contacts: makeContacts(n) })), {
        insert: { chunkSize },
      });
    const base = await statementsOf(create(1, 1_000));
    for (const chunkSize of [1_000, 3_000, 10_000]) {
      const run = await statementsOf(create(N, chunkSize));
      expect({ chunkSize, callInserts: run.callInserts, listReads: run.listReads, fixed: run.fixed }).toEqual({
        chunkSize,
        callInserts: Math.ceil(N / chunkSize),
        listReads: 2 * Math.ceil(N / chunkSize),
        fixed: base.fixed,
      });
    }
  }, 120_000);

  it('asks no list about the numbers when the account has no do-not-call entry and the registry holds nothing', async () => {
    const b = await t.seedAccount({ limits: { maxBatchSize: N, rateLimitPerMinute: 100_000 } });
    const put = (account: SeededAccount, key: string) => () =>
      t.request('PUT', CALL_BATCHES, { key: account.apiKey, body: batchBody(account, { idempotency_key: key, contacts: makeContacts(3_000) }) });
    // Registry still listed: only the registry is asked (one read a chunk).
    const registryOnly = await statementsOf(put(b, 'registry-only'));
    const chunks = callChunkSizes(3_000, Math.min(FIRST_CALL_CHUNK_SIZE, CALL_CHUNK_SIZE[t.deps.db.kind]), CALL_CHUNK_SIZE[t.deps.db.kind]).length;
    expect(registryOnly.listReads).toBe(chunks);
    await runStatement(t.deps.db, 'DELETE FROM dnc_registry_blocks');
    const none = await statementsOf(put(b, 'no-lists'));
    expect([none.callInserts, none.listReads]).toEqual([chunks, 0]);
    // A number on the list is refused again once the list holds it.
    await t.gql(
      'mutation($n: [String!]!) { addSuppressions(phoneNumbers: $n) { added } }',
      { n: [makeContacts(1)[0].phone_number as string] },
      b.apiKey,
    );
    const res = await t.request('PUT', CALL_BATCHES, { key: b.apiKey, body: batchBody(b, { idempotency_key: 'listed', contacts: makeContacts(3) }) });
    expect(res.status).toBe(201);
    expect(res.body.data.rejected_contacts).toBe(1);
  }, 120_000);
});
