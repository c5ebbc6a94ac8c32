// Benchmark (not a test): the dispatch worker on PostgreSQL, through the full call lifecycle (claim,
// dial, ringing/answered/in_progress/ended writes with history and counters, recording, analysis).
//
//   npm run bench:dispatch [-- --calls 20000 --slow-calls 2000 --concurrency 500 --slow-concurrency 200 --recording on]
//   BENCH_PG_URL=postgresql://user@host:5432/postgres selects the PostgreSQL server (a throwaway
//   database is created and dropped per scenario).
//
// Scenarios, each with real `src/worker.ts` processes (started and idle before the clock starts):
//   1. zero-latency simulator, one 20k-call batch, 1 worker process      -> calls/s
//   2. the same with 4 worker processes                                   -> calls/s
//   3. 1-second calls, `slow-concurrency` slots, 1 worker process         -> calls/s vs concurrency / 1 s
// For each: the most calls in flight, sampled live from the batch counter and reconstructed
// exactly from the call history (dial .. end), against the batch's limit; plus correctness checks
// (every call ended once, no number dialled twice, counters sum to accepted_contacts).
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { SERVER_NODE_FLAGS } from './server-flags.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SERVER = process.env.BENCH_PG_URL || process.env.TEST_DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/postgres';
const APP_SECRET = 'bench-app-secret-0123456789abcdef0123456789';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback;
}
const CALLS = Number(arg('calls', '20000'));
const SLOW_CALLS = Number(arg('slow-calls', '2000'));
const CONCURRENCY = Number(arg('concurrency', '500'));
const SLOW_CONCURRENCY = Number(arg('slow-concurrency', '200'));
const RECORDING = arg('recording', 'on') !== 'off';
const ONLY = arg('only', '1,2,3').split(',');

const withDb = (url: string, db: string, appName?: string) => {
  const u = new URL(url);
  u.pathname = `/${db}`;
  if (appName) u.searchParams.set('application_name', appName);
  return u.toString();
};

async function adminQuery(sql: string) {
  const c = new pg.Client({ connectionString: SERVER });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

interface Scenario {
  name: string;
  calls: number;
  workers: number;
  simCallMs: number;
  concurrency: number;
}

interface Result {
  scenario: Scenario;
  endedSeconds: number;
  fullSeconds: number;
  sampledMaxInFlight: number;
  historyMaxInFlight: number;
  /** From the first dial to the last end, per the call history (start-up latency excluded). */
  dialToEndSeconds: number;
  checks: string[];
}

async function runScenario(s: Scenario): Promise<Result> {
  const dbName = `cbs_bench_${crypto.randomBytes(5).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${dbName}`);
  const url = withDb(SERVER, dbName);
  const workers: ChildProcess[] = [];
  const { loadConfig } = await import('../src/config.ts');
  const { createDeps } = await import('../src/bootstrap.ts');
  const deps = await createDeps(
    loadConfig({ DATABASE_URL: url, LOG_LEVEL: 'warn', RUN_WORKER: 'false', SEED_DEMO: 'false', APP_SECRET, MIGRATE_ON_START: 'true' }),
  );
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const batchId = await seed(deps, s);

    for (let i = 0; i < s.workers; i++) workers.push(startWorker(withDb(SERVER, dbName, `bench-w${i}`), s.simCallMs));
    await waitFor(async () => {
      const r = await client.query(
        `SELECT count(DISTINCT application_name)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE 'bench-w%'`,
        [dbName],
      );
      return r.rows[0].n === s.workers;
    }, 120_000, workers);

    const { operateBatch } = await import('../src/services/batches/batch-operations.ts');
    const account = await deps.db.prisma.account.findFirstOrThrow();
    const t0 = performance.now();
    await operateBatch(deps, account, batchId, 'start');

    let sampledMax = 0;
    let endedAt = 0;
    for (;;) {
      const r = await client.query<{ in_progress: number; status: string; open: number }>(
        `SELECT in_progress, status,
                (SELECT count(*)::int FROM calls WHERE batch_id = $1 AND transcript_status IN ('pending', 'processing')) AS open
           FROM batches WHERE id = $1`,
        [batchId],
      );
      const row = r.rows[0];
      sampledMax = Math.max(sampledMax, row.in_progress);
      if (row.status === 'completed' && !endedAt) endedAt = performance.now();
      if (endedAt && row.open === 0) break;
      if (workers.some((w) => w.exitCode !== null)) throw new Error('a worker process exited during the run');
      await sleep(endedAt ? 5 : 20);
    }
    const fullAt = performance.now();

    await Promise.all(workers.map((w) => stopWorker(w)));
    const historyMax = await historyMaxInFlight(client, batchId);
    const span = (
      await client.query<{ s: number }>(
        `SELECT EXTRACT(EPOCH FROM max(e.at) - min(e.at))::float AS s FROM call_events e JOIN calls c ON c.id = e.call_id
          WHERE c.batch_id = $1 AND (e.detail->>'event' IN ('dial', 'ended'))`,
        [batchId],
      )
    ).rows[0].s;
    const checks = await correctness(client, batchId);
    return {
      scenario: s,
      endedSeconds: (endedAt - t0) / 1000,
      fullSeconds: (fullAt - t0) / 1000,
      sampledMaxInFlight: sampledMax,
      historyMaxInFlight: historyMax,
      dialToEndSeconds: span,
      checks,
    };
  } finally {
    for (const w of workers) if (w.exitCode === null) w.kill('SIGKILL');
    await client.end().catch(() => undefined);
    await deps.db.close();
    await adminQuery(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  }
}

