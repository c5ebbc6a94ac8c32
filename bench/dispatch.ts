// Benchmark (not a test): the dispatch worker on PostgreSQL, through the full call lifecycle (claim,
// dial, ringing/answered/in_progress/ended writes with history and counters, recording, analysis).
//
//   npm run bench:dispatch [-- --calls 20000 --slow-calls 2000 --concurrency 500 --slow-concurrency 200 --recording on
//                             --waiting-calls 1000000 --only 1,2,3,4,5 --plans --frequency-cap 100/86400]
//   BENCH_PG_URL=postgresql://user@host:5432/postgres selects the PostgreSQL server (a throwaway
//   database is created and dropped per scenario). Always PostgreSQL, never PGlite: the header
//   prints the server's version.
//
// Scenarios, each with real `src/worker.ts` processes (started and idle before the clock starts):
//   1. zero-latency simulator, one 20k-call batch, 1 worker process      -> calls/s
//   2. the same with 4 worker processes                                   -> calls/s
//   3. 1-second calls, `slow-concurrency` slots, 1 worker process         -> calls/s vs concurrency / 1 s
// For each: the most calls in flight, sampled live from the batch counter and reconstructed
// exactly from the call history (dial .. end), against the batch's limit; plus correctness checks
// (every call ended once, no number dialled twice, counters sum to accepted_contacts).
//   4. waiting retries: one batch of `waiting-calls` (1,000,000) calls, 90 % queued for a retry that
//      is not due, 10 % due; 1 worker process places the due ones (calls/s, beside scenario 1's),
//      then a tenth of the calls (100,000 waiting ones) come due at once (the first claim after,
//      dials per second after); the claim statement EXPLAINed (`--plans`: whole plans) and the
//      calls indexes' pg_stat counters show the claim reads due rows only. `--only 1,4` runs it
//      beside the plain scenario.
//   5. calling windows: one batch of `waiting-calls` pending calls with a calling window (09:00-20:00
//      in each recipient's zone; two fixed-offset zones picked from the clock), 10 % open, 90 %
//      waiting for their window to open hours later; 1 worker process places the open ones (calls/s,
//      beside scenario 1's); a window opens for 100,000 at one instant (first claim, dials per
//      second); at one commit 100,000 waiting calls' window closes undialled while another 100,000's
//      opens: the worker's sweep turns until all are moved, and the dials meanwhile; then, worker
//      stopped, the sweep's turns alone on 100,000 more. The claim and the sweep's read EXPLAINed
//      (rows of calls read and thrown away: none), pg_stat of the calls indexes, and every dial
//      checked against its call's window. `--only 1,5` runs it beside the plain scenario.
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { WORKER_NODE_FLAGS } from './server-flags.ts';

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
const WAITING_CALLS = Number(arg('waiting-calls', '1000000'));
const ONLY = arg('only', '1,2,3,4,5').split(',');
/**
 * `--frequency-cap 100/86400`: the bench account gets that frequency cap (every number is dialled
 * once, so none is held): what counting and recording each dial costs a capped account.
 */
const FREQUENCY_CAP = (() => {
  const m = /^(\d+)\/(\d+)$/.exec(arg('frequency-cap', ''));
  return m ? { maxCalls: Number(m[1]), periodSeconds: Number(m[2]) } : null;
})();
/**
 * `--profiles us_tcpa` (the default; `none` for none): scenario 5's batch carries these compliance
 * profiles, so every dial is judged with their rules too (dial-permission.ts). Its numbers are
 * toll-free (+1800: no zone of their own, bound by us_tcpa) with the contact zone the bench picked,
 * so the dial-time check judges each call in the zone its window was seeded for.
 */
const PROFILES = arg('profiles', 'us_tcpa') === 'none' ? [] : arg('profiles', 'us_tcpa').split(',');
/** Print the whole plans of the statements EXPLAINed in scenarios 4 and 5. */
const PLANS = process.argv.includes('--plans');

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

type Deps = Awaited<ReturnType<typeof import('../src/bootstrap.ts').createDeps>>;

/** A throwaway database, migrated, with the app's deps and a plain client on it; worker processes are added by startWorkers. */
interface BenchDb {
  dbName: string;
  deps: Deps;
  client: pg.Client;
  workers: ChildProcess[];
}

async function withBenchDb<T>(fn: (b: BenchDb) => Promise<T>): Promise<T> {
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
    return await fn({ dbName, deps, client, workers });
  } finally {
    for (const w of workers) if (w.exitCode === null) w.kill('SIGKILL');
    await client.end().catch(() => undefined);
    await deps.db.close();
    await adminQuery(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  }
}

/** Starts `n` worker processes and waits until each has connected (idle before the clock starts). */
async function startWorkers(b: BenchDb, n: number, simCallMs: number) {
  for (let i = 0; i < n; i++) b.workers.push(startWorker(withDb(SERVER, b.dbName, `bench-w${i}`), simCallMs));
  await waitFor(
    async () => {
      const r = await b.client.query(
        `SELECT count(DISTINCT application_name)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE 'bench-w%'`,
        [b.dbName],
      );
      return r.rows[0].n === n;
    },
    120_000,
    b.workers,
  );
}

async function startBatch(deps: Deps, batchId: string) {
  const { operateBatch } = await import('../src/services/batches/batch-operations.ts');
  const account = await deps.db.prisma.account.findFirstOrThrow();
  await operateBatch(deps, account, batchId, 'start');
}

function runScenario(s: Scenario): Promise<Result> {
  return withBenchDb(async (b) => {
    const { deps, client, workers } = b;
    const batchId = await seed(deps, s);
    await startWorkers(b, s.workers, s.simCallMs);

    const t0 = performance.now();
    await startBatch(deps, batchId);

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
  });
}

interface Catalog {
  accountId: string;
  agentId: string;
  versionId: string;
  didId: string;
}

