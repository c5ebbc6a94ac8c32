// Benchmark (not a test): how fast one `src/worker.ts` process places calls through a real provider
// adapter against a zero-latency fake of that provider (issue 34: Vapi beside Retell).
//
//   npm run bench:providers [-- --calls 5000 --providers simulator,vapi,retell]
//   BENCH_PG_URL=postgresql://user@host:5432/postgres selects the PostgreSQL server (a throwaway
//   database per provider). Always PostgreSQL: the worker is a process of its own.
//
// Per provider: an account on it (unpaced: dial rate 0), one batch of `calls` calls whose
// concurrency admits all of them at once, the fake (test/helpers/fake-vapi.ts or fake-retell.ts,
// answering at once, validating every request against the provider's vendored OpenAPI file) in this
// process, and one worker process idle before the clock starts. Measured: calls placed per second
// (the provider accepted the create and the call is stored dialled with its provider id), from the
// batch's start to the last such call, and from the first dial to the last in the call history.
// Nothing ends the calls: placing is what is measured. Bound: >= 1,000 calls/s with one worker.
// `simulator` places the same batch through the in-process simulator (its calls lasting 10 minutes):
// the worker's own cost per dial, measured in the same run, beside which a provider's is read.
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { WORKER_NODE_FLAGS } from './server-flags.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SERVER = process.env.BENCH_PG_URL || process.env.TEST_DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/postgres';
const APP_SECRET = 'bench-app-secret-0123456789abcdef0123456789';
const KEY = 'bench_provider_key_0123456789abcdef';
const SECRET = 'bench_webhook_secret_0123456789';
const MIN_CALLS_PER_SECOND = 1000;

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback;
}
const CALLS = Number(arg('calls', '5000'));
type Provider = 'simulator' | 'vapi' | 'retell';
const PROVIDERS = arg('providers', 'simulator,vapi,retell').split(',') as Provider[];
// The worker holds at most 5,000 calls in flight (its maxInFlight): all must fit at once.
if (!(CALLS >= 100 && CALLS <= 5000)) throw new Error('--calls: 100 to 5000');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
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

interface Fake {
  url: string;
  creates: unknown[];
  invalid: string[];
  close(): Promise<void>;
}

async function startFake(provider: Provider): Promise<Fake> {
  if (provider === 'simulator') return { url: '', creates: [], invalid: [], close: async () => undefined };
  if (provider === 'vapi') {
    const { startFakeVapi } = await import('../test/helpers/fake-vapi.ts');
    return startFakeVapi({ apiKey: KEY, auth: { mode: 'hmac', secret: SECRET } });
  }
  const { startFakeRetell } = await import('../test/helpers/fake-retell.ts');
  return startFakeRetell({ apiKey: KEY });
}

type Deps = Awaited<ReturnType<typeof import('../src/bootstrap.ts').createDeps>>;