async function seed(deps: Awaited<ReturnType<typeof import('../src/bootstrap.ts').createDeps>>, s: Scenario): Promise<string> {
  const { createAccount } = await import('../src/services/accounts/accounts.ts');
  const { addDidNumber, createAgent, createPromptVersion } = await import('../src/services/accounts/catalog.ts');
  const { newId, newIds } = await import('../src/domain/ids.ts');
  const { withSqlTransaction } = await import('../src/db/sql-transaction.ts');
  const { account } = await createAccount(deps.db, {
    name: 'Bench',
    email: 'bench@example.com',
    voices: ['alloy'],
    limits: { maxBatchSize: 1_000_000, maxConcurrentCalls: s.concurrency * 2, maxCallDurationSeconds: 600, rateLimitPerMinute: 100_000 },
  });
  const agent = await createAgent(deps.db, account, {
    name: 'Bench Agent',
    voice: 'alloy',
    outcomeKeys: ['interested', 'callback_requested', 'sentiment'],
    recordingEnabled: RECORDING,
  });
  const version = await createPromptVersion(deps.db, account, {
    agentId: agent.id,
    name: 'v1',
    prompt: 'You are a friendly assistant confirming appointment details. Be brief and polite.',
  });
  const did = await addDidNumber(deps.db, account, '+14155550100');
  const batchId = newId('batch');
  const now = new Date().toISOString();
  const n = s.calls;
  await withSqlTransaction(deps.db, async (tx) => {
    await tx.query(
      `INSERT INTO batches (id, account_id, agent_id, prompt_version_id, did_number_id, status, start_mode, scheduled_at,
                            timezone, concurrency, voice, interruption, use_alternate_number, recording_enabled,
                            max_duration_seconds, deduplicate_by_phone, total_contacts, accepted_contacts,
                            rejected_contacts, queued, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, 'paused', 'manual', $6, 'UTC', $7, 'alloy', true, false, $8, 600, false, $9, $9, 0, $9, $6, $6)`,
      [batchId, account.id, agent.id, version.id, did.id, now, s.concurrency, RECORDING, n],
    );
    const ids = newIds('call', n);
    const seqs = ids.map((_, i) => i + 1);
    // Zero-latency runs: last digits cycle 0-9, the simulator's mix of no answer, busy, failed and
    // answered calls. Timed runs: only answered numbers (4-9), so every call lasts exactly SIM_CALL_MS
    // and concurrency / call length is the true ideal.
    const phones = ids.map((_, i) => `+1415${String(2_000_000 + (s.simCallMs > 0 ? i * 10 + 4 + (i % 6) : i)).padStart(7, '0')}`);
    const metadata = ids.map((_, i) => JSON.stringify({ first_name: `Name${i}`, tier: i % 3 ? 'silver' : 'gold' }));
    await tx.query(
      `INSERT INTO calls (id, account_id, batch_id, agent_id, prompt_version_id, seq, external_id, name, phone_number,
                          metadata, status, created_at, updated_at)
       SELECT u.id, $2, $3, $4, $5, u.seq, 'c' || u.seq, 'Contact ' || u.seq, u.phone, u.meta::jsonb, 'queued', $6, $6
         FROM unnest($1::text[], $7::int[], $8::text[], $9::text[]) AS u(id, seq, phone, meta)`,
      [ids, account.id, batchId, agent.id, version.id, now, seqs, phones, metadata],
    );
  });
  return batchId;
}