/** The account, agent, prompt version and number every scenario's batch uses. */
async function seedCatalog(deps: Deps, concurrency: number): Promise<Catalog> {
  const { createAccount } = await import('../src/services/accounts/accounts.ts');
  const { addDidNumber, createAgent, createPromptVersion } = await import('../src/services/accounts/catalog.ts');
  const { account } = await createAccount(deps.db, {
    name: 'Bench',
    email: 'bench@example.com',
    voices: ['alloy'],
    limits: { maxBatchSize: 1_000_000, maxConcurrentCalls: concurrency * 2, maxCallDurationSeconds: 600, rateLimitPerMinute: 100_000 },
    frequencyCap: FREQUENCY_CAP,
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
  return { accountId: account.id, agentId: agent.id, versionId: version.id, didId: did.id };
}

/** A manual batch of `n` calls, paused until the bench starts it; its calls are the caller's to insert. */
async function insertBatchRow(
  tx: { query: (sql: string, params?: unknown[]) => Promise<unknown> },
  cat: Catalog,
  batchId: string,
  n: number,
  concurrency: number,
  now: string,
) {
  await tx.query(
    `INSERT INTO batches (id, account_id, agent_id, prompt_version_id, did_number_id, status, start_mode, scheduled_at,
                          timezone, concurrency, voice, interruption, use_alternate_number, recording_enabled,
                          max_duration_seconds, deduplicate_by_phone, total_contacts, accepted_contacts,
                          rejected_contacts, queued, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, 'paused', 'manual', $6, 'UTC', $7, 'alloy', true, false, $8, 600, false, $9, $9, 0, $9, $6, $6)`,
    [batchId, cat.accountId, cat.agentId, cat.versionId, cat.didId, now, concurrency, RECORDING, n],
  );
}

async function seed(deps: Deps, s: Scenario): Promise<string> {
  const { newId, newIds } = await import('../src/domain/ids.ts');
  const { withSqlTransaction } = await import('../src/db/sql-transaction.ts');
  const cat = await seedCatalog(deps, s.concurrency);
  const batchId = newId('batch');
  const now = new Date().toISOString();
  const n = s.calls;
  await withSqlTransaction(deps.db, async (tx) => {
    await insertBatchRow(tx, cat, batchId, n, s.concurrency, now);
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
      [ids, cat.accountId, batchId, cat.agentId, cat.versionId, now, seqs, phones, metadata],
    );
  });
  return batchId;
}

function startWorker(url: string, simCallMs: number): ChildProcess {
  // BENCH_WORKER_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") profiles the workers.
  const extra = (process.env.BENCH_WORKER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...extra, ...WORKER_NODE_FLAGS, '--import', 'tsx', path.join(ROOT, 'src/worker.ts')], {
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

/** `stillWaiting`: calls the scenario leaves waiting on purpose (not terminal, counted in `queued`). */
async function correctness(c: pg.Client, batchId: string, stillWaiting = 0): Promise<string[]> {
  const problems: string[] = [];
  const b = (await c.query(`SELECT * FROM batches WHERE id = $1`, [batchId])).rows[0];
  if (b.queued + b.in_progress + b.completed + b.failed + b.cancelled !== b.accepted_contacts)
    problems.push('counters do not sum to accepted_contacts');
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
  if (counts.open !== stillWaiting) problems.push(`${counts.open} calls not terminal${stillWaiting ? ` (${stillWaiting} meant to wait)` : ''}`);
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
    await c.query(`SELECT count(*)::int AS n FROM calls WHERE batch_id = $1 AND status = 'completed' AND transcript_status <> 'ready'`, [batchId])
  ).rows[0].n;
  if (unanalysed) problems.push(`${unanalysed} answered calls without a ready transcript`);
  return problems;
}

// ---------------------------------------------------------------------------------------------
// Scenario 4: a batch of waiting retries. Which call is which, by n = seq - 1:
//   n % 10 = 0  due (10 %): never dialled (pending) when (n / 100) % 2 = 0, else queued for a retry
//               that came due a minute ago (attempts 1)
//   n % 10 = 5  waiting (queued, next_attempt_at a day away); the window opens for these (10 %)
//   otherwise   waiting, next_attempt_at a day away and later (80 %)
// The last digit of a due call's number, which picks the simulator's outcome, is (n / 10) % 10, so
// the due calls (and the window's) cycle through every outcome as scenario 1's do.
const WINDOW_RESIDUE = 5;
/** How long after the window opens the dial rate is reported second by second. */
const RATE_WINDOW_S = 10;
/** How far ahead of the UPDATE that moves the window's calls their next_attempt_at lies. */
const WINDOW_LEAD_S = 60;
/** Calls one EXPLAINed claim asks for: the worker's default claim batch. */
const EXPLAIN_CLAIM = 500;
const CALLS_INDEXES = ['calls_requeued_due_idx', 'calls_batch_id_status_seq_idx'];

interface IndexStats {
  seqScans: number;
  seqRowsRead: number;
  indexes: Map<string, { scans: number; read: number; fetched: number }>;
}

interface ClaimPlan {
  ms: number;
  /** Of ms, compiling the statement (0: not compiled). */
  jitMs: number;
  /** Every scan of calls in the plan (both branches of the claim, and the updates' lookups). */
  scans: string[];
  /** Rows of calls the scans read and threw away (filter, recheck): rows the statement did not want. */
  removed: number;
  text: string;
}

interface WaitingResult {
  calls: number;
  due: number;
  concurrency: number;
  insertSeconds: number;
  vacuumSeconds: number;
  dueEndedSeconds: number;
  dueDialToEndSeconds: number;
  sampledMaxInFlight: number;
  historyMaxInFlight: number;
  idleStats: IndexStats;
  nothingDue: ClaimPlan;
  /** The same with the server's JIT setting. */
  nothingDueServerJit: ClaimPlan;
  windowUpdateSeconds: number;
  /** From the UPDATE's commit to the window opening. */
  windowLeadSeconds: number;
  /** Share of the window's first seconds with an autovacuum of calls running. */
  autovacuumShare: number;
  firstClaimMs: number;
  lastWindowDialMs: number;
  dialsPerSecond: number[];
  windowEndedSeconds: number;
  windowOpen: ClaimPlan;
  /** From just after the window's UPDATE to the end. */
  windowStats: IndexStats;
  /** Nothing due again, after VACUUM. */
  vacuumed: ClaimPlan;
  checks: string[];
  load: string;
}

async function indexStats(c: pg.Client, since?: IndexStats, names: readonly string[] = CALLS_INDEXES): Promise<IndexStats> {
  await c.query('SELECT pg_stat_clear_snapshot()');
  const t = (await c.query(`SELECT seq_scan::float AS s, seq_tup_read::float AS r FROM pg_stat_user_tables WHERE relname = 'calls'`)).rows[0];
  const rows = (
    await c.query<{ name: string; scans: number; read: number; fetched: number }>(
      `SELECT indexrelname AS name, idx_scan::float AS scans, idx_tup_read::float AS read, idx_tup_fetch::float AS fetched
         FROM pg_stat_user_indexes WHERE relname = 'calls' AND indexrelname = ANY($1::text[])`,
      [names],
    )
  ).rows;
  const indexes = new Map(
    rows.map((r) => {
      const b = since?.indexes.get(r.name);
      return [r.name, { scans: r.scans - (b?.scans ?? 0), read: r.read - (b?.read ?? 0), fetched: r.fetched - (b?.fetched ?? 0) }];
    }),
  );
  return { seqScans: t.s - (since?.seqScans ?? 0), seqRowsRead: t.r - (since?.seqRowsRead ?? 0), indexes };
}

/**
 * EXPLAIN (ANALYZE, BUFFERS) of the worker's own claim statement, for `n` calls of the batch, as a
 * worker would run it: under the account's claim lock (the worker skips the account meanwhile),
 * JIT off, then rolled back, so nothing is claimed. `serverJit`: with the server's JIT setting
 * instead, as the claim ran before it turned JIT off.
 */
async function explainClaim(c: pg.Client, accountId: string, batchId: string, n: number, serverJit = false, windowed = false): Promise<ClaimPlan> {
  const { CLAIM_JIT_OFF, CLAIM_SQL, claimParams } = await import('../src/dispatch/store/claim-calls.ts');
  const now = new Date();
  const params = claimParams(new Map([[batchId, n]]), {
    accountId,
    workerId: 'bench-explain',
    now,
    leaseExpiresAt: new Date(now.getTime() + 30_000),
    windowed: windowed ? new Set([batchId]) : undefined,
  });
  await c.query('BEGIN');
  try {
    await c.query('SELECT 1 FROM accounts WHERE id = $1 FOR NO KEY UPDATE', [accountId]);
    if (!serverJit) await c.query(CLAIM_JIT_OFF);
    return await explainPlan(c, CLAIM_SQL, params);
  } finally {
    await c.query('ROLLBACK');
  }
}

/** EXPLAIN (ANALYZE, BUFFERS) of a statement inside the caller's transaction, its writes undone. */
async function explainPlan(c: pg.Client, sql: string, params: unknown[]): Promise<ClaimPlan> {
  await c.query('SAVEPOINT explained');
  const json = (await c.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`, params)).rows[0]['QUERY PLAN'][0];
  // The text plan runs the statement again on the same rows: undo the first run's writes before.
  await c.query('ROLLBACK TO SAVEPOINT explained');
  const text = PLANS ? (await c.query(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, params)).rows.map((r) => r['QUERY PLAN']).join('\n') : '';
  await c.query('ROLLBACK TO SAVEPOINT explained');
  const scans: string[] = [];
  let removedRows = 0;
  const walk = (node: Record<string, unknown>) => {
    if (node['Relation Name'] === 'calls' && /Scan/.test(String(node['Node Type']))) {
      const removed = Number(node['Rows Removed by Filter'] ?? 0) + Number(node['Rows Removed by Index Recheck'] ?? 0);
      removedRows += removed * Number(node['Actual Loops'] ?? 1);
      scans.push(
        `${node['Node Type']}${node['Index Name'] ? ` using ${node['Index Name']}` : ''}: ${node['Actual Rows']} rows x ${node['Actual Loops']} loop(s)` +
          `${removed ? `, ${removed} removed by filter` : ''}, buffers hit ${node['Shared Hit Blocks']} read ${node['Shared Read Blocks']}` +
          `${node['Index Cond'] ? `; cond ${node['Index Cond']}` : ''}`,
      );
    }
    for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
  };
  walk(json.Plan);
  return { ms: json['Execution Time'], jitMs: json.JIT?.Timing?.Total ?? 0, scans, removed: removedRows, text };
}

async function seedWaiting(
  { deps, client }: BenchDb,
  n: number,
  concurrency: number,
): Promise<{ batchId: string; accountId: string; insertSeconds: number; vacuumSeconds: number }> {
  const { newId } = await import('../src/domain/ids.ts');
  const { withSqlTransaction } = await import('../src/db/sql-transaction.ts');
  const cat = await seedCatalog(deps, concurrency);
  const batchId = newId('batch');
  // Call ids as the app makes them (prefix + 32 hex digits, increasing): a fresh id's first 20 hex
  // digits, then a 12-digit counter.
  const idStem = newId('call').slice('call_'.length, 'call_'.length + 20);
  const now = new Date().toISOString();
  const t0 = performance.now();
  await withSqlTransaction(deps.db, async (tx) => {
    await insertBatchRow(tx, cat, batchId, n, concurrency, now);
    await tx.query(
      `INSERT INTO calls (id, account_id, batch_id, agent_id, prompt_version_id, seq, external_id, name, phone_number, metadata,
                          status, attempts, dialed_number, "timestamp", next_attempt_at, created_at, updated_at)
       SELECT 'call_' || $6 || lpad(to_hex(g), 12, '0'), $1, $2, $3, $4, g + 1, 'c' || (g + 1), 'Contact ' || (g + 1), x.phone,
              jsonb_build_object('first_name', 'Name' || g, 'tier', CASE WHEN g % 3 = 0 THEN 'gold' ELSE 'silver' END),
              CASE WHEN x.pending THEN 'pending' ELSE 'queued' END,
              CASE WHEN x.pending THEN 0 ELSE 1 END,
              CASE WHEN x.pending THEN NULL ELSE x.phone END,
              CASE WHEN x.pending THEN NULL ELSE $5::timestamptz - interval '1 hour' END,
              CASE WHEN x.pending THEN NULL
                   WHEN g % 10 = 0 THEN $5::timestamptz - interval '1 minute'
                   ELSE $5::timestamptz + interval '1 day' + (g % 3600) * interval '1 second' END,
              $5::timestamptz - interval '2 hours', $5::timestamptz - interval '1 hour'
         FROM generate_series(0, $7::int - 1) AS g
        CROSS JOIN LATERAL (SELECT '+1415' || (2000000 + (g % 10) * 100000 + g / 10)::text AS phone,
                                   g % 10 = 0 AND (g / 100) % 2 = 0 AS pending) x`,
      [cat.accountId, batchId, cat.agentId, cat.versionId, now, idStem, n],
    );
  });
  const t1 = performance.now();
  // Calls that have waited a day for their retry have been vacuumed and analysed by then.
  await client.query('VACUUM (ANALYZE) calls');
  return { batchId, accountId: cat.accountId, insertSeconds: (t1 - t0) / 1000, vacuumSeconds: (performance.now() - t1) / 1000 };
}

async function waitForAnalyses(c: pg.Client, batchId: string, workers: ChildProcess[]) {
  await waitFor(
    async () => {
      const r = await c.query(`SELECT count(*)::int AS n FROM calls WHERE batch_id = $1 AND transcript_status IN ('pending', 'processing')`, [
        batchId,
      ]);
      return r.rows[0].n === 0;
    },
    600_000,
    workers,
  );
}

/** Waits until `target` calls of the batch have ended; returns the most in flight sampled meanwhile. */
async function untilEnded(c: pg.Client, batchId: string, target: number, workers: ChildProcess[]): Promise<number> {
  let sampledMax = 0;
  const deadline = Date.now() + 900_000;
  for (;;) {
    const row = (
      await c.query<{ in_progress: number; ended: number }>(
        `SELECT in_progress, (completed + failed + cancelled)::int AS ended FROM batches WHERE id = $1`,
        [batchId],
      )
    ).rows[0];
    sampledMax = Math.max(sampledMax, row.in_progress);
    if (row.ended >= target) return sampledMax;
    if (workers.some((w) => w.exitCode !== null)) throw new Error('a worker process exited during the run');
    if (Date.now() > deadline) throw new Error(`only ${row.ended} of ${target} calls ended in 15 minutes`);
    await sleep(20);
  }
}

function runWaitingScenario(): Promise<WaitingResult> {
  const n = WAITING_CALLS;
  if (n % 1000 !== 0 || n < 1000 || n > 1_000_000) throw new Error('--waiting-calls: a multiple of 1,000 up to 1,000,000 (7-digit numbers)');
  const due = n / 10;
  return withBenchDb(async (b) => {
    const { deps, client, workers } = b;
    const seeded = await seedWaiting(b, n, CONCURRENCY);
    const { batchId, accountId } = seeded;
    await startWorkers(b, 1, 0);
    const before = await indexStats(client);

    // Phase 1: the due calls, among 90 % waiting ones.
    const t0 = performance.now();
    await startBatch(deps, batchId);
    let sampledMax = await untilEnded(client, batchId, due, workers);
    const dueEndedSeconds = (performance.now() - t0) / 1000;
    await waitForAnalyses(client, batchId, workers);
    // Idle claims (every WORKER_POLL_MS) on a batch with nothing due; the workers flush their
    // statistics at most once a second.
    await sleep(2_500);
    const idleStats = await indexStats(client, before);
    const nothingDue = await explainClaim(client, accountId, batchId, EXPLAIN_CLAIM);
    const nothingDueServerJit = await explainClaim(client, accountId, batchId, EXPLAIN_CLAIM, true);

    // Phase 2: a window opens, 100,000 waiting calls come due at the same instant. One UPDATE moves
    // their next_attempt_at to a moment WINDOW_LEAD_S ahead, so the window opens as it does in
    // service, by the clock reaching it, and what follows measures the claim rather than the bench's
    // bulk write (should the UPDATE outlast the lead, the window opens at its commit). On a
    // connection of its own, closed right after: its statistics (its own scan of calls) are flushed
    // then, and stay out of the second phase's figures.
    const opensAt = new Date(Date.now() + WINDOW_LEAD_S * 1000);
    const u0 = performance.now();
    const opener = new pg.Client({ connectionString: withDb(SERVER, b.dbName) });
    await opener.connect();
    const opened = await opener.query(
      `UPDATE calls SET next_attempt_at = $3::timestamptz WHERE batch_id = $1 AND status = 'queued' AND (seq - 1) % 10 = $2`,
      [batchId, WINDOW_RESIDUE, opensAt.toISOString()],
    );
    const committedAt = Date.now();
    const windowUpdateSeconds = (performance.now() - u0) / 1000;
    await opener.end();
    if (opened.rowCount !== due) throw new Error(`the window opened ${opened.rowCount} calls, not ${due}`);
    const atWindow = await indexStats(client);
    const openedAt = new Date(Math.max(opensAt.getTime(), committedAt));
    await sleep(openedAt.getTime() - Date.now());
    // Whether an autovacuum of calls (the bulk UPDATE's dead rows, or the dialled calls') shares the
    // two cores with the worker during the window's first seconds.
    let samples = 0;
    let vacuuming = 0;
    while (Date.now() < openedAt.getTime() + RATE_WINDOW_S * 1000) {
      const r = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND backend_type = 'autovacuum worker' AND query LIKE '%calls%'`,
      );
      samples++;
      if (r.rows[0].n > 0) vacuuming++;
      await sleep(250);
    }
    const windowOpen = await explainClaim(client, accountId, batchId, EXPLAIN_CLAIM);
    sampledMax = Math.max(sampledMax, await untilEnded(client, batchId, 2 * due, workers));
    await waitForAnalyses(client, batchId, workers);
    await Promise.all(workers.map((w) => stopWorker(w)));
    const windowStats = await indexStats(client, atWindow);
    // The buffers of a claim with nothing due are the dead index entries of calls already dialled
    // (until a vacuum removes them), not the waiting calls: after one, the same claim reads a few pages.
    await client.query('VACUUM calls');
    const vacuumed = await explainClaim(client, accountId, batchId, EXPLAIN_CLAIM);

    const dueSpan = (
      await client.query<{ s: number }>(
        `SELECT EXTRACT(EPOCH FROM max(e.at) - min(e.at))::float AS s FROM call_events e JOIN calls c ON c.id = e.call_id
          WHERE c.batch_id = $1 AND (c.seq - 1) % 10 = 0 AND (e.detail->>'event' IN ('dial', 'ended'))`,
        [batchId],
      )
    ).rows[0].s;
    const dials = (
      await client.query<{ ms: number }>(
        `SELECT EXTRACT(EPOCH FROM e.at - $2::timestamptz)::float * 1000 AS ms FROM call_events e JOIN calls c ON c.id = e.call_id
          WHERE c.batch_id = $1 AND (c.seq - 1) % 10 = $3 AND e.detail->>'event' = 'dial'`,
        [batchId, openedAt.toISOString(), WINDOW_RESIDUE],
      )
    ).rows.map((r) => r.ms);
    // A dial precedes the window only when the UPDATE outlasted the lead (by the moment between its
    // commit and the bench hearing of it): it counts in the first second.
    const dialsPerSecond = new Array<number>(RATE_WINDOW_S).fill(0);
    for (const ms of dials) {
      const i = Math.max(0, Math.floor(ms / 1000));
      if (i < RATE_WINDOW_S) dialsPerSecond[i]++;
    }
    // From the history: the bench is busy sampling for the window's first seconds.
    const windowEndedSeconds = (
      await client.query<{ s: number }>(
        `SELECT EXTRACT(EPOCH FROM max(e.at) - $2::timestamptz)::float AS s FROM call_events e JOIN calls c ON c.id = e.call_id
          WHERE c.batch_id = $1 AND (c.seq - 1) % 10 = $3 AND e.to_status IN ('completed', 'failed', 'no_answer', 'busy')`,
        [batchId, openedAt.toISOString(), WINDOW_RESIDUE],
      )
    ).rows[0].s;
    const checks = await correctness(client, batchId, n - 2 * due);
    const wrong = (
      await client.query(
        `SELECT count(*) FILTER (WHERE status NOT IN ('pending', 'queued') AND (seq - 1) % 10 NOT IN (0, $2))::int AS waiting_dialled,
                count(*) FILTER (WHERE status IN ('pending', 'queued') AND (seq - 1) % 10 IN (0, $2))::int AS due_left
           FROM calls WHERE batch_id = $1`,
        [batchId, WINDOW_RESIDUE],
      )
    ).rows[0];
    if (wrong.waiting_dialled) checks.push(`${wrong.waiting_dialled} calls dialled before their retry was due`);
    if (wrong.due_left) checks.push(`${wrong.due_left} due calls never dialled`);
    return {
      calls: n,
      due,
      concurrency: CONCURRENCY,
      insertSeconds: seeded.insertSeconds,
      vacuumSeconds: seeded.vacuumSeconds,
      dueEndedSeconds,
      dueDialToEndSeconds: dueSpan,
      sampledMaxInFlight: sampledMax,
      historyMaxInFlight: await historyMaxInFlight(client, batchId),
      idleStats,
      nothingDue,
      nothingDueServerJit,
      windowUpdateSeconds,
      windowLeadSeconds: (openedAt.getTime() - committedAt) / 1000,
      autovacuumShare: vacuuming / Math.max(1, samples),
      firstClaimMs: dials.reduce((m, x) => Math.min(m, x), Infinity),
      lastWindowDialMs: dials.reduce((m, x) => Math.max(m, x), 0),
      dialsPerSecond,
      windowEndedSeconds,
      windowOpen,
      windowStats,
      vacuumed,
      checks,
      load: loadAverage(),
    };
  });
}

