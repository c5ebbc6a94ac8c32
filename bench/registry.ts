// Benchmark (not a test): the national do-not-call registry on PostgreSQL. Imports N numbers in the
// registry's download format (one 10-digit number a line, area code by area code, as its area-code
// files come) through the service's streamed import, then prints, each beside its bound:
//   - the import's rate (numbers/s) and the table's size (heap + index, bytes per block and per number);
//   - the create's scrub of a 10,000-contact list (registryVerdicts: one statement, half the numbers listed);
//   - one number looked up alone (the dial-time function, one statement per number), and its buffers;
//   - a delta (remove) import's rate, and a reassigned-number import's rate;
//   - what an int8-primary-key table would take per number (measured on 10^6 rows), for comparison.
//
//   npx tsx bench/registry.ts [--numbers 10000000] [--density 500] [--keep]
//   --numbers 100000000 for the 10^8 run. --density: numbers per NPA-NXX block (of 10,000); 500 is
//   5 %, the national registry's ~250 M numbers over its ~200-300 k in-service exchange blocks being
//   about 8-12 %. BENCH_PG_URL selects the PostgreSQL server (default postgresql://postgres@127.0.0.1:5432/postgres).
import { parseArgs } from 'node:util';
import { openThrowawayDatabase } from './throwaway-database.ts';
import { migrate } from '../src/db/migrate.ts';
import { runStatement } from '../src/db/sql-statement.ts';
import { withSqlTransaction } from '../src/db/sql-transaction.ts';
import { importReassignedNumbers, importRegistryNumbers } from '../src/services/registry/import-registry.ts';
import { registryVerdicts } from '../src/services/registry/registry-verdicts.ts';
import type { NormalizedContact } from '../src/domain/contacts.ts';

const { values } = parseArgs({
  options: {
    numbers: { type: 'string', default: '10000000' },
    density: { type: 'string', default: '500' },
    keep: { type: 'boolean', default: false },
  },
});
const N = Number(values.numbers);
const DENSITY = Number(values.density);
const PG_URL = process.env.BENCH_PG_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

/** Bounds this bench holds the service to (docs/campaigns.md "National do-not-call registry"). */
const BOUNDS = {
  importPerSecond: 170_000, // the whole registry (10^8) in at most 10 minutes
  bytesPerBlock: 1_700,
  scrub10kMs: 500,
  lookupMs: 2,
  removePerSecond: 100_000,
  reassignedPerSecond: 10_000,
};

const blocks = Math.ceil(N / DENSITY);
/** The blocks: NPA 201.., NXX 200..999, consecutive (an area code's file holds its exchanges). */
const prefixOf = (b: number) => (201 + Math.floor(b / 800)) * 1000 + 200 + (b % 800);

// A fixed pseudo-random sequence (xorshift), so runs compare.
let seed = 0x9e3779b9;
const rand = () => {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) / 2 ** 32;
};

/** `DENSITY` distinct line numbers of a block: the block's i-th listed line is i*step + an offset. */
const step = Math.floor(10_000 / DENSITY);
const lineOf = (i: number) => i * step + (i % step);

/** The file: block by block, one `NPANXXLLLL\n` a number, in 1 MiB chunks. */
async function* registryFile(total: number, from = 0, every = 1): AsyncGenerator<Uint8Array> {
  const lastBlock = Math.ceil(total / DENSITY);
  const CHUNK = 1 << 20;
  let buf = Buffer.allocUnsafe(CHUNK);
  let at = 0;
  for (let b = 0; b < lastBlock; b++) {
    const prefix = prefixOf(b);
    for (let i = from; i < DENSITY && b * DENSITY + i < total; i += every) {
      const n = prefix * 10_000 + lineOf(i);
      if (at + 11 > CHUNK) {
        yield buf.subarray(0, at);
        buf = Buffer.allocUnsafe(CHUNK);
        at = 0;
      }
      at += buf.write(String(n), at, 'latin1');
      buf[at++] = 10;
    }
  }
  if (at) yield buf.subarray(0, at);
}