async function seed(deps: Deps, provider: Provider, n: number): Promise<{ batchId: string; accountId: string }> {
  const { createAccount } = await import('../src/services/accounts/accounts.ts');
  const { addDidNumber, createAgent, createPromptVersion } = await import('../src/services/accounts/catalog.ts');
  const { setAccountProvider } = await import('../src/services/accounts/provider-config.ts');
  const { newId, newIds } = await import('../src/domain/ids.ts');
  const { withSqlTransaction } = await import('../src/db/sql-transaction.ts');
  const { account } = await createAccount(deps.db, {
    name: 'Bench',
    email: 'bench@example.com',
    voices: ['alloy'],
    limits: { maxBatchSize: 1_000_000, maxConcurrentCalls: n * 2, maxCallDurationSeconds: 600, rateLimitPerMinute: 100_000 },
  });
  const agent = await createAgent(deps.db, account, { name: 'Bench Agent', voice: 'alloy', outcomeKeys: ['interested'], recordingEnabled: true });
  const version = await createPromptVersion(deps.db, account, { agentId: agent.id, name: 'v1', prompt: 'Be brief.' });
  const did = await addDidNumber(deps.db, account, '+14155550100');
  await deps.db.prisma.$executeRaw`UPDATE agents SET provider_agent_id = 'bench_agent' WHERE id = ${agent.id}`;
  if (provider !== 'simulator') {
    await setAccountProvider(
      deps,
      account.id,
      provider,
      provider === 'vapi'
        ? { apiKey: KEY, phoneNumberIds: { '+14155550100': 'pn_bench' }, webhookAuth: 'hmac', webhookSecret: SECRET, dialRatePerNumber: 0 }
        : { apiKey: KEY, dialRatePerNumber: 0 },
    );
  }
  const batchId = newId('batch');
  const now = new Date().toISOString();
  await withSqlTransaction(deps.db, async (tx) => {
    await tx.query(
      `INSERT INTO batches (id, account_id, agent_id, prompt_version_id, did_number_id, status, start_mode, scheduled_at,
                            timezone, concurrency, voice, interruption, use_alternate_number, recording_enabled,
                            max_duration_seconds, deduplicate_by_phone, total_contacts, accepted_contacts,
                            rejected_contacts, queued, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, 'paused', 'manual', $6, 'UTC', $7, 'alloy', true, false, true, 600, false, $7, $7, 0, $7, $6, $6)`,
      [batchId, account.id, agent.id, version.id, did.id, now, n],
    );
    const ids = newIds('call', n);
    const phones = ids.map((_, i) => `+1415${String(2_000_000 + i).padStart(7, '0')}`);
    const metadata = ids.map((_, i) => JSON.stringify({ first_name: `Name${i}`, tier: i % 3 ? 'silver' : 'gold' }));
    await tx.query(
      `INSERT INTO calls (id, account_id, batch_id, agent_id, prompt_version_id, seq, external_id, name, phone_number,
                          metadata, status, created_at, updated_at)
       SELECT u.id, $2, $3, $4, $5, u.seq, 'c' || u.seq, 'Contact ' || u.seq, u.phone, u.meta::jsonb, 'queued', $6, $6
         FROM unnest($1::text[], $7::int[], $8::text[], $9::text[]) AS u(id, seq, phone, meta)`,
      [ids, account.id, batchId, agent.id, version.id, now, ids.map((_, i) => i + 1), phones, metadata],
    );
  });
  return { batchId, accountId: account.id };
}

