// Embedded PGlite's turns (src/db/pglite-turns.ts): PGlite's own lock hands over from one queued
// statement to the next without a turn of the event loop, so a queue of statements held every socket
// and timer until it drained. With the turns taken in hand, a timer fires between two queued statements,
// an interactive statement queued after bulk ones runs before them, bulk still runs once it has waited
// long enough, and a transaction stays exclusive.
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BULK_MAX_WAIT_MS, inBulkLane, takeTurns } from '../../src/db/pglite-turns.ts';
import { waitFor } from '../helpers/wait.ts';

// ~5-20 ms of the thread each on PGlite, whatever the machine's load.
const WORK = 'SELECT count(*)::int AS n FROM generate_series(1, 100000)';

// Two databases for the file (each takes seconds to start on a busy machine): one as PGlite ships,
// one whose turns are taken, on a clock the test moves.
let plain: PGlite;
let db: PGlite;
let turns: ReturnType<typeof takeTurns>;
let clock = 0;
beforeAll(async () => {
  [plain, db] = await Promise.all([PGlite.create(), PGlite.create()]);
  turns = takeTurns(db, () => clock);
}, 120_000);
afterAll(async () => {
  await Promise.all([plain?.close(), db?.close()]);
});

/** How many of `count` queued statements had finished when a timer set after queueing them fired. */
async function finishedBeforeTimer(db: PGlite, count: number): Promise<number> {
  let finished = 0;
  const all = Array.from({ length: count }, () => db.query(WORK).then(() => finished++));
  const atTimer = await new Promise<number>((resolve) => setTimeout(() => resolve(finished), 0));
  await Promise.all(all);
  return atTimer;
}

describe('PGlite turns', () => {
  it('without them a queue of statements holds the event loop until it drains (why they exist)', async () => {
    expect(await finishedBeforeTimer(plain, 20)).toBe(20);
  });

  it('with them a timer fires while statements are still queued', async () => {
    expect(await finishedBeforeTimer(db, 20)).toBeLessThan(20);
  });

  it('runs interactive statements queued after bulk ones first, and bulk once it has waited its bound', async () => {
    const order: string[] = [];
    const run = (name: string, bulk: boolean) => (bulk ? inBulkLane(() => db.query(WORK)) : db.query(WORK)).then(() => order.push(name));
    const started = [run('i0', false), run('b1', true), run('b2', true), run('i1', false), run('i2', false)];
    await Promise.all(started.slice(3));
    // i0 had the turn before the rest were queued; i1 and i2 overtook both bulk statements.
    expect(order).toEqual(['i0', 'i1', 'i2']);
    await Promise.all(started);
    expect(order).toEqual(['i0', 'i1', 'i2', 'b1', 'b2']);

    // Behind a stream of interactive statements, bulk runs once it has waited BULK_MAX_WAIT_MS.
    order.length = 0;
    const bulk = run('bulk', true);
    const [i3, i4] = [run('i3', false), run('i4', false)];
    await i3;
    clock += BULK_MAX_WAIT_MS;
    await Promise.all([bulk, i4]);
    expect(order).toEqual(['i3', 'bulk', 'i4']);
    expect(turns.waiting).toEqual({ interactive: 0, bulk: 0 });
  });

  it('keeps a transaction exclusive: a statement queued during it runs after its commit', async () => {
    await db.exec('CREATE TABLE t (n int)');
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let inserted = false;
    const tx = db.transaction(async (t) => {
      await t.query('INSERT INTO t VALUES (1)');
      inserted = true;
      await held;
      await t.query('INSERT INTO t VALUES (2)');
    });
    const read = db.query<{ n: number }>('SELECT count(*)::int AS n FROM t');
    // Released once the transaction is half done with the read waiting for its turn meanwhile.
    await waitFor(() => inserted && turns.waiting.interactive === 1, { what: 'the read queued behind the open transaction' });
    release();
    await tx;
    expect((await read).rows[0].n).toBe(2);
  });
});