const fmt = (x: number) => Math.round(x).toLocaleString('en-US');
const verdict = (ok: boolean) => (ok ? 'ok' : 'BELOW THE BOUND');

function loadAverage(): string {
  return `load average ${os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(', ')} (${os.cpus().length} cores)`;
}

/** Placement bound of scenarios 1 and 4 (docs/development.md, Benchmarks). */
const MIN_CALLS_PER_SECOND = 1_000;
/**
 * A window opening must not stall the claim: the worker polls every WORKER_POLL_MS (200 ms here)
 * and a claim reading only due rows takes milliseconds, so its first claim comes within one poll
 * plus one statement. 1 s leaves room for a loaded 2-core machine; a claim walking the waiting rows
 * (or sorting them) would take seconds per statement.
 */
const MAX_FIRST_CLAIM_MS = 1_000;

function reportWaiting(r: WaitingResult, plain: Result | undefined) {
  const perSecond = r.due / r.dueEndedSeconds;
  const steady = r.due / r.dueDialToEndSeconds;
  const plainFigure = plain
    ? `scenario 1 in this run: ${fmt(plain.scenario.calls / plain.endedSeconds)} calls/s (${fmt(plain.scenario.calls / plain.dialToEndSeconds)} first dial to last end)`
    : 'scenario 1 not run (--only 1,4 runs both)';
  const stats = (s: IndexStats) =>
    CALLS_INDEXES.map((name) => {
      const i = s.indexes.get(name) ?? { scans: 0, read: 0, fetched: 0 };
      return `    ${name}: ${fmt(i.scans)} scans read ${fmt(i.read)} entries (${(i.read / Math.max(1, i.scans)).toFixed(1)} per scan), fetched ${fmt(i.fetched)} rows`;
    }).concat(`    sequential scans of calls: ${fmt(s.seqScans)} (${fmt(s.seqRowsRead)} rows)`);
  const plan = (title: string, p: ClaimPlan) => [
    `  ${title}: EXPLAIN (ANALYZE, BUFFERS) of the claim statement for ${EXPLAIN_CLAIM} calls, ${p.ms.toFixed(2)} ms (JIT ${p.jitMs ? `${p.jitMs.toFixed(2)} ms of it` : 'off or not used'}); its scans of calls:`,
    ...p.scans.map((x) => `    ${x}`),
    ...(PLANS ? p.text.split('\n').map((x) => `      | ${x}`) : []),
  ];
  // Over the window's seconds, or fewer when its calls ran out sooner (small --waiting-calls).
  const avg = r.dialsPerSecond.reduce((a, b) => a + b, 0) / Math.min(RATE_WINDOW_S, Math.max(1, r.lastWindowDialMs / 1000));
  const waiting = r.calls - r.due;
  const lines = [
    `4. waiting retries: ${fmt(r.calls)} calls in one batch, ${fmt(waiting)} queued for a retry not due (next_attempt_at a day away), ${fmt(r.due)} due (${fmt(r.due / 2)} pending, ${fmt(r.due / 2)} queued for a retry due); 1 worker process, SIM_CALL_MS=0, batch concurrency ${r.concurrency}, recording ${RECORDING ? 'on' : 'off'}`,
    `  set-up: ${fmt(r.calls)} calls inserted in ${r.insertSeconds.toFixed(1)} s (one INSERT ... generate_series), VACUUM (ANALYZE) calls ${r.vacuumSeconds.toFixed(1)} s`,
    `  due calls all ended in ${r.dueEndedSeconds.toFixed(2)} s: ${fmt(perSecond)} calls/s (bound >= ${fmt(MIN_CALLS_PER_SECOND)}: ${verdict(perSecond >= MIN_CALLS_PER_SECOND)}); first dial to last end ${r.dueDialToEndSeconds.toFixed(2)} s: ${fmt(steady)} calls/s`,
    `    beside ${plainFigure}`,
    ...plan(`nothing due (${fmt(waiting)} waiting)`, r.nothingDue),
    `    the same with the server's JIT setting (the claim sets jit off: its estimate passes jit_above_cost): ${r.nothingDueServerJit.ms.toFixed(2)} ms, JIT ${r.nothingDueServerJit.jitMs.toFixed(2)} ms of it`,
    `  pg_stat of the two indexes (every statement using them, the claim and others), from the start to 2.5 s of idle claims after the due calls (reading the waiting calls would be ${fmt(waiting)} entries per scan):`,
    ...stats(r.idleStats),
    `  window opens: ${fmt(r.due)} waiting calls come due at one instant (their next_attempt_at moved there by an UPDATE that took ${r.windowUpdateSeconds.toFixed(2)} s and committed ${r.windowLeadSeconds.toFixed(1)} s before it); autovacuum of calls running during ${(r.autovacuumShare * 100).toFixed(0)} % of the next ${RATE_WINDOW_S} s`,
    `    first claim ${r.firstClaimMs.toFixed(0)} ms after the window opened (bound < ${fmt(MAX_FIRST_CLAIM_MS)} ms: ${verdict(r.firstClaimMs < MAX_FIRST_CLAIM_MS)})`,
    `    dials per second over the next ${RATE_WINDOW_S} s: ${r.dialsPerSecond.map(fmt).join(', ')}; mean ${fmt(avg)} calls/s (bound >= ${fmt(MIN_CALLS_PER_SECOND)}: ${verdict(avg >= MIN_CALLS_PER_SECOND)})`,
    `    all ${fmt(r.due)} ended ${r.windowEndedSeconds.toFixed(2)} s after the window opened: ${fmt(r.due / r.windowEndedSeconds)} calls/s`,
    ...plan(`window open, ${RATE_WINDOW_S} s later`, r.windowOpen),
    `  pg_stat, from the UPDATE's commit (idle claims until the window opens) to the last of the window's calls analysed:`,
    ...stats(r.windowStats),
    ...plan(`nothing due again (${fmt(r.calls - 2 * r.due)} waiting), after VACUUM calls`, r.vacuumed),
    `  max in flight: ${r.sampledMaxInFlight} sampled, ${r.historyMaxInFlight} from history; limit ${r.concurrency} -> ${Math.max(r.sampledMaxInFlight, r.historyMaxInFlight) <= r.concurrency ? 'never above' : 'EXCEEDED'}`,
    `  checks: ${r.checks.length ? r.checks.join('; ') : `every due call placed and no waiting one, every call ended once, no number dialled twice, counters sum to accepted_contacts, every answered call analysed`}`,
    `  ${r.load} at the end`,
  ];
  console.log(lines.join('\n'));
}

