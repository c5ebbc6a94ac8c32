// The do-not-call read of a create runs beside the create's COPY on a spare pooled connection, or
// behind the COPY on the create's own when none is spare: it never waits for the pool while the
// create holds a connection (a pool drained by such waits deadlocks). Only an idle connection
// counted as spare, and a pool that had never been busy had none, so every read waited for the COPY.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.ts';
import type { SqlTx } from '../../src/db/sql-transaction.ts';
import { spareConnectionOr } from '../../src/db/sql-statement.ts';
import { TEST_DATABASE_URL } from '../helpers/database.ts';

describe.skipIf(!TEST_DATABASE_URL)('spareConnectionOr on PostgreSQL', () => {
  let pool: pg.Pool;
  let db: Database;
  const held: pg.PoolClient[] = [];
  /** The create's own connection: what it was asked, answering at once. */
  const busyCalls: string[] = [];
  const busy: SqlTx = { query: async (sql) => (busyCalls.push(sql), [{ on: 'busy' }] as never) };
  const read = async () => (await spareConnectionOr(db, busy).query<{ on: string }>("SELECT 'spare' AS on"))[0].on;

  beforeAll(() => {
    pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 2 });
    db = { kind: 'postgres', pool } as unknown as Database;
  });
  afterAll(async () => {
    for (const client of held.splice(0)) client.release();
    await pool.end();
  });

  it('opens a connection the pool has room for, though none is idle', async () => {
    held.push(await pool.connect()); // the create's transaction
    expect([pool.totalCount, pool.idleCount]).toEqual([1, 0]);
    expect(await read()).toBe('spare');
    expect(busyCalls).toEqual([]);
    // The spare connection went back to the pool, idle: the next read takes it.
    expect([pool.totalCount, pool.idleCount]).toEqual([2, 1]);
    expect(await read()).toBe('spare');
  });

  it('runs on the busy connection when the pool is full, instead of waiting for it', async () => {
    held.push(await pool.connect());
    expect([pool.totalCount, pool.idleCount]).toEqual([2, 0]);
    expect(await read()).toBe('busy');
    expect(busyCalls).toHaveLength(1);
  });

  it('runs on the busy connection when a new one cannot be opened', async () => {
    const refusing = new pg.Pool({ connectionString: 'postgresql://postgres@127.0.0.1:1/none', max: 2, connectionTimeoutMillis: 2_000 });
    const onRefusing = { kind: 'postgres', pool: refusing } as unknown as Database;
    try {
      expect((await spareConnectionOr(onRefusing, busy).query<{ on: string }>('SELECT 1'))[0].on).toBe('busy');
    } finally {
      await refusing.end();
    }
  });
});
