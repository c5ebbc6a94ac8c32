// Fault campaign (docs/dispatch.md "Fault campaign"): rounds of random batches on 2-3 dispatch
// workers and 1-2 APIs sharing one PostgreSQL, with the Retell fake as a process of its own, while a
// nemesis pauses, kills, partitions and slows things (nemesis.ts); after each round a checker reads
// the database, the webhook receiver and the provider's log (checker.ts). Exits 1 on any violation.
//
//   npm run bench:faults
//   FAULTS_ROUNDS=200 FAULTS_SEED=42 FAULTS_DURATION_S=1800 FAULTS_ROUND_MS=4000 FAULTS_WORKERS=3
//   FAULTS_APIS=2 FAULTS_LEASE_MS=3000 FAULTS_KINDS=pause,kill (default: all) FAULTS_PER_ROUND=2
//   BENCH_PG_URL=postgresql://postgres@127.0.0.1:5432/postgres (a throwaway database per run)
//   FAULTS_DIR (the processes' stderr and the provider log; default a fresh directory under /tmp)
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FAKETIME_LIB, startCluster } from './cluster.ts';
import { FAULT_KINDS, healAll, type FaultKind } from './nemesis.ts';
import { addRound, newTotals, summary, violationCount } from './report.ts';
import { runRound } from './round.ts';
import { rng } from './scenario.ts';

const env = (name: string, fallback: string) => process.env[name] || fallback;
const SERVER = process.env.BENCH_PG_URL || process.env.TEST_DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/postgres';
const ROUNDS = Number(env('FAULTS_ROUNDS', '200'));
const SEED = Number(env('FAULTS_SEED', String(crypto.randomInt(1, 2 ** 31))));
const DURATION_S = Number(env('FAULTS_DURATION_S', '2400'));
const ROUND_MS = Number(env('FAULTS_ROUND_MS', '4000'));
const WORKERS = Number(env('FAULTS_WORKERS', '3'));
const APIS = Number(env('FAULTS_APIS', '2'));
const LEASE_MS = Number(env('FAULTS_LEASE_MS', '3000'));
const PER_ROUND = Number(env('FAULTS_PER_ROUND', '2'));
const KINDS = env('FAULTS_KINDS', FAULT_KINDS.join(',')).split(',') as FaultKind[];
const DIR = env('FAULTS_DIR', fs.mkdtempSync(path.join(os.tmpdir(), 'faults-')));

for (const k of KINDS) if (!FAULT_KINDS.includes(k)) throw new Error(`FAULTS_KINDS: unknown kind ${k} (known: ${FAULT_KINDS.join(', ')})`);

async function main() {
  console.log(
    `fault campaign: seed ${SEED}, up to ${ROUNDS} rounds / ${DURATION_S} s, rounds of ${ROUND_MS} ms, ${WORKERS} workers, ${APIS} APIs, LEASE_MS ${LEASE_MS}`,
  );
  console.log(
    `kinds: ${KINDS.join(', ')}; ${PER_ROUND} a round; logs in ${DIR}; clock steps ${FAKETIME_LIB ? `through ${FAKETIME_LIB}` : 'SKIPPED (libfaketime not installed)'}`,
  );
  const r = rng(SEED);
  const cluster = await startCluster({ serverUrl: SERVER, workers: WORKERS, apis: APIS, leaseMs: LEASE_MS, dir: DIR });
  const totals = newTotals();
  const providerLog = { lines: [], size: 0 };
  const tag = `f${SEED}`;
  let stop = false;
  // The round under way finishes, then everything is cleaned up.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => (stop = true));
  try {
    for (let round = 1; round <= ROUNDS && !stop; round++) {
      if ((Date.now() - totals.startedAt) / 1000 > DURATION_S) break;
      // Every kind in turn first, then a random one beside it.
      const faults = [KINDS[(round - 1) % KINDS.length]!, ...Array.from({ length: PER_ROUND - 1 }, () => r.pick(KINDS))];
      try {
        const res = await runRound(cluster, {
          round,
          rng: r,
          leaseMs: LEASE_MS,
          roundMs: ROUND_MS,
          faults,
          settleMs: 60_000,
          tag,
          clockToleranceMs: 0.5 * LEASE_MS,
          providerLog,
        });
        console.log(addRound(totals, round, res));
      } catch (e) {
        // The harness could not drive the round (no API answered its requests): said, counted, not judged.
        totals.aborted += 1;
        console.log(`round ${round}: aborted by the harness: ${e instanceof Error ? e.message : String(e)}`);
        await healAll(cluster).catch((err) => console.error('heal:', err));
      }
    }
  } finally {
    console.log(summary(totals, SEED));
    await cluster.close().catch((e) => console.error('cleanup:', e));
  }
  const n = violationCount(totals);
  console.log(n === 0 ? 'PASS: 0 violations' : `FAIL: ${n} violations`);
  process.exit(n === 0 ? 0 : 1);
}

main().catch((e) => {
  console.error(e);
  process.exit(2);
});