// ---------------------------------------------------------------------------------------------
// Scenario 5: calling windows. One batch whose calling_window is 09:00-20:00 every day in each
// recipient's zone; every call pending and judged in one of two fixed-offset zones (Etc/GMT±h, no
// DST) picked from the clock at seeding: the open zone, where the window is open and closes 3 h or
// more later, and the waiting zone, where it opens 2-3 h later. Each row as the create writes it:
// timezone, next_attempt_at (the opening; NULL when open), window_closes_at (its close). By
// r = (seq - 1) % 10:
//   r = 0  open (10 %)
//   r = 5  waiting; their window opens at one instant (phase 2)
//   r = 3  waiting; their window opens as r = 7's closes (phase 3)
//   r = 7  waiting; their window closes undialled (phase 3): the worker's sweep moves them
//   r = 9  waiting; closed once the worker has stopped, moved by the bench's own sweep turns (phase 4)
//   other  waiting throughout (50 %)
const WINDOW_JSON = { start: '09:00', end: '20:00', days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], timezone: 'recipient' };
const WINDOW_LENGTH_MS = 11 * 3_600_000;
const R_OPEN = 0;
const R_OPENS = 5;
const R_OPENS_AT_SWEEP = 3;
const R_CLOSES = 7;
const R_SWEPT = 9;
const WINDOW_INDEXES = [
  'calls_window_open_idx',
  'calls_batch_id_status_window_closes_at_seq_idx',
  'calls_batch_id_status_seq_idx',
  'calls_requeued_due_idx',
];