async function* reassignedFile(total: number): AsyncGenerator<Uint8Array> {
  const lines: string[] = [];
  for (let k = 0; k < total; k++) {
    const b = Math.floor(rand() * blocks);
    lines.push(`${prefixOf(b) * 10_000 + Math.floor(rand() * 10_000)},2026-0${1 + (k % 9)}-1${k % 10}`);
    if (lines.length === 10_000) {
      yield Buffer.from(lines.join('\n') + '\n');
      lines.length = 0;
    }
  }
  if (lines.length) yield Buffer.from(lines.join('\n') + '\n');
}

const row = (name: string, value: string, bound: string, ok: boolean) =>
  console.log(`${name.padEnd(46)} ${value.padStart(18)}   bound ${bound.padEnd(16)} ${ok ? 'ok' : 'OVER'}`);
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const opened = await openThrowawayDatabase(PG_URL, 'bench_registry', 4);
  if (!opened) throw new Error(`No PostgreSQL at ${PG_URL}`);
  const { db } = opened;
  try {
    await migrate(db);
    const [{ server_version: version }] = await runStatement<{ server_version: string }>(db, 'SHOW server_version');
    console.log(`registry bench: ${fmt(N)} numbers in ${fmt(blocks)} NPA-NXX blocks (${DENSITY} a block), PostgreSQL ${version}\n`);

    // Import.
    let t0 = performance.now();
    const imported = await importRegistryNumbers(db, registryFile(N), { mode: 'add' });
    const importS = (performance.now() - t0) / 1000;
    if (imported.numbers !== N || imported.badLines !== 0) throw new Error(`imported ${imported.numbers} of ${N}, ${imported.badLines} bad`);
    row('import (add), numbers/s', `${fmt(N / importS)}`, `≥ ${fmt(BOUNDS.importPerSecond)}`, N / importS >= BOUNDS.importPerSecond);
    console.log(`  ${fmt(N)} numbers in ${importS.toFixed(1)} s, ${fmt(imported.blocks)} blocks written`);

    await runStatement(db, 'VACUUM ANALYZE dnc_registry_blocks');
    const [size] = await runStatement<{ heap: string; idx: string; total: string; listed: string }>(
      db,
      `SELECT pg_table_size('dnc_registry_blocks') AS heap, pg_indexes_size('dnc_registry_blocks') AS idx,
              pg_total_relation_size('dnc_registry_blocks') AS total, (SELECT sum(bit_count(bits)) FROM dnc_registry_blocks) AS listed`,
    );
    const total = Number(size.total);
    if (Number(size.listed) !== N) throw new Error(`the table lists ${size.listed}, expected ${N}`);
    row('table + index, bytes per block', fmt(total / blocks), `≤ ${fmt(BOUNDS.bytesPerBlock)}`, total / blocks <= BOUNDS.bytesPerBlock);
    console.log(
      `  heap ${fmt(Number(size.heap) / 2 ** 20)} MiB + index ${fmt(Number(size.idx) / 2 ** 20)} MiB = ${(total / 2 ** 20).toFixed(1)} MiB; ` +
        `${(total / N).toFixed(2)} bytes per number at ${DENSITY} a block (a full block: ${(total / blocks / 10_000).toFixed(3)})`,
    );

    // The create's scrub: 10,000 contacts, every other one listed.
    const contacts: NormalizedContact[] = Array.from({ length: 10_000 }, (_, i) => {
      const b = Math.floor(rand() * blocks);
      const line = i % 2 === 0 ? lineOf(Math.floor(rand() * DENSITY)) : lineOf(Math.floor(rand() * DENSITY)) + 1;
      const phone = `+1${prefixOf(b) * 10_000 + line}`;
      return { index: i + 1, externalId: `c${i}`, name: null, phoneNumber: phone, alternatePhone: null, metadata: {} };
    });
    const scrubMs: number[] = [];
    let found = 0;
    for (let k = 0; k < 7; k++) {
      t0 = performance.now();
      const v = await withSqlTransaction(db, (tx) => registryVerdicts(tx, contacts));
      scrubMs.push(performance.now() - t0);
      found = v.listed.size;
    }
    row('scrub of a 10,000-contact create, ms (median)', median(scrubMs).toFixed(1), `≤ ${BOUNDS.scrub10kMs}`, median(scrubMs) <= BOUNDS.scrub10kMs);
    console.log(`  ${fmt(found)} of 10,000 listed; ${((median(scrubMs) * 1000) / 10_000).toFixed(2)} µs a number`);

    // One number alone, as the claim asks per call.
    const one: number[] = [];
    for (let k = 0; k < 1_000; k++) {
      const phone = contacts[k].phoneNumber;
      t0 = performance.now();
      await runStatement(db, 'SELECT registry_listed($1) AS listed', [phone]);
      one.push(performance.now() - t0);
    }
    row('one lookup (a statement round trip), ms', median(one).toFixed(3), `≤ ${BOUNDS.lookupMs}`, median(one) <= BOUNDS.lookupMs);
    const plan = await runStatement<{ 'QUERY PLAN': string }>(
      db,
      `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT 1 FROM dnc_registry_blocks b WHERE b.prefix = $1 AND get_bit(b.bits, $2) = 1`,
      [prefixOf(7), lineOf(3)],
    );
    console.log(
      `  plan: ${plan
        .map((p) => p['QUERY PLAN'].trim())
        .filter((l) => /Index|Buffers|Execution/.test(l))
        .join(' | ')}`,
    );

    // A delta: a tenth of the numbers removed.
    const removeN = Math.floor(N / 10);
    t0 = performance.now();
    const removed = await importRegistryNumbers(db, registryFile(N, 0, 10), { mode: 'remove' });
    const removeS = (performance.now() - t0) / 1000;
    row(
      'delta import (remove), numbers/s',
      fmt(removed.numbers / removeS),
      `≥ ${fmt(BOUNDS.removePerSecond)}`,
      removed.numbers / removeS >= BOUNDS.removePerSecond,
    );
    console.log(`  ${fmt(removed.numbers)} numbers (≈ ${fmt(removeN)}) in ${removeS.toFixed(1)} s`);

    // Reassigned-number results.
    const R = Math.min(1_000_000, N);
    t0 = performance.now();
    const re = await importReassignedNumbers(db, reassignedFile(R));
    const reS = (performance.now() - t0) / 1000;
    row(
      'reassigned import, numbers/s',
      fmt(re.numbers / reS),
      `≥ ${fmt(BOUNDS.reassignedPerSecond)}`,
      re.numbers / reS >= BOUNDS.reassignedPerSecond,
    );
    const [rs] = await runStatement<{ total: string; n: string }>(
      db,
      `SELECT pg_total_relation_size('reassigned_numbers') AS total, count(*) AS n FROM reassigned_numbers`,
    );
    console.log(`  ${fmt(Number(rs.n))} numbers kept, ${(Number(rs.total) / Number(rs.n)).toFixed(1)} bytes a number`);

    // The alternative: a row per number.
    await runStatement(db, 'CREATE TABLE bench_int8_numbers (number bigint PRIMARY KEY)');
    await runStatement(db, 'INSERT INTO bench_int8_numbers SELECT 2012000000 + g * 7 FROM generate_series(1, 1000000) g');
    await runStatement(db, 'VACUUM ANALYZE bench_int8_numbers');
    const [alt] = await runStatement<{ total: string }>(db, `SELECT pg_total_relation_size('bench_int8_numbers') AS total`);
    const perNumber = Number(alt.total) / 1_000_000;
    console.log(
      `\nfor comparison, an int8 primary key per number: ${perNumber.toFixed(1)} bytes a number, ${((perNumber * N) / 2 ** 30).toFixed(2)} GiB for ${fmt(N)} ` +
        `(${((perNumber * 1e8) / 2 ** 30).toFixed(1)} GiB for 10^8) against ${(total / 2 ** 30).toFixed(3)} GiB here`,
    );
  } finally {
    if (!values.keep) await opened.drop();
    else await db.close();
  }
}

await main();
