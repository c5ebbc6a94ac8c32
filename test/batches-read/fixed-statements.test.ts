// Hot point lookups run as statements prepared once per pooled connection (src/db/sql-statement.ts):
// the batch read is prepared and then only executed, and a selection beyond its columns still
// reads what it asks for.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { insertBatch, type InsertedBatch } from '../helpers/fixtures.ts';
import { TEST_DATABASE_URL } from '../helpers/database.ts';
import { fixedStatement } from '../../src/db/sql-statement.ts';
import { countQueries } from '../helpers/query-counter.ts';

let t: TestApp;
let a: SeededAccount;
let inserted: InsertedBatch;

beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount();
  inserted = await insertBatch(t.deps, a, { contacts: 3, status: 'running', batch: { voice: 'nova', metadata: { campaign: 'spring' } } });
});
afterAll(() => t.close());

const details = () => t.request('GET', `/api/v1/public/call-batches/${inserted.batch.id}`, { key: a.apiKey });

/** Each statement the driver was given: its name (undefined: run unprepared) and the error code it was refused with. */
async function statementsSent(run: () => Promise<unknown>): Promise<{ name?: string; refused?: string }[]> {
  const pool = t.deps.db.pool;
  if (!pool) return [];
  const sent: { name?: string; refused?: string }[] = [];
  const original = pool.query;
  pool.query = ((config: unknown, ...rest: unknown[]) => {
    const entry: { name?: string; refused?: string } = {
      name: typeof config === 'object' && config ? (config as { name?: string }).name : undefined,
    };
    sent.push(entry);
    return (original as (...args: unknown[]) => Promise<unknown>).call(pool, config, ...rest).catch((e: { code?: string }) => {
      entry.refused = e.code;
      throw e;
    });
  }) as typeof pool.query;
  try {
    await run();
    return sent;
  } finally {
    pool.query = original;
  }
}

describe('fixed statements', () => {
  it('are named by their text: the same text the same name, another text another', () => {
    const a1 = fixedStatement('SELECT 1 FROM batches WHERE id = $1');
    expect(fixedStatement('SELECT 1 FROM batches WHERE id = $1').name).toBe(a1.name);
    expect(fixedStatement('SELECT 2 FROM batches WHERE id = $1').name).not.toBe(a1.name);
    expect(a1.name).toMatch(/^fixed_[0-9a-f]{24}$/);
  });

  it('batch details and a GraphQL selection within its columns read the row by one statement; one beyond them reads its own', async () => {
    const counter = countQueries(t.deps.db);
    try {
      const rest = await details();
      expect(rest.status).toBe(200);
      expect(rest.body.data).toMatchObject({ batch_id: inserted.batch.id, status: 'running', total_contacts: 3 });
      const small = await t.gql(`query($id: ID!) { batch(id: $id) { id status queued } }`, { id: inserted.batch.id }, a.apiKey);
      expect(small.body).toEqual({ data: { batch: { id: inserted.batch.id, status: 'running', queued: 3 } } });
      const wide = await t.gql(`query($id: ID!) { batch(id: $id) { id voice metadata totalContacts } }`, { id: inserted.batch.id }, a.apiKey);
      expect(wide.body).toEqual({ data: { batch: { id: inserted.batch.id, voice: 'nova', metadata: { campaign: 'spring' }, totalContacts: 3 } } });
      const batchReads = counter.statements.filter((sql) => /FROM batches WHERE id = \$1 AND account_id = \$2/.test(sql));
      expect(batchReads).toHaveLength(3);
      expect(batchReads[0]).toBe(batchReads[1]);
      expect(batchReads[2]).toMatch(/"voice" AS "voice"/);
      expect(batchReads[0]).not.toMatch(/"voice"|"metadata"|validation_errors/);
    } finally {
      counter.stop();
    }
  });

  it.skipIf(!TEST_DATABASE_URL)('on PostgreSQL the batch read is prepared once per connection and then only executed', async () => {
    const sent = await statementsSent(async () => {
      for (let i = 0; i < 12; i++) expect((await details()).status).toBe(200);
    });
    const [readName] = new Set(sent.map((s) => s.name).filter(Boolean));
    expect(readName).toMatch(/^fixed_/);
    // What PostgreSQL holds on every pooled connection: one prepared statement by that name each,
    // executed (generic or custom plan) as often as the requests above sent it.
    const pool = t.deps.db.pool!;
    const clients = await Promise.all(Array.from({ length: pool.totalCount }, () => pool.connect()));
    let executions = 0;
    try {
      for (const c of clients) {
        const { rows } = await c.query(`SELECT generic_plans + custom_plans AS runs FROM pg_prepared_statements WHERE name = $1`, [readName]);
        expect(rows.length).toBeLessThanOrEqual(1);
        executions += rows.reduce((n, r) => n + Number(r.runs), 0);
      }
    } finally {
      for (const c of clients) c.release();
    }
    expect(executions).toBeGreaterThanOrEqual(12);
  });

  it.skipIf(!TEST_DATABASE_URL)('a prepared read that a migration made stale is run once more unprepared: no request fails', async () => {
    expect((await details()).status).toBe(200);
    // A column it returns changes type under the running process (a rolling release's migration).
    await t.deps.db.pool!.query('ALTER TABLE batches ALTER COLUMN timezone TYPE varchar(64)');
    const sent = await statementsSent(async () => {
      for (let i = 0; i < 12; i++) {
        const res = await details();
        expect(res.status).toBe(200);
        expect(res.body.data.batch_id).toBe(inserted.batch.id);
      }
    });
    // Each connection that held it refused it once (PostgreSQL: "cached plan must not change result type").
    expect(sent.filter((s) => s.refused === '0A000').length).toBeGreaterThan(0);
    expect(sent.filter((s) => s.refused && s.refused !== '0A000')).toEqual([]);
  });
});
