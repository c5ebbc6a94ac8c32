// Which read uses which index of `calls` (not a test): `npm run bench:indexes`.
//
// Every index of `calls` costs each created call an entry (a partial one only the calls its
// predicate holds), and every status change that moves an indexed column writes one more. This
// seeds a throwaway PostgreSQL database (a finished 100k-call batch with transcripts and outcomes,
// smaller batches of two agents, a windowed batch waiting for its window, retries waiting, calls in
// flight, another account's 800k calls), runs every read of `calls` the service makes through its
// own code (REST pages and filters, the CSV export, GraphQL, the worker's claim, sweeps and
// recovery, the live-progress reads, webhooks, opt-outs), captures each statement at the driver and
// EXPLAINs it (ANALYZE, in a rolled-back transaction, with its real parameters). It prints the scans
// of `calls` per statement, then per index the statements that read it, and flags indexes no
// statement read. docs/indexes.md keeps a run's table.
//
//   npm run bench:indexes [-- --drop <index>,<index>]   BENCH_PG_URL picks another server (default
//   127.0.0.1:5432); --drop shows the plans the same reads get without those indexes.
import os from 'node:os';
import { seedWithoutOutcomeCounts } from './outcome-counts.ts';
import { throwawayDatabase } from './throwaway-database.ts';
import pg from 'pg';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase, type Database } from '../src/db/client.ts';
import { migrate } from '../src/db/migrate.ts';
import { autocommit } from '../src/db/sql-statement.ts';
import { systemClock, type AppDeps } from '../src/deps.ts';
import { createLogger } from '../src/logger.ts';
import { createMetrics } from '../src/metrics.ts';
import { createAccount } from '../src/services/accounts/accounts.ts';
import { addDidNumber, createAgent, createPromptVersion } from '../src/services/accounts/catalog.ts';
import { accountForProviderCall } from '../src/services/accounts/provider-config.ts';
import { claimCalls } from '../src/dispatch/store/claim-calls.ts';
import { endUndialledCalls } from '../src/dispatch/store/end-undialled-calls.ts';
import { findLostCalls, renewLeases, requeueExpiredUndialled, takeOverStaleAnalysis } from '../src/dispatch/store/lease-recovery.ts';
import { moveClosedWindows } from '../src/dispatch/store/move-closed-windows.ts';
import { pruneNumberDials } from '../src/dispatch/store/prune-number-dials.ts';
import { sweepFinishedBatches } from '../src/services/calls/call-transitions.ts';
import { CALL_READS } from '../src/events/call-tracker.ts';
import { Prisma } from '../src/generated/prisma/client.ts';
import { outcomeTotal, outcomeWhere } from '../src/services/batches/batch-results.ts';
import { addOptOuts } from '../src/services/suppressions/add-opt-outs.ts';
import { enqueueCallWebhooks } from '../src/services/webhooks/outbox.ts';

const BASE_URL = process.env.BENCH_PG_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const APP_SECRET = 'bench-app-secret-0123456789abcdef0123456789';
const BIG = 100_000;
/** Another account's batches (4 of them): the 100k batch is then a tenth of the table, as one batch is of a busy one. */
const OTHER_BATCH = 200_000;
const log = (s: string) => process.stdout.write(s + '\n');
const load = () =>
  `load average ${os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(', ')} (${os.cpus().length} cores)`;
/** Issue 35's bound for a whole recovery pass and for the results' `?outcome=` count at ~1M calls. */
const BOUND_MS = 20;
const TIMED_RUNS = 9;
/** A write's cost with and without a trigger is a difference of two noisy times: more runs. */
const WRITE_RUNS = 25;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Runs `steps` in order TIMED_RUNS times after one warm-up; each step's median and the whole pass's (ms). */
async function timeSteps(steps: [string, () => Promise<unknown>][]): Promise<{ steps: [string, number][]; pass: number; max: number }> {
  const times = steps.map(() => [] as number[]);
  const passes: number[] = [];
  for (let run = 0; run <= TIMED_RUNS; run++) {
    let pass = 0;
    for (let i = 0; i < steps.length; i++) {
      const t0 = performance.now();
      await steps[i][1]();
      const ms = performance.now() - t0;
      pass += ms;
      if (run > 0) times[i].push(ms);
    }
    if (run > 0) passes.push(pass);
  }
  return { steps: steps.map(([name], i) => [name, median(times[i])]), pass: median(passes), max: Math.max(...passes) };
}