function startWorker(url: string, simCallMs: number): ChildProcess {
  // BENCH_WORKER_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") profiles the workers.
  const extra = (process.env.BENCH_WORKER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...extra, ...SERVER_NODE_FLAGS, '--import', 'tsx', path.join(ROOT, 'src/worker.ts')], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: url,
      APP_SECRET,
      MIGRATE_ON_START: 'false',
      LOG_LEVEL: 'warn',
      SIM_CALL_MS: String(simCallMs),
      WORKER_POLL_MS: '200',
      LEASE_MS: '30000',
      DB_POOL_SIZE: '10',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr!.on('data', (d) => process.stderr.write(`[worker ${child.pid}] ${d}`));
  return child;
}

async function stopWorker(w: ChildProcess) {
  if (w.exitCode !== null) return;
  const exited = new Promise((r) => w.once('exit', r));
  w.kill('SIGTERM');
  await Promise.race([exited, sleep(15_000)]);
  if (w.exitCode === null) w.kill('SIGKILL');
}

/**
 * Calls in flight reconstructed from the history: +1 at each first dial, -1 at each end; at equal
 * timestamps ends count first (a slot freed by a commit is reused by a later claim).
 */
async function historyMaxInFlight(c: pg.Client, batchId: string): Promise<number> {
  const r = await c.query<{ max: number }>(
    `WITH ev AS (
       SELECT e.at, CASE WHEN e.detail->>'event' = 'dial' THEN 1 ELSE -1 END AS d
         FROM call_events e JOIN calls c ON c.id = e.call_id
        WHERE c.batch_id = $1
          AND ((e.detail->>'event' = 'dial' AND e.detail->>'alternate' = 'false')
               OR (e.to_status IN ('completed', 'failed', 'no_answer', 'busy') AND e.from_status IN ('ringing', 'answered', 'in_progress')))
     )
     SELECT COALESCE(max(running), 0)::int AS max FROM (SELECT sum(d) OVER (ORDER BY at, d ROWS UNBOUNDED PRECEDING) AS running FROM ev) x`,
    [batchId],
  );
  return r.rows[0].max;
}