function startWorker(url: string, provider: Provider, fakeUrl: string): ChildProcess {
  const child = spawn(process.execPath, [...WORKER_NODE_FLAGS, '--import', 'tsx', path.join(ROOT, 'src/worker.ts')], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: url,
      APP_SECRET,
      MIGRATE_ON_START: 'false',
      LOG_LEVEL: 'warn',
      WORKER_POLL_MS: '200',
      LEASE_MS: '60000',
      DB_POOL_SIZE: '10',
      SIM_CALL_MS: '600000',
      ...(provider === 'vapi' ? { VAPI_BASE_URL: fakeUrl, VAPI_DIAL_RATE_PER_NUMBER: '0' } : {}),
      ...(provider === 'retell' ? { RETELL_BASE_URL: fakeUrl, RETELL_DIAL_RATE_PER_NUMBER: '0' } : {}),
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr!.on('data', (d) => process.stderr.write(`[worker ${child.pid}] ${d}`));
  return child;
}

interface Result {
  provider: string;
  placedSeconds: number;
  firstToLastSeconds: number;
  creates: number;
  invalid: number;
  dialled: number;
  /** Calls that failed to be placed (each a miss: the fake refuses nothing). */
  failed: number;
  reasons: string[];
}

async function run(provider: Provider): Promise<Result> {
  const dbName = `cbs_bench_${crypto.randomBytes(5).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${dbName}`);
  const url = withDb(SERVER, dbName);
  const { loadConfig } = await import('../src/config.ts');
  const { createDeps } = await import('../src/bootstrap.ts');
  const deps = await createDeps(
    loadConfig({ DATABASE_URL: url, LOG_LEVEL: 'warn', RUN_WORKER: 'false', SEED_DEMO: 'false', APP_SECRET, MIGRATE_ON_START: 'true' }),
  );
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const fake = await startFake(provider);
  let worker: ChildProcess | undefined;
  try {
    const { batchId } = await seed(deps, provider, CALLS);
    worker = startWorker(withDb(SERVER, dbName, 'bench-w0'), provider, fake.url);
    for (const deadline = Date.now() + 120_000; ;) {
      const r = await client.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = 'bench-w0'`, [dbName]);
      if (r.rows[0].n > 0) break;
      if (worker.exitCode !== null || Date.now() > deadline) throw new Error('the worker did not start');
      await sleep(100);
    }
    const { operateBatch } = await import('../src/services/batches/batch-operations.ts');
    const account = await deps.db.prisma.account.findFirstOrThrow();
    const t0 = performance.now();
    await operateBatch(deps, account, batchId, 'start');
    let dialled = 0;
    let failed = 0;
    for (const deadline = Date.now() + 600_000; ;) {
      const row = (
        await client.query(
          `SELECT count(*) FILTER (WHERE provider_call_id IS NOT NULL)::int AS dialled,
                  count(*) FILTER (WHERE provider_call_id IS NULL AND status = 'failed')::int AS failed
             FROM calls WHERE batch_id = $1`,
          [batchId],
        )
      ).rows[0];
      dialled = row.dialled;
      failed = row.failed;
      if (dialled + failed >= CALLS) break;
      if (worker.exitCode !== null) throw new Error('the worker exited during the run');
      if (Date.now() > deadline) throw new Error(`only ${dialled} of ${CALLS} calls placed in 10 minutes`);
      await sleep(10);
    }
    const placedSeconds = (performance.now() - t0) / 1000;
    const span = (
      await client.query<{ s: number }>(
        `SELECT EXTRACT(EPOCH FROM max(e.at) - min(e.at))::float AS s FROM call_events e JOIN calls c ON c.id = e.call_id
          WHERE c.batch_id = $1 AND e.detail->>'event' = 'dial'`,
        [batchId],
      )
    ).rows[0].s;
    const reasons = (
      await client.query<{ r: string; n: number }>(
        `SELECT disconnect_reason AS r, count(*)::int AS n FROM calls WHERE batch_id = $1 AND status = 'failed' GROUP BY 1`,
        [batchId],
      )
    ).rows.map((x) => `${x.r} ${x.n}`);
    return {
      provider,
      placedSeconds,
      firstToLastSeconds: span,
      creates: fake.creates.length,
      invalid: fake.invalid.length,
      dialled,
      failed,
      reasons,
    };
  } finally {
    if (worker && worker.exitCode === null) worker.kill('SIGKILL');
    await fake.close();
    await client.end().catch(() => undefined);
    await deps.db.close();
    await adminQuery(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  }
}

/** The machine's load while the bench ran (other work on the same cores skews every figure). */
const load = async () =>
  (await import('node:os'))
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const { rows } = await (async () => {
  const c = new pg.Client({ connectionString: SERVER });
  await c.connect();
  try {
    return await c.query<{ server_version: string }>('SHOW server_version');
  } finally {
    await c.end();
  }
})();
console.log(`provider dispatch bench: ${fmt(CALLS)} calls, 1 worker process, PostgreSQL ${rows[0].server_version}`);
for (const p of PROVIDERS) {
  const r = await run(p);
  console.log(`  (load average ${await load()})`);
  const perSecond = r.dialled / r.placedSeconds;
  console.log(
    `  ${p}: ${fmt(r.dialled)} of ${fmt(CALLS)} placed in ${r.placedSeconds.toFixed(2)} s: ${fmt(perSecond)} calls/s (bound >= ${fmt(MIN_CALLS_PER_SECOND)}: ${perSecond >= MIN_CALLS_PER_SECOND ? 'met' : 'MISSED'}); ` +
      `first dial to last ${r.firstToLastSeconds.toFixed(2)} s: ${fmt(r.dialled / Math.max(r.firstToLastSeconds, 0.001))} calls/s; ` +
      (p === 'simulator'
        ? ''
        : `creates at the fake ${fmt(r.creates)} (${r.creates === r.dialled ? 'one per call placed' : 'NOT one per call'}), invalid bodies ${r.invalid}`) +
      (r.failed ? `; FAILED to place ${fmt(r.failed)} (${r.reasons.join(', ')})` : ''),
  );
}