interface ZoneWindow {
  zone: string;
  opensAt: Date;
  closesAt: Date;
}

/** The open and the waiting zone at `now`, each with its window as the domain computes it. */
async function pickZones(now: Date): Promise<{ open: ZoneWindow; waiting: ZoneWindow }> {
  const { nextOpening, normalizeWindow } = await import('../src/domain/calling-window.ts');
  const window = normalizeWindow(WINDOW_JSON);
  const hours = (d: Date) => (d.getTime() - now.getTime()) / 3_600_000;
  const all: ZoneWindow[] = [];
  for (let h = -12; h <= 14; h++) {
    // POSIX signs: Etc/GMT-5 is UTC+5.
    const zone = h === 0 ? 'Etc/GMT' : `Etc/GMT${h > 0 ? '-' : '+'}${Math.abs(h)}`;
    const o = nextOpening([window], [zone], now);
    if (o) all.push({ zone, ...o });
  }
  const open = all.find((z) => z.opensAt.getTime() === now.getTime() && hours(z.closesAt) >= 3);
  const waiting = all.find((z) => hours(z.opensAt) >= 2 && hours(z.opensAt) < 3);
  if (!open || !waiting) throw new Error('no fixed-offset zone fits the calling window now');
  return { open, waiting };
}

async function seedWindows({ deps, client }: BenchDb, n: number, concurrency: number) {
  const { newId } = await import('../src/domain/ids.ts');
  const { normalizeWindow } = await import('../src/domain/calling-window.ts');
  const { withSqlTransaction } = await import('../src/db/sql-transaction.ts');
  const cat = await seedCatalog(deps, concurrency);
  const batchId = newId('batch');
  const idStem = newId('call').slice('call_'.length, 'call_'.length + 20);
  const seededAt = new Date();
  const now = seededAt.toISOString();
  const zones = await pickZones(seededAt);
  const t0 = performance.now();
  await withSqlTransaction(deps.db, async (tx) => {
    await insertBatchRow(tx, cat, batchId, n, concurrency, now);
    await tx.query(`UPDATE batches SET calling_window = $2::jsonb, compliance_profiles = $3::text[] WHERE id = $1`, [
      batchId,
      JSON.stringify(normalizeWindow(WINDOW_JSON)),
      PROFILES,
    ]);
    // The contact's zone is the seeded one: the dial-time check judges the call in it (a toll-free
    // number has no zone of its own), as the claim did by its stored slot.
    await tx.query(
      `INSERT INTO calls (id, account_id, batch_id, agent_id, prompt_version_id, seq, external_id, name, phone_number, metadata,
                          status, timezone, next_attempt_at, window_closes_at, created_at, updated_at, contact_timezone)
       SELECT 'call_' || $6 || lpad(to_hex(g), 12, '0'), $1, $2, $3, $4, g + 1, 'c' || (g + 1), 'Contact ' || (g + 1),
              '+1800' || (2000000 + (g % 10) * 100000 + g / 10)::text,
              jsonb_build_object('first_name', 'Name' || g, 'tier', CASE WHEN g % 3 = 0 THEN 'gold' ELSE 'silver' END),
              'pending',
              CASE WHEN g % 10 = $8 THEN $9 ELSE $10 END,
              CASE WHEN g % 10 = $8 THEN NULL ELSE $11::timestamptz END,
              CASE WHEN g % 10 = $8 THEN $12::timestamptz ELSE $13::timestamptz END,
              $5::timestamptz, $5::timestamptz,
              CASE WHEN g % 10 = $8 THEN $9 ELSE $10 END
         FROM generate_series(0, $7::int - 1) AS g`,
      [
        cat.accountId,
        batchId,
        cat.agentId,
        cat.versionId,
        now,
        idStem,
        n,
        R_OPEN,
        zones.open.zone,
        zones.waiting.zone,
        zones.waiting.opensAt.toISOString(),
        zones.open.closesAt.toISOString(),
        zones.waiting.closesAt.toISOString(),
      ],
    );
  });
  const t1 = performance.now();
  await client.query('VACUUM (ANALYZE) calls');
  return { batchId, accountId: cat.accountId, seededAt, zones, insertSeconds: (t1 - t0) / 1000, vacuumSeconds: (performance.now() - t1) / 1000 };
}

/**
 * On a connection of its own (closed at once, so its statistics stay out of the worker's figures):
 * the calls of residue `opens` get a window opening at `opensAt` (closing a window's length later, as
 * their zone's window would), and those of `closes`, if given, a window that opened a window's length
 * before `closesAt` and closed then, undialled. One transaction; returns when it committed, with
 * when its COMMIT was sent (the rows change between the two).
 */
async function moveWindows(
  dbName: string,
  batchId: string,
  change: { opens?: number; opensAt: Date; openZone?: string; closes?: number; closesAt?: Date },
) {
  const c = new pg.Client({ connectionString: withDb(SERVER, dbName) });
  await c.connect();
  try {
    const t0 = performance.now();
    await c.query('BEGIN');
    let opened = 0;
    let closed = 0;
    if (change.opens !== undefined) {
      opened = (
        await c.query(
          // Into a zone whose window is open (for hours): the dial-time check then agrees with the slot.
          `UPDATE calls SET next_attempt_at = $3::timestamptz, window_closes_at = $4::timestamptz,
                            timezone = COALESCE($5, timezone), contact_timezone = COALESCE($5, contact_timezone)
            WHERE batch_id = $1 AND status = 'pending' AND (seq - 1) % 10 = $2`,
          [
            batchId,
            change.opens,
            change.opensAt.toISOString(),
            new Date(change.opensAt.getTime() + WINDOW_LENGTH_MS).toISOString(),
            change.openZone ?? null,
          ],
        )
      ).rowCount!;
    }
    if (change.closes !== undefined) {
      closed = (
        await c.query(
          `UPDATE calls SET next_attempt_at = $3::timestamptz, window_closes_at = $4::timestamptz
            WHERE batch_id = $1 AND status = 'pending' AND (seq - 1) % 10 = $2`,
          [batchId, change.closes, new Date(change.closesAt!.getTime() - WINDOW_LENGTH_MS).toISOString(), change.closesAt!.toISOString()],
        )
      ).rowCount!;
    }
    const sentAt = Date.now();
    await c.query('COMMIT');
    return { opened, closed, sentAt, committedAt: Date.now(), seconds: (performance.now() - t0) / 1000 };
  } finally {
    await c.end();
  }
}

/** The dials of residue `r`, in ms after `from`. */
async function dialTimes(c: pg.Client, batchId: string, r: number, from: number): Promise<number[]> {
  const rows = await c.query<{ ms: number }>(
    `SELECT EXTRACT(EPOCH FROM e.at - $2::timestamptz)::float * 1000 AS ms FROM call_events e JOIN calls c ON c.id = e.call_id
      WHERE c.batch_id = $1 AND (c.seq - 1) % 10 = $3 AND e.detail->>'event' = 'dial'`,
    [batchId, new Date(from).toISOString(), r],
  );
  return rows.rows.map((x) => x.ms);
}

/** Dials per second over the first RATE_WINDOW_S seconds (a dial before `from` counts in the first). */
function perSecond(ms: number[]): number[] {
  const out = new Array<number>(RATE_WINDOW_S).fill(0);
  for (const x of ms) {
    const i = Math.max(0, Math.floor(x / 1000));
    if (i < RATE_WINDOW_S) out[i]++;
  }
  return out;
}