async function correctness(c: pg.Client, batchId: string): Promise<string[]> {
  const problems: string[] = [];
  const b = (await c.query(`SELECT * FROM batches WHERE id = $1`, [batchId])).rows[0];
  if (b.queued + b.in_progress + b.completed + b.failed + b.cancelled !== b.accepted_contacts) problems.push('counters do not sum to accepted_contacts');
  const counts = (
    await c.query(
      `SELECT count(*) FILTER (WHERE status = 'completed')::int AS completed,
              count(*) FILTER (WHERE status IN ('failed', 'no_answer', 'busy'))::int AS failed,
              count(*) FILTER (WHERE status NOT IN ('completed', 'failed', 'no_answer', 'busy'))::int AS open
         FROM calls WHERE batch_id = $1`,
      [batchId],
    )
  ).rows[0];
  if (counts.completed !== b.completed || counts.failed !== b.failed) problems.push('counters disagree with the calls');
  if (counts.open !== 0) problems.push(`${counts.open} calls not terminal`);
  const dup = (
    await c.query(
      `SELECT count(*)::int AS n FROM (
         SELECT e.call_id, e.detail->>'number' FROM call_events e JOIN calls c ON c.id = e.call_id
          WHERE c.batch_id = $1 AND e.detail->>'event' = 'dial' GROUP BY 1, 2 HAVING count(*) > 1) x`,
      [batchId],
    )
  ).rows[0].n;
  if (dup) problems.push(`${dup} numbers dialled twice`);
  const ends = (
    await c.query(
      `SELECT count(*)::int AS n FROM (
         SELECT e.call_id FROM call_events e JOIN calls c ON c.id = e.call_id
          WHERE c.batch_id = $1 AND e.to_status IN ('completed', 'failed', 'no_answer', 'busy', 'cancelled')
            AND (e.from_status IS NULL OR e.from_status NOT IN ('completed', 'failed', 'no_answer', 'busy', 'cancelled'))
          GROUP BY 1 HAVING count(*) <> 1) x`,
      [batchId],
    )
  ).rows[0].n;
  if (ends) problems.push(`${ends} calls ended more than once`);
  const unanalysed = (
    await c.query(
      `SELECT count(*)::int AS n FROM calls WHERE batch_id = $1 AND status = 'completed' AND transcript_status <> 'ready'`,
      [batchId],
    )
  ).rows[0].n;
  if (unanalysed) problems.push(`${unanalysed} answered calls without a ready transcript`);
  return problems;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function waitFor(cond: () => Promise<boolean>, timeoutMs: number, workers: ChildProcess[]) {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (workers.some((w) => w.exitCode !== null)) throw new Error('a worker process exited while starting');
    if (Date.now() > deadline) throw new Error('workers did not start');
    await sleep(100);
  }
}

function report(r: Result) {
  const { scenario: s } = r;
  const perSecond = s.calls / r.endedSeconds;
  const fullPerSecond = s.calls / r.fullSeconds;
  const lines = [
    `${s.name}`,
    `  ${s.calls} calls, ${s.workers} worker process(es), SIM_CALL_MS=${s.simCallMs}, batch concurrency ${s.concurrency}, recording ${RECORDING ? 'on' : 'off'}`,
    `  all calls ended in ${r.endedSeconds.toFixed(2)} s: ${perSecond.toFixed(0)} calls/s; with every analysis done ${r.fullSeconds.toFixed(2)} s: ${fullPerSecond.toFixed(0)} calls/s`,
  ];
  const steady = s.calls / r.dialToEndSeconds;
  lines.push(`  first dial to last end ${r.dialToEndSeconds.toFixed(2)} s: ${steady.toFixed(0)} calls/s (without the worker noticing the start, up to WORKER_POLL_MS)`);
  if (s.simCallMs > 0) {
    const ideal = s.concurrency / (s.simCallMs / 1000);
    lines.push(
      `  ideal concurrency / call length = ${ideal.toFixed(0)} calls/s -> ${((perSecond / ideal) * 100).toFixed(1)} % of ideal (start to end), ${((steady / ideal) * 100).toFixed(1)} % (first dial to last end)`,
    );
  }
  lines.push(
    `  max in flight: ${r.sampledMaxInFlight} sampled, ${r.historyMaxInFlight} from history; limit ${s.concurrency} -> ${Math.max(r.sampledMaxInFlight, r.historyMaxInFlight) <= s.concurrency ? 'never above' : 'EXCEEDED'}`,
    `  checks: ${r.checks.length ? r.checks.join('; ') : 'every call ended once, no number dialled twice, counters sum to accepted_contacts, every answered call analysed'}`,
  );
  console.log(lines.join('\n'));
}

async function main() {
  console.log(`dispatch benchmark on ${new URL(SERVER).host} (PostgreSQL), ${process.platform} ${process.arch}, node ${process.version}`);
  const scenarios: Scenario[] = [
    { name: '1. zero-latency calls, 1 worker process', calls: CALLS, workers: 1, simCallMs: 0, concurrency: CONCURRENCY },
    { name: '2. zero-latency calls, 4 worker processes', calls: CALLS, workers: 4, simCallMs: 0, concurrency: CONCURRENCY },
    { name: '3. 1-second calls, 1 worker process', calls: SLOW_CALLS, workers: 1, simCallMs: 1000, concurrency: SLOW_CONCURRENCY },
  ].filter((_, i) => ONLY.includes(String(i + 1)));
  for (const s of scenarios) report(await runScenario(s));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
