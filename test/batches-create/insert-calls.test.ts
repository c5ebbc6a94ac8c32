// insertCalls asks for the next chunk while the previous chunk's COPY runs. A COPY that fails
// meanwhile must be the error the create fails with, never an unhandled rejection (which would
// end the process), and a failing source must not leave the COPY unobserved.
import { describe, expect, it } from 'vitest';
import type { SqlTransaction } from '../../src/db/sql-transaction.ts';
import { insertCalls, type NewCall } from '../../src/services/batches/insert-calls.ts';
import { waitFor } from '../helpers/wait.ts';

const owner = { accountId: 'acc_1', batchId: 'sched_1', agentId: 'agt-1', promptVersionId: 'pmt-1', createdAt: new Date('2026-01-01T00:00:00Z') };
const call = (i: number): NewCall => ({
  contact: { index: i, externalId: `c${i}`, name: null, phoneNumber: `+1415555${String(1000 + i)}`, alternatePhone: null, metadata: {} },
  status: 'pending',
});

/** COPY's binary format read back: each row's fields (null for NULL). */
function copiedRows(data: Uint8Array): Array<Array<Buffer | null>> {
  const buf = Buffer.from(data);
  expect(buf.subarray(0, 11).toString('latin1')).toBe('PGCOPY\n\xff\r\n\0');
  const rows: Array<Array<Buffer | null>> = [];
  for (let at = 19; ;) {
    const fields = buf.readInt16BE(at);
    at += 2;
    if (fields === -1) break;
    const row: Array<Buffer | null> = [];
    for (let f = 0; f < fields; f++) {
      const length = buf.readInt32BE(at);
      at += 4;
      row.push(length < 0 ? null : buf.subarray(at, (at += length)));
    }
    rows.push(row);
  }
  return rows;
}

function fakeTx(copy: (rows: Array<Array<Buffer | null>>) => Promise<void>): SqlTransaction {
  return {
    query: async () => [],
    copyRows: (_table, _columns, rows) => {
      const done = copy(copiedRows(rows));
      // Sent at once, as pg-copy-streams has it once the database answers the COPY.
      return { sent: Promise.resolve(), done };
    },
  };
}

describe('insertCalls', () => {
  it('a COPY failing while the next chunk is screened is the error, and is never unhandled', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      // insertCalls asks for the next chunk while the COPY runs: the COPY fails then, and the next
      // chunk's lookup (slower) a turn of the event loop later. The order is forced, not left to timers.
      let failCopy!: (e: Error) => void;
      const copyDone = new Promise<void>((_, reject) => (failCopy = reject));
      let lookupFailed = false;
      async function* chunks() {
        yield [call(1), call(2)];
        failCopy(new Error('COPY failed: connection lost'));
        await new Promise((r) => setImmediate(r));
        lookupFailed = true;
        throw new Error('current transaction is aborted');
      }
      const tx = fakeTx(() => copyDone);
      await expect(insertCalls(tx, owner, chunks())).rejects.toThrow('COPY failed: connection lost');
      // Both failures have happened; Node reports an unhandled rejection once the microtasks that
      // could still handle it have run, before the next turn of the event loop ends.
      await waitFor(() => lookupFailed, { what: "the next chunk's lookup to fail" });
      await new Promise((r) => setImmediate(r));
      await new Promise((r) => setImmediate(r));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('numbers calls 1..n across chunks, skips empty chunks and returns how many it copied', async () => {
    const copied: Array<Array<Array<Buffer | null>>> = [];
    const tx = fakeTx(async (rows) => {
      copied.push(rows);
    });
    const inserted = await insertCalls(tx, owner, [[call(1), call(2)], [], [call(3)]]);
    expect(inserted).toBe(3);
    expect(copied).toHaveLength(2);
    const seqs = copied.flat().map((row) => row[1]!.readInt32BE(0));
    expect(seqs).toEqual([1, 2, 3]);
  });
});