/** Seconds from `from` to the last end of residue `r`'s calls, per the history. */
async function lastEnd(c: pg.Client, batchId: string, r: number, from: number): Promise<number> {
  return (
    await c.query<{ s: number }>(
      `SELECT EXTRACT(EPOCH FROM max(e.at) - $2::timestamptz)::float AS s FROM call_events e JOIN calls c ON c.id = e.call_id
        WHERE c.batch_id = $1 AND (c.seq - 1) % 10 = $3 AND e.to_status IN ('completed', 'failed', 'no_answer', 'busy')`,
      [batchId, new Date(from).toISOString(), r],
    )
  ).rows[0].s;
}

/** Samples, until `until`, whether an autovacuum of calls is running; the share of samples that saw one. */
async function autovacuumShare(c: pg.Client, until: number): Promise<number> {
  let samples = 0;
  let vacuuming = 0;
  while (Date.now() < until) {
    const r = await c.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND backend_type = 'autovacuum worker' AND query LIKE '%calls%'`,
    );
    samples++;
    if (r.rows[0].n > 0) vacuuming++;
    await sleep(250);
  }
  return vacuuming / Math.max(1, samples);
}

interface SweepTurn {
  ms: number;
  moved: number;
}

interface WindowOpening {
  updateSeconds: number;
  commitMs: number;
  leadSeconds: number;
  autovacuumShare: number;
  firstClaimMs: number;
  lastDialMs: number;
  dialsPerSecond: number[];
  endedSeconds: number;
}

interface WindowsResult {
  calls: number;
  open: number;
  concurrency: number;
  zones: { open: ZoneWindow; waiting: ZoneWindow };
  seededAt: Date;
  insertSeconds: number;
  vacuumSeconds: number;
  openEndedSeconds: number;
  openDialToEndSeconds: number;
  idleStats: IndexStats;
  nothingOpen: ClaimPlan;
  opening: WindowOpening;
  windowOpen: ClaimPlan;
  windowStats: IndexStats;
  /** Phase 3: the worker's sweep of 100,000 closed windows while 100,000 others open. */
  sweepOpening: WindowOpening;
  /** The worker's turns that moved the closed calls, in ms after the commit (each turn's clock), with how many. */
  workerTurns: SweepTurn[];
  /** Dials of the calls opened in phase 3 between the commit and the worker's last sweep turn. */
  dialsDuringSweep: number;
  /** Phase 4: the bench's own turns, worker stopped. */
  closedClaim: ClaimPlan;
  sweepPlan: ClaimPlan;
  benchTurns: SweepTurn[];
  sweepPlanAfter: ClaimPlan;
  vacuumed: ClaimPlan;
  sampledMaxInFlight: number;
  historyMaxInFlight: number;
  checks: string[];
  load: string;
}

async function explainSweep(c: pg.Client, batchId: string): Promise<ClaimPlan> {
  const { CALLS_PER_BATCH_PER_TURN, CLOSED_WINDOW_CALLS_SQL } = await import('../src/dispatch/store/move-closed-windows.ts');
  await c.query('BEGIN');
  try {
    return await explainPlan(c, CLOSED_WINDOW_CALLS_SQL, [batchId, new Date().toISOString(), CALLS_PER_BATCH_PER_TURN]);
  } finally {
    await c.query('ROLLBACK');
  }
}

function runWindowScenario(): Promise<WindowsResult> {
  const n = WAITING_CALLS;
  if (n % 1000 !== 0 || n < 1000 || n > 1_000_000) throw new Error('--waiting-calls: a multiple of 1,000 up to 1,000,000 (7-digit numbers)');
  const tenth = n / 10;
  return withBenchDb(async (b) => {
    const { deps, client, workers } = b;
    const seeded = await seedWindows(b, n, CONCURRENCY);
    const { batchId, accountId } = seeded;
    await startWorkers(b, 1, 0);
    const before = await indexStats(client, undefined, WINDOW_INDEXES);

    // Phase 1: the open calls, among 90 % waiting for a window.
    const t0 = performance.now();
    await startBatch(deps, batchId);
    let sampledMax = await untilEnded(client, batchId, tenth, workers);
    const openEndedSeconds = (performance.now() - t0) / 1000;
    await waitForAnalyses(client, batchId, workers);
    // Idle claims on a batch with no window open (statistics flushed at most once a second).
    await sleep(2_500);
    const idleStats = await indexStats(client, before, WINDOW_INDEXES);
    const nothingOpen = await explainClaim(client, accountId, batchId, EXPLAIN_CLAIM, false, true);

    // Phase 2: a window opens for 100,000 waiting calls at one instant, WINDOW_LEAD_S after the
    // UPDATE that moves their opening there (the clock opens it, as in scenario 4).
    const opensAt = Date.now() + WINDOW_LEAD_S * 1000;
    const atWindow = await indexStats(client, undefined, WINDOW_INDEXES);
    const u2 = await moveWindows(b.dbName, batchId, { opens: R_OPENS, opensAt: new Date(opensAt), openZone: seeded.zones.open.zone });
    if (u2.opened !== tenth) throw new Error(`the window opened for ${u2.opened} calls, not ${tenth}`);
    const openedAt = Math.max(opensAt, u2.committedAt);
    await sleep(openedAt - Date.now());
    const vacuum2 = await autovacuumShare(client, openedAt + RATE_WINDOW_S * 1000);
    const windowOpen = await explainClaim(client, accountId, batchId, EXPLAIN_CLAIM, false, true);
    sampledMax = Math.max(sampledMax, await untilEnded(client, batchId, 2 * tenth, workers));
    await waitForAnalyses(client, batchId, workers);
    const windowStats = await indexStats(client, atWindow, WINDOW_INDEXES);
    const dials2 = await dialTimes(client, batchId, R_OPENS, openedAt);

    // Phase 3: at one commit, 100,000 waiting calls find their window closed (it opened and closed
    // without them: the worker's sweep moves them to their next opening, 5,000 a turn) and 100,000
    // others find theirs open, so the claim has calls to place while the sweep works.
    const instant = new Date();
    const u3 = await moveWindows(b.dbName, batchId, {
      opens: R_OPENS_AT_SWEEP,
      opensAt: instant,
      openZone: seeded.zones.open.zone,
      closes: R_CLOSES,
      closesAt: instant,
    });
    if (u3.opened !== tenth || u3.closed !== tenth) throw new Error(`phase 3 opened ${u3.opened} and closed ${u3.closed} windows, not ${tenth}`);
    // Delays count from the COMMIT's sending: upper bounds.
    const committed3 = u3.sentAt;
    const vacuum3 = await autovacuumShare(client, committed3 + RATE_WINDOW_S * 1000);
    sampledMax = Math.max(sampledMax, await untilEnded(client, batchId, 3 * tenth, workers));
    await waitForAnalyses(client, batchId, workers);
    await waitFor(
      async () => {
        const r = await client.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM calls WHERE batch_id = $1 AND status = 'pending' AND window_closes_at <= $2::timestamptz`,
          [batchId, instant.toISOString()],
        );
        return r.rows[0].n === 0;
      },
      600_000,
      workers,
    );
    await Promise.all(workers.map((w) => stopWorker(w)));
    // Each turn's UPDATE stamps its moved calls with the turn's clock.
    const workerTurns = (
      await client.query<{ ms: number; moved: number }>(
        `SELECT EXTRACT(EPOCH FROM updated_at - $3::timestamptz)::float * 1000 AS ms, count(*)::int AS moved FROM calls
          WHERE batch_id = $1 AND (seq - 1) % 10 = $2 GROUP BY updated_at ORDER BY updated_at`,
        [batchId, R_CLOSES, new Date(committed3).toISOString()],
      )
    ).rows;
    const dials3 = await dialTimes(client, batchId, R_OPENS_AT_SWEEP, committed3);
    const sweepEndMs = workerTurns.length ? workerTurns[workerTurns.length - 1].ms : 0;

    // Phase 4, worker stopped: 100,000 more windows close; the bench runs the sweep's turns itself.
    const u4 = await moveWindows(b.dbName, batchId, { opensAt: new Date(), closes: R_SWEPT, closesAt: new Date() });
    if (u4.closed !== tenth) throw new Error(`phase 4 closed ${u4.closed} windows, not ${tenth}`);
    const closedClaim = await explainClaim(client, accountId, batchId, EXPLAIN_CLAIM, false, true);
    const sweepPlan = await explainSweep(client, batchId);
    const { moveClosedWindows } = await import('../src/dispatch/store/move-closed-windows.ts');
    const benchTurns: SweepTurn[] = [];
    for (;;) {
      const s0 = performance.now();
      const r = await moveClosedWindows(deps, new Date());
      benchTurns.push({ ms: performance.now() - s0, moved: r.moved });
      if (r.moved + r.cancelled === 0 || benchTurns.length > 1000) break;
    }
    const sweepPlanAfter = await explainSweep(client, batchId);
    await client.query('VACUUM calls');
    const vacuumed = await explainClaim(client, accountId, batchId, EXPLAIN_CLAIM, false, true);

    const openSpan = (
      await client.query<{ s: number }>(
        `SELECT EXTRACT(EPOCH FROM max(e.at) - min(e.at))::float AS s FROM call_events e JOIN calls c ON c.id = e.call_id
          WHERE c.batch_id = $1 AND (c.seq - 1) % 10 = $2 AND (e.detail->>'event' IN ('dial', 'ended'))`,
        [batchId, R_OPEN],
      )
    ).rows[0].s;
    const checks = await correctness(client, batchId, n - 3 * tenth);
    checks.push(...(await windowChecks(client, batchId, seeded, new Date(openedAt), instant)));
    const opening = (
      u: { seconds: number; sentAt: number; committedAt: number },
      at: number,
      share: number,
      dials: number[],
      ended: number,
    ): WindowOpening => ({
      updateSeconds: u.seconds,
      commitMs: u.committedAt - u.sentAt,
      leadSeconds: (at - u.committedAt) / 1000,
      autovacuumShare: share,
      firstClaimMs: dials.reduce((m, x) => Math.min(m, x), Infinity),
      lastDialMs: dials.reduce((m, x) => Math.max(m, x), 0),
      dialsPerSecond: perSecond(dials),
      endedSeconds: ended,
    });
    return {
      calls: n,
      open: tenth,
      concurrency: CONCURRENCY,
      zones: seeded.zones,
      seededAt: seeded.seededAt,
      insertSeconds: seeded.insertSeconds,
      vacuumSeconds: seeded.vacuumSeconds,
      openEndedSeconds,
      openDialToEndSeconds: openSpan,
      idleStats,
      nothingOpen,
      opening: opening(u2, openedAt, vacuum2, dials2, await lastEnd(client, batchId, R_OPENS, openedAt)),
      windowOpen,
      windowStats,
      sweepOpening: opening(u3, committed3, vacuum3, dials3, await lastEnd(client, batchId, R_OPENS_AT_SWEEP, committed3)),
      workerTurns,
      dialsDuringSweep: dials3.filter((x) => x <= sweepEndMs).length,
      closedClaim,
      sweepPlan,
      benchTurns,
      sweepPlanAfter,
      vacuumed,
      sampledMaxInFlight: sampledMax,
      historyMaxInFlight: await historyMaxInFlight(client, batchId),
      checks,
      load: loadAverage(),
    };
  });
}

