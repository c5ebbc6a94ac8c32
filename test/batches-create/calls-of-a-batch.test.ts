// A call belongs to its batch: same account, agent and prompt version. No foreign key holds it
// (migration calls_write_cost: a per-row check cost a quarter of a bulk insert), so the one
// writer is checked here, and the triggers that kept the foreign key's other duties: deleting a
// batch deletes its calls, and neither side's keys change.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { asCreateRequest, batchBody, makeContacts } from '../helpers/batch-requests.ts';
import { createBatch } from '../../src/services/batches/create-batch.ts';
import { runStatement } from '../../src/db/sql-statement.ts';

let t: TestApp;
let a: SeededAccount;

beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount();
});
afterAll(() => t.close());

const create = async (n: number) =>
  createBatch(t.deps, a.account, asCreateRequest(batchBody(a, { contacts: makeContacts(n) })), { insert: { chunkSize: 4 } });

describe('the calls of a batch', () => {
  it('carry their batch account, agent and prompt version, in every chunk', async () => {
    const r = await create(10);
    const rows = await runStatement<{ n: number }>(
      t.deps.db,
      `SELECT count(*)::int AS n FROM calls c JOIN batches b ON b.id = c.batch_id
        WHERE c.batch_id = $1 AND c.account_id = b.account_id AND c.agent_id = b.agent_id AND c.prompt_version_id = b.prompt_version_id`,
      [r.batchId],
    );
    expect(rows[0].n).toBe(10);
  });

  it('go when their batch is deleted, with their history', async () => {
    const r = await create(3);
    const [call] = await runStatement<{ id: string }>(t.deps.db, 'SELECT id FROM calls WHERE batch_id = $1 LIMIT 1', [r.batchId]);
    await runStatement(t.deps.db, `INSERT INTO call_events (account_id, call_id, to_status) VALUES ($1, $2, 'pending')`, [a.account.id, call.id]);
    await runStatement(t.deps.db, 'DELETE FROM batches WHERE id = $1', [r.batchId]);
    const left = await runStatement<{ calls: number; events: number }>(
      t.deps.db,
      `SELECT (SELECT count(*)::int FROM calls WHERE batch_id = $1) AS calls, (SELECT count(*)::int FROM call_events WHERE call_id = $2) AS events`,
      [r.batchId, call.id],
    );
    expect(left[0]).toEqual({ calls: 0, events: 0 });
  });

  it("keep their batch's keys: neither a call's nor a batch's can change", async () => {
    const r = await create(2);
    const other = await t.seedAccount();
    await expect(runStatement(t.deps.db, 'UPDATE calls SET agent_id = $2 WHERE batch_id = $1', [r.batchId, other.agent.id])).rejects.toThrow(
      /never change/,
    );
    await expect(runStatement(t.deps.db, `UPDATE batches SET id = 'sched_moved' WHERE id = $1`, [r.batchId])).rejects.toThrow(/never change/);
    // An update that leaves the keys alone (every update the service makes) goes through.
    await runStatement(t.deps.db, `UPDATE calls SET status = 'queued', batch_id = batch_id WHERE batch_id = $1`, [r.batchId]);
  });
});