const verdict = (ms: number) => `${ms.toFixed(2)} ms beside the bound of < ${BOUND_MS} ms: ${ms < BOUND_MS ? 'met' : 'NOT MET'}`;

interface Captured {
  scenario: string;
  text: string;
  values: unknown[];
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

/** Scans of calls in a plan: node type, index, rows (per loop × loops), rows thrown away. */
function callScans(node: PlanNode, out: { index: string | null; text: string }[] = []): { index: string | null; text: string }[] {
  const onCalls = node['Relation Name'] === 'calls' || (node['Node Type'] === 'Bitmap Index Scan' && node['Index Name']?.startsWith('calls_'));
  if (onCalls && /Scan/.test(node['Node Type'])) {
    const rows = (node['Actual Rows'] ?? 0) * (node['Actual Loops'] ?? 1);
    const removed = node['Rows Removed by Filter'] ? `, ${node['Rows Removed by Filter']} removed by filter` : '';
    out.push({
      index: node['Index Name'] ?? null,
      text: `${node['Node Type']}${node['Index Name'] ? ` using ${node['Index Name']}` : ''} (${rows} rows${removed})`,
    });
  }
  for (const child of node.Plans ?? []) callScans(child, out);
  return out;
}

const BATCH_SQL = `
INSERT INTO batches (id, account_id, agent_id, prompt_version_id, status, start_mode, scheduled_at, timezone, concurrency, voice,
                     interruption, use_alternate_number, recording_enabled, max_duration_seconds, deduplicate_by_phone,
                     total_contacts, accepted_contacts, rejected_contacts, created_at, started_at, calling_window, retry_max_attempts, retry_on,
                     expires_at)
VALUES ($1, $2, $3, $4, $5, 'immediate', $6, 'UTC', 50, 'alloy', true, false, true, 600, false, $7, $7, 0, $6, $6, $8::jsonb, $9, $10::text[], $11)`;

/** n calls of a batch; `mix` picks each call's state from its seq (a finished campaign by default). */
const CALLS_SQL = `
INSERT INTO calls (id, account_id, batch_id, agent_id, prompt_version_id, seq, external_id, name, phone_number, metadata, status,
                   transcript_status, outcomes, summary, duration_seconds, "timestamp", completed_at, created_at, updated_at,
                   attempts, provider_call_id, lease_owner, lease_expires_at, next_attempt_at, timezone, window_closes_at)
SELECT 'call_' || $9 || lpad(g::text, 8, '0'), b.account_id, b.id, b.agent_id, b.prompt_version_id, g, 'crm-' || g, 'Contact ' || g,
       '+1415' || lpad((g % 10000000)::text, 7, '0'), '{"plan":"pro"}'::jsonb, s.status,
       CASE WHEN s.status = 'completed' THEN (CASE WHEN g % 20 = 0 THEN 'processing' WHEN g % 20 = 1 THEN 'failed' ELSE 'ready' END) END,
       CASE WHEN s.status = 'completed' THEN jsonb_build_object('interested', CASE WHEN g % 3 = 0 THEN 'yes' ELSE 'no' END,
            'sentiment', (ARRAY['positive', 'neutral', 'negative'])[1 + g % 3]) END,
       CASE WHEN s.status = 'completed' THEN 'Summary ' || g END,
       CASE WHEN s.status = 'completed' THEN 30 + g % 240 END,
       CASE WHEN s.status NOT IN ('pending', 'queued') THEN b.created_at END,
       CASE WHEN s.status IN ('completed', 'failed', 'no_answer', 'busy') THEN b.created_at + interval '1 hour' END,
       b.created_at, b.created_at + CASE WHEN s.status = 'pending' THEN interval '0' ELSE interval '1 hour' END,
       CASE WHEN s.status = 'pending' THEN 0 ELSE 1 END,
       CASE WHEN s.status NOT IN ('pending', 'queued') THEN 'prov_' || $9 || g END,
       CASE WHEN s.status IN ('ringing', 'in_progress') THEN 'worker-gone' END,
       CASE WHEN s.status IN ('ringing', 'in_progress') THEN now() - interval '1 minute' END,
       CASE WHEN $8 OR s.status = 'queued' THEN now() + interval '1 day' END,
       CASE WHEN $8 THEN 'America/New_York' END,
       CASE WHEN $8 THEN now() + interval '35 hours' END
  FROM batches b CROSS JOIN generate_series($2::int, $3::int) g
  CROSS JOIN LATERAL (SELECT CASE WHEN g % 100 < $4 THEN 'completed' WHEN g % 100 < $5 THEN 'no_answer'
                                  WHEN g % 100 < $6 THEN 'queued' WHEN g % 100 < $7 THEN 'in_progress' ELSE 'pending' END AS status) s
 WHERE b.id = $1`;

async function seed(db: Database) {
  const t0 = performance.now();
  const { account, apiKey } = await createAccount(db, {
    name: 'Bench',
    email: 'b@example.com',
    voices: ['alloy'],
    limits: { rateLimitPerMinute: 1_000_000, maxConcurrentCalls: 100_000 },
  });
  const agents = [
    await createAgent(db, account, { name: 'Sales', voice: 'alloy', outcomeKeys: ['interested'], optOutOutcomeKey: 'interested' }),
    await createAgent(db, account, { name: 'Support', voice: 'alloy' }),
  ];
  const versions = [
    await createPromptVersion(db, account, { agentId: agents[0].id, name: 'v1', prompt: 'Hi.' }),
    await createPromptVersion(db, account, { agentId: agents[1].id, name: 'v1', prompt: 'Hi.' }),
  ];
  await addDidNumber(db, account, '+14155550100');
  const { account: other } = await createAccount(db, { name: 'Other', email: 'o@example.com', voices: ['alloy'] });
  const otherAgent = await createAgent(db, other, { name: 'Other', voice: 'alloy' });
  const otherVersion = await createPromptVersion(db, other, { agentId: otherAgent.id, name: 'v1', prompt: 'Hi.' });
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  const day = (d: number) => new Date(Date.now() - d * 86_400_000).toISOString();
  let key = 0;
  const batch = async (
    accountId: string,
    agent: number | null,
    at: string,
    n: number,
    mix: number[],
    o: { status?: string; windowed?: boolean; retry?: boolean; expired?: boolean } = {},
  ) => {
    const id = `sched_bench${String(++key).padStart(6, '0')}`;
    const [agentId, versionId] = agent === null ? [otherAgent.id, otherVersion.id] : [agents[agent].id, versions[agent].id];
    const window = o.windowed
      ? JSON.stringify({ start: '09:00', end: '20:00', days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], timezone: 'recipient' })
      : null;
    await client.query(BATCH_SQL, [
      id,
      accountId,
      agentId,
      versionId,
      o.status ?? 'running',
      at,
      n,
      window,
      o.retry ? 3 : null,
      o.retry ? ['no_answer'] : [],
      o.expired ? at : null,
    ]);
    await client.query(CALLS_SQL, [id, 1, n, ...mix, !!o.windowed, String(key).padStart(6, '0')]);
    return id;
  };
  const finished = [70, 90, 92, 95];
  // Inserted with the outcome counters' trigger off and counted after (bench/outcome-counts.ts).
  const ids = await seedWithoutOutcomeCounts(
    (sql) => client.query(sql),
    async () => {
      const big = await batch(account.id, 0, day(1), BIG, finished);
      for (let i = 0; i < 50; i++) await batch(account.id, i % 2, day(2 + i / 10), 200, finished, { status: 'completed' });
      const windowed = await batch(account.id, 1, day(0.5), 20_000, [0, 0, 0, 0], { windowed: true });
      const retries = await batch(account.id, 0, day(0.2), 5_000, [10, 30, 80, 85], { retry: true });
      const cancellable = await batch(account.id, 0, day(0.3), 5_000, [10, 30, 80, 85], { retry: true });
      await batch(account.id, 1, day(0.4), 5_000, [10, 30, 80, 85], { expired: true });
      for (let i = 0; i < 4; i++) await batch(other.id, null, day(1 + i), OTHER_BATCH, finished, { status: 'completed' });
      return { big, windowed, retries, cancellable };
    },
  );
  const { big, windowed, retries, cancellable } = ids;
  await client.query(`UPDATE batches b SET queued = c.q, in_progress = c.ip, completed = c.done, failed = c.f
    FROM (SELECT batch_id, count(*) FILTER (WHERE status IN ('pending', 'queued'))::int AS q,
                 count(*) FILTER (WHERE status IN ('ringing', 'in_progress'))::int AS ip,
                 count(*) FILTER (WHERE status = 'completed')::int AS done,
                 count(*) FILTER (WHERE status = 'no_answer')::int AS f FROM calls GROUP BY batch_id) c WHERE c.batch_id = b.id`);
  await client.query('VACUUM ANALYZE');
  await client.end();
  log(`seeded ${BIG + 50 * 200 + 20_000 + 15_000 + 4 * OTHER_BATCH} calls in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return { account, apiKey, agents, big, windowed, retries, cancellable };
}

async function main() {
  const target = await throwawayDatabase(BASE_URL, 'cbs_indexes');
  const db = await openDatabase({ databaseUrl: target.url });
  try {
    await migrate(db);
    const s = await seed(db);
    const dropAt = process.argv.indexOf('--drop');
    for (const name of dropAt > 0 ? process.argv[dropAt + 1].split(',') : []) {
      await db.pool!.query(`DROP INDEX ${pg.escapeIdentifier(name)}`);
      log(`dropped ${name}`);
    }
    const config = loadConfig({ LOG_LEVEL: 'silent', APP_SECRET, RUN_WORKER: 'false', DATABASE_URL: db.url });
    const deps: AppDeps = { config, db, logger: createLogger('silent'), clock: systemClock, appSecret: APP_SECRET, metrics: createMetrics(db) };
    const app = buildApp(deps);

    // Every statement any pg client sends while a scenario runs (Prisma's adapter included).
    const captured: Captured[] = [];
    let scenario = '';
    const original = pg.Client.prototype.query;
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const q = args[0] as string | { text?: string; values?: unknown[] };
      const text = typeof q === 'string' ? q : q?.text;
      const values = typeof q === 'string' ? (Array.isArray(args[1]) ? args[1] : []) : (q?.values ?? []);
      if (scenario && text && /\bcalls\b/.test(text)) captured.push({ scenario, text, values });
      return (original as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof original;
    const run = async (name: string, fn: () => Promise<unknown>) => {
      scenario = name;
      try {
        await fn();
      } finally {
        scenario = '';
      }
    };
    const rest =
      (path: string, method = 'GET') =>
      async () => {
        const res = await app.fetch(
          new Request(`http://bench.local/api/v1/public${path}`, { method, headers: { authorization: `Bearer ${s.apiKey}` } }),
        );
        if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`);
        await res.arrayBuffer();
      };
    const graphql = (query: string, variables: Record<string, unknown>) => async () => {
      const res = await app.fetch(
        new Request('http://bench.local/graphql', {
          method: 'POST',
          headers: { authorization: `Bearer ${s.apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ query, variables }),
        }),
      );
      const out = (await res.json()) as { errors?: unknown };
      if (out.errors) throw new Error(JSON.stringify(out.errors));
    };
    const b = `/call-batches/${s.big}`;
    const aCall = `call_000001${String(4242).padStart(8, '0')}`;
    const days = `start_date=${new Date(Date.now() - 3 * 86_400_000).toISOString().slice(0, 10)}&end_date=${new Date().toISOString().slice(0, 10)}`;

    await run('calls page', rest(`${b}/calls?page=3&limit=100`));
    await run('calls ?status', rest(`${b}/calls?status=no_answer&page=2`));
    await run('calls ?external_id', rest(`${b}/calls?external_id=crm-77777`));
    await run('results', rest(`${b}/results?page=5`));
    await run('results ?transcript_status', rest(`${b}/results?transcript_status=processing`));
    await run('results ?status&transcript_status', rest(`${b}/results?status=completed&transcript_status=failed`));
    await run('results ?outcome', rest(`${b}/results?outcome=yes`));
    await run('results ?outcome&status', rest(`${b}/results?outcome=yes&status=completed&page=3`));
    await run('results.csv ?outcome (first pages)', async () => {
      const res = await app.fetch(
        new Request(`http://bench.local/api/v1/public${b}/results.csv?outcome=yes`, { headers: { authorization: `Bearer ${s.apiKey}` } }),
      );
      const reader = res.body!.getReader();
      for (let i = 0; i < 3 && !(await reader.read()).done; i++);
      await reader.cancel();
    });
    await run('call records', rest(`/call-records?${days}&page=2`));
    await run('call records ?agent_id', rest(`/call-records?${days}&agent_id=${s.agents[1].id}&page=2`));
    await run('GraphQL call(id)', graphql('query($id: ID!) { call(id: $id) { id status } }', { id: aCall }));
    await run('outcome breakdown (GraphQL)', graphql('query($id: ID!) { batch(id: $id) { outcomeBreakdown { key value calls } } }', { id: s.big }));
    await run('live progress: tracker reads', async () => {
      const since = new Date(Date.now() - 3 * 86_400_000).toISOString();
      await db.pool!.query(CALL_READS.top, [s.big]);
      await db.pool!.query(CALL_READS.signatures, [s.big, since]);
      await db.pool!.query(CALL_READS.recent, [s.big, since, 200]);
      await db.pool!.query(CALL_READS.rows, [s.big, [aCall]]);
    });
    const now = new Date();
    // Some retries come due, and the windowed batch's window opens for a few calls.
    await db.pool!.query(
      `UPDATE calls SET next_attempt_at = now() - interval '1 minute' WHERE batch_id = $1 AND status = 'queued' AND seq % 10 = 0`,
      [s.retries],
    );
    await db.pool!.query(`UPDATE calls SET next_attempt_at = now() - interval '1 minute' WHERE batch_id = $1 AND seq % 50 = 0`, [s.windowed]);
    await db.pool!.query('ANALYZE calls');
    await run('worker: claim', () =>
      claimCalls(deps, { accountId: s.account.id, workerId: 'bench', budget: 200, clock: () => now, leaseMs: 60_000 }),
    );
    await run('worker: lease renewal', () => renewLeases(deps, 'bench', [aCall], new Date(Date.now() + 60_000)));
    await run('worker: requeue expired undialled', () => requeueExpiredUndialled(deps, now));
    await run('worker: lost calls', () => findLostCalls(deps, now, []));
    await run('worker: stale analysis', () => takeOverStaleAnalysis(deps, 'bench', now, 60_000));
    await run('worker: window sweep', () => moveClosedWindows(deps, new Date(Date.now() + 2 * 86_400_000)));
    await run('worker: expiry sweep', () => endUndialledCalls(deps, now));
    await run('provider webhook: call by provider id', () => accountForProviderCall(deps, 'prov_00000112345'));
    await run('webhooks: call events', () => enqueueCallWebhooks(autocommit(db), deps, [{ type: 'call.completed', callId: aCall }], now));
    await run('opt-outs', () => addOptOuts(autocommit(db), [aCall], now));
    await run('cancel (waiting calls)', rest(`/call-batches/${s.cancellable}/cancel`, 'POST'));
    pg.Client.prototype.query = original;
    await app.stop();

    // The worker's recovery pass (dispatch/worker/loop.ts, tick with `recover`): every statement it
    // runs, through the service's own functions, timed end to end (round trips included). Twice:
    // at a moment when every in-flight call's lease is still live (the usual pass: nothing to take
    // back), and now, when the 3 % of calls in flight all belong to a worker gone for a minute (the
    // pass reads its first 200 of them; settling them is the provider's and the write's work, per
    // call recovered, not the table's).
    const {
      rows: [{ first }],
    } = await db.pool!.query<{ first: Date }>(`SELECT min(lease_expires_at) AS first FROM calls WHERE lease_expires_at IS NOT NULL`);
    const pass = (at: Date): [string, () => Promise<unknown>][] => [
      ['requeueExpiredUndialled', () => requeueExpiredUndialled(deps, at)],
      ['findLostCalls', () => findLostCalls(deps, at, [])],
      ['takeOverStaleAnalysis', () => takeOverStaleAnalysis(deps, 'bench-recovery', at, 60_000)],
      ['pruneNumberDials', () => pruneNumberDials(deps, at)],
      ['sweepFinishedBatches', () => sweepFinishedBatches(deps, at)],
    ];
    const {
      rows: [{ lost }],
    } = await db.pool!.query<{ lost: number }>(
      `SELECT count(*)::int AS lost FROM calls WHERE status IN ('ringing', 'answered', 'in_progress') AND lease_expires_at < now()`,
    );
    const {
      rows: [{ total }],
    } = await db.pool!.query<{ total: number }>('SELECT count(*)::int AS total FROM calls');
    const timed: string[] = [];
    for (const [label, at] of [
      ['leases live (nothing to recover)', new Date(new Date(first).getTime() - 1_000)],
      [`${lost.toLocaleString('en-US')} in-flight calls lost`, new Date()],
    ] as const) {
      const r = await timeSteps(pass(at));
      timed.push(
        `  recovery pass, ${label}, ${total.toLocaleString('en-US')} calls (median of ${TIMED_RUNS}, max ${r.max.toFixed(2)} ms): ${verdict(r.pass)}`,
      );
      for (const [name, ms] of r.steps) timed.push(`      ${name.padEnd(26)} ${ms.toFixed(2).padStart(8)} ms`);
    }
    // The results' `?outcome=` total over the 100k-call batch: the counters' read the page makes
    // now (outcomeTotal), beside the count of the batch's calls it replaced, which must agree.
    for (const filter of [{ outcome: 'yes' }, { outcome: 'no', status: 'completed', transcriptStatus: 'ready' }, { outcome: 'absent' }]) {
      const counted = Prisma.sql`SELECT count(*)::int AS n FROM calls c WHERE ${outcomeWhere(s.big, filter)}`;
      let exact = 0;
      const r = await timeSteps([
        ['outcomeTotal (counters)', () => outcomeTotal(deps, s.big, filter)],
        ["count of the batch's calls", async () => (exact = (await db.pool!.query<{ n: number }>(counted.text, counted.values)).rows[0].n)],
      ]);
      const total = await outcomeTotal(deps, s.big, filter);
      const [[, counters], [, scan]] = r.steps;
      timed.push(
        `  ?outcome= total ${JSON.stringify(filter)} over ${BIG.toLocaleString('en-US')} calls (median of ${TIMED_RUNS}): ${verdict(counters)}; counting the calls ${scan.toFixed(2)} ms; total ${total}${total === exact ? ' = ' : ' DIFFERS FROM '}the count ${exact}`,
      );
    }

    // What the counters cost a write, rolled back, with the counters' update trigger and without it
    // (alternating): the analysis's write of 500 calls (outcomes and transcript status set, as
    // applyCallWrites does), a lease renewal of 500 calls in flight (no outcomes: the trigger's
    // first check returns), the most frequent update of calls, and a retention chunk's delete of
    // 500 finished calls with outcomes (the delete trigger).
    const writer = new pg.Client({ connectionString: db.url });
    await writer.connect();
    const ids = async (sql: string) => (await writer.query<{ id: string }>(sql, [s.retries])).rows.map((r) => r.id);
    const analysed = await ids(`SELECT id FROM calls WHERE batch_id = $1 AND status = 'no_answer' ORDER BY seq LIMIT 500`);
    const inFlight = await ids(`SELECT id FROM calls WHERE batch_id <> $1 AND status = 'in_progress' ORDER BY id LIMIT 500`);
    const finishedIds = await ids(
      `SELECT id FROM calls WHERE batch_id <> $1 AND status = 'completed' AND outcomes IS NOT NULL ORDER BY id LIMIT 500`,
    );
    const writes: [string, string[], string, (ids: string[]) => unknown[], string][] = [
      [
        "the analysis's write of",
        analysed,
        `UPDATE calls c SET outcomes = u.o, transcript_status = 'ready', summary = 'Summary', updated_at = now()
           FROM unnest($1::text[], $2::jsonb[]) AS u(id, o) WHERE c.id = u.id`,
        (x) => [
          x,
          x.map((_, i) =>
            JSON.stringify({
              interested: i % 3 ? 'no' : 'yes',
              callback_requested: i % 7 ? 'no' : 'yes',
              sentiment: ['positive', 'neutral', 'negative'][i % 3],
            }),
          ),
        ],
        'call_outcome_counts_changed',
      ],
      [
        'a lease renewal of',
        inFlight,
        `UPDATE calls SET lease_expires_at = now() + interval '1 minute' WHERE id = ANY($1::text[]) AND lease_owner = 'worker-gone' RETURNING id`,
        (x) => [x],
        'call_outcome_counts_changed',
      ],
      // Retention's chunk (services/retention/prune-batches.ts): finished calls with outcomes.
      ['a retention chunk deleting', finishedIds, `DELETE FROM calls WHERE id = ANY($1::text[])`, (x) => [x], 'call_outcome_counts_removed'],
    ];
    for (const [what, targets, sql, params, trigger] of writes) {
      const write = async (triggers: boolean) => {
        await writer.query('BEGIN');
        if (!triggers) await writer.query(`ALTER TABLE calls DISABLE TRIGGER ${trigger}`);
        const t0 = performance.now();
        await writer.query(sql, params(targets));
        const ms = performance.now() - t0;
        await writer.query('ROLLBACK');
        return ms;
      };
      const withT: number[] = [];
      const withoutT: number[] = [];
      for (let i = 0; i < 2 * WRITE_RUNS + 2; i++) {
        const ms = await write(i % 2 === 0);
        if (i >= 2) (i % 2 === 0 ? withT : withoutT).push(ms);
      }
      const [on, off] = [median(withT), median(withoutT)];
      timed.push(
        `  ${what} ${targets.length} calls (median of ${WRITE_RUNS}, alternating): with the counters' trigger ${on.toFixed(2)} ms, without ${off.toFixed(2)} ms: ${on >= off ? '+' : ''}${(on - off).toFixed(2)} ms, ${(((on - off) / targets.length) * 1000).toFixed(1)} µs a call`,
      );
    }
    await writer.end();

    // EXPLAIN ANALYZE each statement once (writes rolled back), in capture order.
    const explainer = new pg.Client({ connectionString: db.url });
    await explainer.connect();
    const byIndex = new Map<string, Set<string>>();
    const seen = new Set<string>();
    let seqScans = 0;
    log('\nStatements reading calls (EXPLAIN ANALYZE with their real parameters):');
    let last = '';
    for (const c of captured) {
      const key = `${c.scenario}\u0000${c.text}`;
      if (seen.has(key) || /^\s*(COPY|INSERT INTO calls)/i.test(c.text)) continue;
      seen.add(key);
      if (c.scenario !== last) log(`  ${(last = c.scenario)}:`);
      await explainer.query('BEGIN');
      try {
        const { rows } = await explainer.query({ text: `EXPLAIN (ANALYZE, FORMAT JSON) ${c.text}`, values: c.values });
        const plan = rows[0]['QUERY PLAN'][0] as { Plan: PlanNode; 'Execution Time': number };
        const scans = callScans(plan.Plan);
        for (const sc of scans) {
          if (sc.index) byIndex.set(sc.index, (byIndex.get(sc.index) ?? new Set()).add(c.scenario));
          if (sc.text.startsWith('Seq Scan')) seqScans++;
        }
        const what = c.text
          .replace(/"public"\./g, '')
          .replace(/\s+/g, ' ')
          .trim()
          .slice(0, 80);
        log(
          `    ${plan['Execution Time'].toFixed(2).padStart(8)} ms  ${scans.map((x) => x.text).join('; ') || '(no scan of calls)'}\n                 [${what}…]`,
        );
      } finally {
        await explainer.query('ROLLBACK');
      }
    }
    const { rows: indexes } = await explainer.query<{ indexname: string; indexdef: string }>(
      `SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'calls' ORDER BY indexname`,
    );
    await explainer.end();
    log('\nIndexes of calls and the reads above that used them:');
    for (const ix of indexes) {
      const users = [...(byIndex.get(ix.indexname) ?? [])];
      log(`  ${ix.indexname.padEnd(52)} ${users.length ? users.join('; ') : '-- NO READ ABOVE USED IT'}`);
    }
    log(seqScans ? `\n${seqScans} sequential scan(s) of calls.` : '\nNo sequential scan of calls.');
    log(`\nTimed (${load()}):`);
    for (const line of timed) log(line);
  } finally {
    await db.close();
    await target.drop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