/**
 * Every dial within its call's window (at or after its opening, before its close); every open call
 * dialled, no waiting one; every closed window moved to the waiting zone's next opening.
 */
async function windowChecks(
  c: pg.Client,
  batchId: string,
  seeded: { seededAt: Date; zones: { waiting: ZoneWindow } },
  opened2: Date,
  opened3: Date,
): Promise<string[]> {
  const r = (
    await c.query(
      `WITH d AS (
         SELECT (c.seq - 1) % 10 AS r, e.at, c.window_closes_at FROM call_events e JOIN calls c ON c.id = e.call_id
          WHERE c.batch_id = $1 AND e.detail->>'event' = 'dial')
       SELECT count(*) FILTER (WHERE r NOT IN ($2, $3, $4))::int AS waiting_dialled,
              count(*) FILTER (WHERE at < CASE r WHEN $2 THEN $5::timestamptz WHEN $3 THEN $6::timestamptz WHEN $4 THEN $7::timestamptz END)::int AS early,
              count(*) FILTER (WHERE at >= window_closes_at)::int AS late
         FROM d`,
      [batchId, R_OPEN, R_OPENS, R_OPENS_AT_SWEEP, seeded.seededAt.toISOString(), opened2.toISOString(), opened3.toISOString()],
    )
  ).rows[0];
  const s = (
    await c.query(
      `SELECT count(*) FILTER (WHERE status = 'pending' AND (seq - 1) % 10 IN ($2, $3, $4))::int AS open_left,
              count(*) FILTER (WHERE (seq - 1) % 10 IN ($5, $6)
                                 AND (status <> 'pending' OR next_attempt_at IS DISTINCT FROM $7::timestamptz
                                      OR window_closes_at IS DISTINCT FROM $8::timestamptz))::int AS not_moved
         FROM calls WHERE batch_id = $1`,
      [
        batchId,
        R_OPEN,
        R_OPENS,
        R_OPENS_AT_SWEEP,
        R_CLOSES,
        R_SWEPT,
        seeded.zones.waiting.opensAt.toISOString(),
        seeded.zones.waiting.closesAt.toISOString(),
      ],
    )
  ).rows[0];
  const problems: string[] = [];
  if (r.waiting_dialled) problems.push(`${r.waiting_dialled} calls dialled while waiting for their window`);
  if (r.early) problems.push(`${r.early} dials before their window opened`);
  if (r.late) problems.push(`${r.late} dials after their window closed`);
  if (s.open_left) problems.push(`${s.open_left} calls with an open window never dialled`);
  if (s.not_moved) problems.push(`${s.not_moved} calls whose window closed not moved to their next opening`);
  return problems;
}

function reportWindows(r: WindowsResult, plain: Result | undefined) {
  const perSec = r.open / r.openEndedSeconds;
  const steady = r.open / r.openDialToEndSeconds;
  const waiting = r.calls - r.open;
  const plainFigure = plain
    ? `scenario 1 in this run: ${fmt(plain.scenario.calls / plain.endedSeconds)} calls/s (${fmt(plain.scenario.calls / plain.dialToEndSeconds)} first dial to last end)`
    : 'scenario 1 not run (--only 1,5 runs both)';
  const stats = (s: IndexStats) =>
    WINDOW_INDEXES.map((name) => {
      const i = s.indexes.get(name) ?? { scans: 0, read: 0, fetched: 0 };
      return `    ${name}: ${fmt(i.scans)} scans read ${fmt(i.read)} entries (${(i.read / Math.max(1, i.scans)).toFixed(1)} per scan), fetched ${fmt(i.fetched)} rows`;
    }).concat(`    sequential scans of calls: ${fmt(s.seqScans)} (${fmt(s.seqRowsRead)} rows)`);
  const plan = (title: string, p: ClaimPlan, wantNone: boolean) => [
    `  ${title}: ${p.ms.toFixed(2)} ms; rows of calls read and thrown away: ${fmt(p.removed)}${wantNone ? ` (bound 0: ${p.removed === 0 ? 'ok' : 'READS ROWS IT DOES NOT TAKE'})` : ''}; its scans of calls:`,
    ...p.scans.map((x) => `    ${x}`),
    ...(PLANS ? p.text.split('\n').map((x) => `      | ${x}`) : []),
  ];
  // `bounded`: the first claim held to MAX_FIRST_CLAIM_MS (the window opening by the clock).
  const opening = (o: WindowOpening, what: string, bounded: boolean) => {
    const avg = o.dialsPerSecond.reduce((a, b) => a + b, 0) / Math.min(RATE_WINDOW_S, Math.max(1, o.lastDialMs / 1000));
    return [
      `    ${what}; autovacuum of calls running during ${(o.autovacuumShare * 100).toFixed(0)} % of the next ${RATE_WINDOW_S} s`,
      `    first claim ${o.firstClaimMs.toFixed(0)} ms after${bounded ? ` (bound < ${fmt(MAX_FIRST_CLAIM_MS)} ms: ${verdict(o.firstClaimMs < MAX_FIRST_CLAIM_MS)})` : ''}`,
      `    dials per second over the next ${RATE_WINDOW_S} s: ${o.dialsPerSecond.map(fmt).join(', ')}; mean ${fmt(avg)} calls/s (bound >= ${fmt(MIN_CALLS_PER_SECOND)}: ${verdict(avg >= MIN_CALLS_PER_SECOND)})`,
      `    all ${fmt(r.open)} ended ${o.endedSeconds.toFixed(2)} s after: ${fmt(r.open / o.endedSeconds)} calls/s`,
    ];
  };
  const wt = r.workerTurns;
  const sweepEndS = wt.length ? wt[wt.length - 1].ms / 1000 : 0;
  const gaps = wt.slice(1).map((t, i) => t.ms - wt[i].ms);
  const duringSweep = r.dialsDuringSweep / Math.max(0.001, sweepEndS);
  const bt = r.benchTurns.filter((t) => t.moved > 0);
  const benchMs = bt.reduce((a, t) => a + t.ms, 0);
  const benchMoved = bt.reduce((a, t) => a + t.moved, 0);
  const z = r.zones;
  const hoursAfter = (d: Date) => ((d.getTime() - r.seededAt.getTime()) / 3_600_000).toFixed(1);
  const lines = [
    `5. calling windows: ${fmt(r.calls)} pending calls in one batch with calling_window ${WINDOW_JSON.start}-${WINDOW_JSON.end} every day, recipient's zone; ${fmt(r.open)} open (${z.open.zone}, closing ${hoursAfter(z.open.closesAt)} h after seeding), ${fmt(waiting)} waiting for it to open (${z.waiting.zone}, next_attempt_at ${hoursAfter(z.waiting.opensAt)} h after seeding); 1 worker process, SIM_CALL_MS=0, batch concurrency ${r.concurrency}, recording ${RECORDING ? 'on' : 'off'}; compliance profiles ${PROFILES.length ? PROFILES.join(',') : 'none'} (every dial judged at dial time; toll-free numbers judged in the seeded contact zone)`,
    `  set-up: ${fmt(r.calls)} calls inserted in ${r.insertSeconds.toFixed(1)} s (one INSERT ... generate_series), VACUUM (ANALYZE) calls ${r.vacuumSeconds.toFixed(1)} s`,
    `  open calls all ended in ${r.openEndedSeconds.toFixed(2)} s: ${fmt(perSec)} calls/s (bound >= ${fmt(MIN_CALLS_PER_SECOND)}: ${verdict(perSec >= MIN_CALLS_PER_SECOND)}); first dial to last end ${r.openDialToEndSeconds.toFixed(2)} s: ${fmt(steady)} calls/s`,
    `    beside ${plainFigure}`,
    ...plan(
      `nothing open (${fmt(waiting)} waiting), EXPLAIN (ANALYZE, BUFFERS) of the claim statement for ${EXPLAIN_CLAIM} calls`,
      r.nothingOpen,
      true,
    ),
    `  pg_stat of calls' indexes, from the start to 2.5 s of idle claims after the open calls (reading the waiting calls would be ${fmt(waiting)} entries per scan):`,
    ...stats(r.idleStats),
    `  a window opens for ${fmt(r.open)} waiting calls at one instant (next_attempt_at moved there, window_closes_at a window's length later, by an UPDATE that took ${r.opening.updateSeconds.toFixed(2)} s and committed ${r.opening.leadSeconds.toFixed(1)} s before it):`,
    ...opening(r.opening, 'the window opens', true),
    ...plan(`  window open, ${RATE_WINDOW_S} s later`, r.windowOpen, false),
    `  pg_stat, from before that UPDATE to the last of the window's calls analysed:`,
    ...stats(r.windowStats),
    `  window sweep under load: one transaction (${r.sweepOpening.updateSeconds.toFixed(2)} s, its COMMIT ${fmt(r.sweepOpening.commitMs)} ms; times below from the COMMIT's sending) closes the window of ${fmt(r.open)} waiting calls (it opened and closed without them) and opens another's for ${fmt(r.open)}:`,
    `    the worker's sweep: ${wt.length} turns moved ${fmt(wt.reduce((a, t) => a + t.moved, 0))} calls (${wt
      .map((t) => fmt(t.moved))
      .slice(0, 3)
      .join(
        ', ',
      )}${wt.length > 3 ? ', ...' : ''}), the first ${wt.length ? fmt(wt[0].ms) : '-'} ms and the last ${fmt(sweepEndS * 1000)} ms after the commit by their ticks' clocks (read before the turn; turns ${gaps.length ? `${fmt(gaps.reduce((a, x) => a + x, 0) / gaps.length)} ms apart on average, at most ${fmt(Math.max(...gaps))}` : '-'}): ${fmt(r.open / Math.max(0.001, sweepEndS))} calls moved/s`,
    ...opening(r.sweepOpening, 'the other window opens at the same commit', false),
    `    dials while the sweep ran (commit to its last turn, ${sweepEndS.toFixed(2)} s): ${fmt(r.dialsDuringSweep)}, ${fmt(duringSweep)} calls/s (bound >= ${fmt(MIN_CALLS_PER_SECOND)}: ${verdict(duringSweep >= MIN_CALLS_PER_SECOND)})`,
    `  the sweep alone (worker stopped): ${fmt(r.open)} more windows closed; the bench runs moveClosedWindows until it moves none`,
    `    ${bt.length} turns moved ${fmt(benchMoved)} calls in ${(benchMs / 1000).toFixed(2)} s: ${fmt(benchMoved / Math.max(0.001, benchMs / 1000))} calls moved/s; per turn ${bt.length ? `${fmt(benchMs / bt.length)} ms on average, at most ${fmt(Math.max(...bt.map((t) => t.ms)))}` : '-'}; the last (nothing closed) ${fmt(r.benchTurns[r.benchTurns.length - 1].ms)} ms`,
    ...plan(`  the claim with ${fmt(r.open)} windows closed and none open`, r.closedClaim, true),
    ...plan(`  the sweep's read of closed calls (${fmt(r.open)} closed, ${fmt(r.calls - 4 * r.open)} waiting)`, r.sweepPlan, true),
    ...plan(`  the same once all are moved`, r.sweepPlanAfter, true),
    ...plan(`nothing open again, after VACUUM calls, the claim`, r.vacuumed, true),
    `  max in flight: ${r.sampledMaxInFlight} sampled, ${r.historyMaxInFlight} from history; limit ${r.concurrency} -> ${Math.max(r.sampledMaxInFlight, r.historyMaxInFlight) <= r.concurrency ? 'never above' : 'EXCEEDED'}`,
    `  checks: ${r.checks.length ? r.checks.join('; ') : "every dial within its call's window (none before its opening, none after its close), every open call dialled and no waiting one, every closed window moved to its next opening, every call ended once, no number dialled twice, counters sum to accepted_contacts, every answered call analysed"}`,
    `  ${r.load} at the end`,
  ];
  console.log(lines.join('\n'));
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
  lines.push(
    `  first dial to last end ${r.dialToEndSeconds.toFixed(2)} s: ${steady.toFixed(0)} calls/s (without the worker noticing the start, up to WORKER_POLL_MS)`,
  );
  if (s.simCallMs > 0) {
    const ideal = s.concurrency / (s.simCallMs / 1000);
    lines.push(
      `  ideal concurrency / call length = ${ideal.toFixed(0)} calls/s -> ${((perSecond / ideal) * 100).toFixed(1)} % of ideal (start to end), ${((steady / ideal) * 100).toFixed(1)} % (first dial to last end)`,
    );
  }
  lines.push(
    `  max in flight: ${r.sampledMaxInFlight} sampled, ${r.historyMaxInFlight} from history; limit ${s.concurrency} -> ${Math.max(r.sampledMaxInFlight, r.historyMaxInFlight) <= s.concurrency ? 'never above' : 'EXCEEDED'}`,
    `  checks: ${r.checks.length ? r.checks.join('; ') : 'every call ended once, no number dialled twice, counters sum to accepted_contacts, every answered call analysed'}`,
    `  ${loadAverage()} at the end`,
  );
  console.log(lines.join('\n'));
}

async function main() {
  // Always PostgreSQL (pg.Client on SERVER; PGlite is never used here): the server says which.
  const c = new pg.Client({ connectionString: SERVER });
  await c.connect();
  const version = (await c.query<{ v: string }>(`SELECT split_part(version(), ' on ', 1) AS v`)).rows[0].v;
  await c.end();
  console.log(
    `dispatch benchmark on ${new URL(SERVER).host} (${version}), ${process.platform} ${process.arch}, node ${process.version}; ${loadAverage()}${FREQUENCY_CAP ? `; account frequency cap ${FREQUENCY_CAP.maxCalls} per ${FREQUENCY_CAP.periodSeconds} s` : ''}`,
  );
  const scenarios: Scenario[] = [
    { name: '1. zero-latency calls, 1 worker process', calls: CALLS, workers: 1, simCallMs: 0, concurrency: CONCURRENCY },
    { name: '2. zero-latency calls, 4 worker processes', calls: CALLS, workers: 4, simCallMs: 0, concurrency: CONCURRENCY },
    { name: '3. 1-second calls, 1 worker process', calls: SLOW_CALLS, workers: 1, simCallMs: 1000, concurrency: SLOW_CONCURRENCY },
  ].filter((_, i) => ONLY.includes(String(i + 1)));
  let plain: Result | undefined;
  for (const s of scenarios) {
    const r = await runScenario(s);
    if (s.name.startsWith('1.')) plain = r;
    report(r);
  }
  if (ONLY.includes('4')) reportWaiting(await runWaitingScenario(), plain);
  if (ONLY.includes('5')) reportWindows(await runWindowScenario(), plain);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
