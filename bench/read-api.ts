// Read-side benchmark (not a test): `npm run bench:read`.
//
// Seeds a throwaway PostgreSQL database with one account holding a batch of 100k calls, 199
// smaller batches and a batch of 5,000 for the list pages (plus another account's calls, so the
// calls table is ~1M rows), then:
//   1. runs every read query shape once in-process and prints the scan nodes of its EXPLAIN ANALYZE
//      (a Seq Scan on calls is flagged);
//   2. starts the real server (src/main.ts, worker off) and measures each endpoint with autocannon
//      at 50 connections on loopback, through the REST facade and through /graphql directly with the
//      same operation document (alternating short runs), printing req/s, p50/p99, the server's CPU
//      per request and the REST/GraphQL ratios; then batch details at 1 and 10 connections;
//   3. the list pages against their bare bound: bench/bare-read-server.ts, a node:http process that
//      answers the same page with one SQL statement through `pg` and JSON.stringify (no auth, no
//      GraphQL). Its bytes are checked equal to the service's first; then service and bare alternate
//      short autocannon runs at 8 connections, and req/s of each, the ratio and the goal (0.7) print
//      side by side, with the load average. Pages: calls and results (limit 200) of the 5,000-call
//      batch, call records (page_size 200) and the batch list (limit 200). After the load part the
//      service is a fresh process, like the bare one; the calls page is then shown once more
//      against the process that served the load part (not judged: its CPU a page is 20-40 % higher).
// On a machine shared with other work, latency follows the machine's load; CPU per request and the
// ratios are the steadier figures.
//
// Environment:
//   BENCH_PG_URL            a server where databases may be created (postgresql://postgres@127.0.0.1:5432/postgres)
//   BENCH_PARTS             which parts run, of plans,load,bound (all three)
//   BENCH_SECONDS           per scenario and side (10), split into BENCH_ROUNDS alternating runs (3)
//   BENCH_CONNECTIONS       part 2 (50); BENCH_BOUND_CONNECTIONS part 3 (8)
//   BENCH_BOUND_PAGES       part 3's pages, of calls,results,records,list (all)
//   BENCH_BIG_CALLS (100000), BENCH_BATCHES (200), BENCH_CALLS_PER_BATCH (other batches, 100),
//   BENCH_PAGE_CALLS (the list pages' batch, 5000), BENCH_NOISE_CALLS (another account's, 880000)
//   BENCH_RATE_LIMIT_STORE  the server's RATE_LIMIT_STORE for the main runs (memory: the per-account
//                           budget is another module; one extra run shows batch details with the database store)
//   BENCH_SCENARIOS         part 2's scenarios whose names start with one of these, comma-separated (all)
//   BENCH_SERVER_FLAGS      extra node flags for the server, e.g. `--cpu-prof --cpu-prof-dir=prof`
// A quick run of the bound alone (~1.5 min): BENCH_PARTS=bound BENCH_SECONDS=4 BENCH_NOISE_CALLS=0 BENCH_BIG_CALLS=10000.
import { seedWithoutOutcomeCounts } from './outcome-counts.ts';
import { throwawayDatabase } from './throwaway-database.ts';
import { createMetrics } from '../src/metrics.ts';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase, type Database } from '../src/db/client.ts';
import { migrate } from '../src/db/migrate.ts';
import { systemClock, type AppDeps } from '../src/deps.ts';
import { createLogger } from '../src/logger.ts';
import { Prisma } from '../src/generated/prisma/client.ts';
import { createAccount } from '../src/services/accounts/accounts.ts';
import { outcomeTotal, outcomeWhere } from '../src/services/batches/batch-results.ts';
import { addDidNumber, createAgent, createPromptVersion } from '../src/services/accounts/catalog.ts';
import { SERVER_NODE_FLAGS } from './server-flags.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const BASE_URL = process.env.BENCH_PG_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const SECONDS = env('BENCH_SECONDS', 10);
const CONNECTIONS = env('BENCH_CONNECTIONS', 50);
const BIG_CALLS = env('BENCH_BIG_CALLS', 100_000);
const BATCHES = env('BENCH_BATCHES', 200);
const CALLS_PER_BATCH = env('BENCH_CALLS_PER_BATCH', 100);
const NOISE_CALLS = env('BENCH_NOISE_CALLS', 880_000);
const RATE_LIMIT_STORE = process.env.BENCH_RATE_LIMIT_STORE ?? 'memory';
const SERVER_FLAGS = (process.env.BENCH_SERVER_FLAGS ?? '').split(/\s+/).filter(Boolean);
const SCENARIOS = (process.env.BENCH_SCENARIOS ?? '')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
/** The load part's batch-details scenario, which gets the runs and targets of detailsSection. */
const DETAILS = 'batch details';
/** Below this many requests a second an endpoint gets one long run, and no REST/GraphQL comparison. */
const SLOW_RPS = 20;
const PARTS = new Set((process.env.BENCH_PARTS ?? 'plans,load,bound').split(',').map((p) => p.trim()));
const BOUND_PAGES = new Set((process.env.BENCH_BOUND_PAGES ?? 'calls,results,records,list').split(',').map((p) => p.trim()));
const BOUND_CONNECTIONS = env('BENCH_BOUND_CONNECTIONS', 8);
const PAGE_CALLS = env('BENCH_PAGE_CALLS', 5000);
/** The service's list pages must answer at least this share of the bare bound's req/s (issue 17). */
const BOUND_GOAL = 0.7;
const APP_SECRET = 'bench-app-secret-0123456789abcdef0123456789';

const log = (msg: string) => process.stdout.write(msg + '\n');
const ms = (t0: number) => `${((performance.now() - t0) / 1000).toFixed(1)} s`;

// ---------------------------------------------------------------------------------------------
// Database

interface Seeded {
  apiKey: string;
  accountId: string;
  agentId: string;
  bigBatchId: string;
  /** The list pages' batch (PAGE_CALLS calls). */
  pageBatchId: string;
  /** UTC day of the big batch, for call records. */
  day: string;
}

/**
 * Calls of batches [first, last] of `account`, in one INSERT … SELECT over generate_series.
 * Statuses, transcripts and outcomes follow a realistic mix for a mostly finished campaign.
 */
function insertCallsSql(transcriptChars: number): string {
  return `
  INSERT INTO calls (id, account_id, batch_id, agent_id, prompt_version_id, seq, external_id, name, phone_number, metadata,
                     status, transcript_status, duration_seconds, answer_duration_seconds, timestamp, created_at, updated_at,
                     completed_at, hangup_by, disconnect_reason, summary, outcomes, recording_available, llm_transcript, attempts)
  SELECT 'call_' || b.id_key || lpad(g::text, 8, '0'), b.account_id, b.id, b.agent_id, b.prompt_version_id, g,
         'crm-' || g, 'Contact ' || g, '+1415' || lpad((g % 10000000)::text, 7, '0'),
         jsonb_build_object('first_name', 'Contact', 'plan', CASE WHEN g % 2 = 0 THEN 'pro' ELSE 'basic' END),
         s.status,
         CASE WHEN s.status = 'completed' THEN (CASE WHEN g % 20 = 0 THEN 'processing' WHEN g % 20 = 1 THEN 'failed' ELSE 'ready' END)
              WHEN s.status = 'in_progress' THEN 'pending' END,
         CASE WHEN s.finished THEN CASE WHEN s.status = 'completed' THEN 30 + g % 240 ELSE 0 END END,
         CASE WHEN s.status = 'completed' THEN 25 + g % 240 END,
         CASE WHEN s.dialled THEN b.created_at + make_interval(secs => g % 86400) END,
         b.created_at, b.created_at,
         CASE WHEN s.finished THEN b.created_at + make_interval(secs => g % 86400 + 300) END,
         CASE WHEN s.status = 'completed' THEN (CASE WHEN g % 3 = 0 THEN 'user' ELSE 'agent' END) WHEN s.finished THEN 'system' END,
         CASE WHEN s.status = 'completed' THEN (CASE WHEN g % 3 = 0 THEN 'normal' ELSE 'agent_hangup' END) WHEN s.finished THEN s.status END,
         CASE WHEN s.status = 'completed' THEN 'The contact ' || CASE WHEN g % 3 = 0 THEN 'asked for a demo next week' ELSE 'is not interested right now' END || '.' END,
         CASE WHEN s.status = 'completed' THEN jsonb_build_object(
              'interested', CASE WHEN g % 3 = 0 THEN 'yes' ELSE 'no' END,
              'callback_requested', CASE WHEN g % 7 = 0 THEN 'yes' ELSE 'no' END,
              'sentiment', (ARRAY['positive', 'neutral', 'negative'])[1 + g % 3]) END,
         CASE WHEN s.status = 'completed' THEN true WHEN s.finished THEN false END,
         CASE WHEN s.status = 'completed' THEN left(repeat('Agent: Hello, this is Ava from Acme, am I speaking with contact ' || g ||
              '? User: Yes, speaking. Agent: We are offering a short product demo, would you like to book one? User: ' ||
              CASE WHEN g % 3 = 0 THEN 'Sure, next Tuesday works. ' ELSE 'No thanks, not now. ' END, 8), ${transcriptChars}) END,
         CASE WHEN s.dialled THEN 1 ELSE 0 END
  FROM batches b
  CROSS JOIN LATERAL generate_series(1, b.accepted_contacts) g
  CROSS JOIN LATERAL (
    SELECT st AS status, st NOT IN ('pending', 'queued') AS dialled, st IN ('completed', 'failed', 'no_answer', 'busy') AS finished
    FROM (SELECT CASE
      WHEN g % 100 < 70 THEN 'completed' WHEN g % 100 < 80 THEN 'no_answer' WHEN g % 100 < 85 THEN 'busy'
      WHEN g % 100 < 90 THEN 'failed' WHEN g % 100 < 95 THEN 'queued' WHEN g % 100 < 98 THEN 'pending'
      ELSE 'in_progress' END AS st) x
  ) s
  WHERE b.account_id = $1 AND b.id_key BETWEEN $2 AND $3`;
}

async function seed(db: Database): Promise<Seeded> {
  const t0 = performance.now();
  // The account's request budget must not be what the benchmark measures.
  const { account, apiKey } = await createAccount(db, {
    name: 'Bench Co',
    email: 'bench@example.com',
    voices: ['alloy', 'verse'],
    limits: { rateLimitPerMinute: 2_000_000_000 },
  });
  const agent = await createAgent(db, account, {
    name: 'Sales Agent',
    voice: 'alloy',
    outcomeKeys: ['interested', 'callback_requested', 'sentiment'],
  });
  const version = await createPromptVersion(db, account, { agentId: agent.id, name: 'v1', prompt: 'Offer a demo.' });
  await addDidNumber(db, account, '+14155550100');
  const { account: noise } = await createAccount(db, { name: 'Other Co', email: 'other@example.com', voices: ['alloy'] });
  const noiseAgent = await createAgent(db, noise, { name: 'Other Agent', voice: 'alloy' });
  const noiseVersion = await createPromptVersion(db, noise, { agentId: noiseAgent.id, name: 'v1', prompt: 'Hi.' });

  const client = new pg.Client({ connectionString: db.url });
  client.on('error', () => {});
  await client.connect();
  try {
    return await seedRows(
      db,
      client,
      {
        accountId: account.id,
        apiKey,
        agentId: agent.id,
        versionId: version.id,
        noiseId: noise.id,
        noiseAgentId: noiseAgent.id,
        noiseVersionId: noiseVersion.id,
      },
      t0,
    );
  } finally {
    await client.end().catch(() => {});
  }
}

async function seedRows(
  db: Database,
  client: pg.Client,
  ids: { accountId: string; apiKey: string; agentId: string; versionId: string; noiseId: string; noiseAgentId: string; noiseVersionId: string },
  t0: number,
): Promise<Seeded> {
  // A scratch column keeps generated ids ordered and lets one INSERT address a range of batches.
  await client.query(`ALTER TABLE batches ADD COLUMN id_key text`);
  const now = Date.now();
  const insertBatches = `
    INSERT INTO batches (id, id_key, account_id, agent_id, prompt_version_id, status, start_mode, scheduled_at, timezone,
                         concurrency, voice, interruption, use_alternate_number, recording_enabled, max_duration_seconds,
                         deduplicate_by_phone, total_contacts, accepted_contacts, rejected_contacts, created_at, updated_at, started_at)
    SELECT 'sched_' || $2 || lpad(k::text, 6, '0'), $2 || lpad(k::text, 6, '0'), $1, $3, $4,
           CASE WHEN k = $6::int THEN 'running' WHEN k % 10 = 0 THEN 'cancelled' WHEN k % 3 = 0 THEN 'running' ELSE 'completed' END,
           'immediate', to_timestamp($7 / 1000.0) - make_interval(hours => ($6 - k)),
           'America/New_York', 10, 'alloy', true, false, true, 600, false,
           CASE WHEN k = $6 THEN $8::int ELSE $9::int END, CASE WHEN k = $6 THEN $8::int ELSE $9::int END, 0,
           to_timestamp($7 / 1000.0) - make_interval(hours => ($6 - k)), now(), to_timestamp($7 / 1000.0) - make_interval(hours => ($6 - k))
    FROM generate_series(1, $5::int) k`;
  // Target account: batches 1..BATCHES, the last (newest) is the big one.
  await client.query(insertBatches, [ids.accountId, 'a', ids.agentId, ids.versionId, BATCHES, BATCHES, now, BIG_CALLS, CALLS_PER_BATCH]);
  const noiseBatches = Math.max(1, Math.ceil(NOISE_CALLS / 1000));
  if (NOISE_CALLS > 0) {
    await client.query(insertBatches, [ids.noiseId, 'n', ids.noiseAgentId, ids.noiseVersionId, noiseBatches, noiseBatches, now, 1000, 1000]);
  }
  log(`  batches inserted (${ms(t0)})`);

  // Inserted with the outcome counters' trigger off and counted after (bench/outcome-counts.ts).
  await seedWithoutOutcomeCounts(
    (sql) => client.query(sql),
    async () => {
      // Chunks keep each statement's memory modest; the big batch goes in 4 pieces by id range.
      await client.query(insertCallsSql(1400), [ids.accountId, 'a' + String(BATCHES).padStart(6, '0'), 'a' + String(BATCHES).padStart(6, '0')]);
      log(`  big batch: ${BIG_CALLS} calls (${ms(t0)})`);
      await client.query(insertCallsSql(1400), [ids.accountId, 'a000001', 'a' + String(BATCHES - 1).padStart(6, '0')]);
      log(`  ${BATCHES - 1} other batches: ${(BATCHES - 1) * CALLS_PER_BATCH} calls (${ms(t0)})`);
      // The list pages' batch, an hour older than the big one (same day for call records, mostly).
      await client.query(insertBatches, [ids.accountId, 'p', ids.agentId, ids.versionId, 1, 1, now - 3_600_000, PAGE_CALLS, PAGE_CALLS]);
      await client.query(insertCallsSql(1400), [ids.accountId, 'p000001', 'p000001']);
      log(`  list-page batch: ${PAGE_CALLS} calls (${ms(t0)})`);
      for (let from = 1; NOISE_CALLS > 0 && from <= noiseBatches; from += 100) {
        const to = Math.min(noiseBatches, from + 99);
        await client.query(insertCallsSql(200), [ids.noiseId, 'n' + String(from).padStart(6, '0'), 'n' + String(to).padStart(6, '0')]);
      }
      if (NOISE_CALLS > 0) log(`  other account: ${noiseBatches * 1000} calls (${ms(t0)})`);
    },
  );

  // Counters exactly as the worker keeps them (the mapping in docs/dispatch.md).
  await client.query(`
    UPDATE batches b SET queued = c.q, in_progress = c.ip, completed = c.done, failed = c.f, cancelled = c.x
    FROM (SELECT batch_id,
                 count(*) FILTER (WHERE status IN ('pending', 'queued'))::int AS q,
                 count(*) FILTER (WHERE status IN ('ringing', 'answered', 'in_progress'))::int AS ip,
                 count(*) FILTER (WHERE status = 'completed')::int AS done,
                 count(*) FILTER (WHERE status IN ('failed', 'no_answer', 'busy'))::int AS f,
                 count(*) FILTER (WHERE status = 'cancelled')::int AS x
          FROM calls GROUP BY batch_id) c
    WHERE b.id = c.batch_id`);
  await client.query(`ALTER TABLE batches DROP COLUMN id_key`);
  await client.query('VACUUM ANALYZE');
  // The seed's ~1 GB of WAL would otherwise be written back by a spread checkpoint during the
  // first minutes of measuring (batch details, the first scenario, paid for it).
  await client
    .query('CHECKPOINT')
    .catch((e: Error) => log(`  CHECKPOINT refused (${e.message}): the first scenarios may share the machine with its write-back`));
  const { rows } = await client.query(`SELECT (SELECT count(*) FROM calls)::int AS calls, pg_size_pretty(pg_total_relation_size('calls')) AS size`);
  log(`  counters, VACUUM ANALYZE, CHECKPOINT done: ${rows[0].calls} calls, calls table + indexes ${rows[0].size} (${ms(t0)})`);

  const bigBatchId = `sched_a${String(BATCHES).padStart(6, '0')}`;
  const big = await db.prisma.batch.findUniqueOrThrow({ where: { id: bigBatchId } });
  return {
    apiKey: ids.apiKey,
    accountId: ids.accountId,
    agentId: ids.agentId,
    bigBatchId,
    pageBatchId: 'sched_p000001',
    day: big.createdAt.toISOString().slice(0, 10),
  };
}

// ---------------------------------------------------------------------------------------------
// Scenarios: the same data through REST and through /graphql with the route's own document.

interface Scenario {
  name: string;
  rest: string;
  operation: string;
  variables: Record<string, unknown>;
}

function scenarios(s: Seeded): Scenario[] {
  const b = s.bigBatchId;
  return [
    { name: DETAILS, rest: `/api/v1/public/call-batches/${b}`, operation: 'RestBatch', variables: { id: b } },
    {
      name: 'calls page (200)',
      rest: `/api/v1/public/call-batches/${b}/calls?limit=200`,
      operation: 'RestBatchCalls',
      variables: { batchId: b, filter: {}, limit: 200 },
    },
    {
      name: 'calls page (200) deep, page 250',
      rest: `/api/v1/public/call-batches/${b}/calls?limit=200&page=250`,
      operation: 'RestBatchCalls',
      variables: { batchId: b, filter: {}, page: 250, limit: 200 },
    },
    {
      name: 'results ?status&transcript_status',
      rest: `/api/v1/public/call-batches/${b}/results?status=completed&transcript_status=ready`,
      operation: 'RestBatchResults',
      variables: { batchId: b, filter: { status: 'completed', transcriptStatus: 'ready' } },
    },
    {
      name: 'results ?outcome=yes',
      rest: `/api/v1/public/call-batches/${b}/results?outcome=yes`,
      operation: 'RestBatchResults',
      variables: { batchId: b, filter: { outcome: 'yes' } },
    },
    {
      name: 'call records page (50)',
      rest: `/api/v1/public/call-records?start_date=${s.day}&end_date=${s.day}`,
      operation: 'RestCallRecords',
      variables: { filter: { startDate: s.day, endDate: s.day } },
    },
    {
      name: 'batch list (50)',
      rest: `/api/v1/public/call-batches?status=active`,
      operation: 'RestBatches',
      variables: { filter: { status: 'active' } },
    },
  ];
}

const OPERATIONS_TEXT = fs.readFileSync(path.join(ROOT, 'src/rest/operations/batches-read.graphql'), 'utf8');

// ---------------------------------------------------------------------------------------------
// EXPLAIN: every statement a scenario sends, with its real parameters.

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

function scans(node: PlanNode, out: string[] = []): string[] {
  const rel = node['Relation Name'];
  if (rel === 'calls' || rel === 'batches') {
    // batches holds a few hundred rows per account: a sequential scan there is the planner being right.
    const flag = node['Node Type'] === 'Seq Scan' && rel === 'calls' ? '  <-- SEQ SCAN' : '';
    out.push(`${node['Node Type']} on ${rel}${node['Index Name'] ? ` using ${node['Index Name']}` : ''}${flag}`);
  } else if (node['Node Type'] === 'Bitmap Index Scan' && node['Index Name']) {
    out.push(`Bitmap Index Scan using ${node['Index Name']}`);
  }
  for (const child of node.Plans ?? []) scans(child, out);
  return out;
}

/** Issue 35's bound for the results' `?outcome=` total over the 100k-call batch. */
const OUTCOME_TOTAL_BOUND_MS = 20;

/**
 * The `?outcome=` total over the big batch as the page now reads it (the outcome counters), beside
 * the count of the batch's calls it replaced (a sequential scan on this seed), medians of 9
 * alternating runs after one each; the two must agree.
 */
async function timeOutcomeTotal(db: Database, s: Seeded): Promise<string> {
  const deps = { db };
  const filter = { outcome: 'yes' };
  const counted = Prisma.sql`SELECT count(*)::int AS n FROM calls c WHERE ${outcomeWhere(s.bigBatchId, filter)}`;
  const counters: number[] = [];
  const scans: number[] = [];
  let total = 0;
  let exact = 0;
  for (let i = 0; i < 10; i++) {
    let t0 = performance.now();
    total = await outcomeTotal(deps, s.bigBatchId, filter);
    if (i > 0) counters.push(performance.now() - t0);
    t0 = performance.now();
    exact = (await db.pool!.query<{ n: number }>(counted.text, counted.values)).rows[0].n;
    if (i > 0) scans.push(performance.now() - t0);
  }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const ms = med(counters);
  log(
    `\n?outcome=yes total over the ${BIG_CALLS.toLocaleString('en-US')}-call batch (median of 9, load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(', ')}): ` +
      `${ms.toFixed(2)} ms from the counters beside the bound of < ${OUTCOME_TOTAL_BOUND_MS} ms; counting the batch's calls ${med(scans).toFixed(2)} ms; total ${total}${total === exact ? ' = ' : ' DIFFERS FROM '}the count ${exact}`,
  );
  return `  ?outcome= total < ${OUTCOME_TOTAL_BOUND_MS} ms (and exact):       ${ms.toFixed(2)} ms beside ${OUTCOME_TOTAL_BOUND_MS} ms  ${ms < OUTCOME_TOTAL_BOUND_MS && total === exact ? 'met' : 'MISSED'}`;
}

async function explainAll(db: Database, s: Seeded, list: Scenario[]): Promise<boolean> {
  const config = loadConfig({ LOG_LEVEL: 'silent', APP_SECRET, RUN_WORKER: 'false', DATABASE_URL: db.url });
  const deps: AppDeps = { config, db, logger: createLogger('silent'), clock: systemClock, appSecret: APP_SECRET, metrics: createMetrics(db) };
  const app = buildApp(deps);
  const pool = db.pool!;
  const captured: { text: string; values: unknown[] }[] = [];
  const original = pool.query.bind(pool) as (...a: unknown[]) => Promise<unknown>;
  (pool as unknown as { query: unknown }).query = (...args: unknown[]) => {
    // Prisma's adapter passes a query object; the raw statements (src/db/sql-statement.ts) text and values.
    const q = args[0] as string | { text?: string; values?: unknown[] };
    if (typeof q === 'string') captured.push({ text: q, values: (args[1] as unknown[] | undefined) ?? [] });
    else if (q && typeof q === 'object' && q.text) captured.push({ text: q.text, values: q.values ?? [] });
    return original(...args);
  };
  const extra: Scenario[] = [
    // Filters the timed runs don't exercise, so every index is shown.
    { name: 'calls ?status', rest: `/api/v1/public/call-batches/${s.bigBatchId}/calls?status=no_answer&limit=200`, operation: '', variables: {} },
    { name: 'calls ?external_id', rest: `/api/v1/public/call-batches/${s.bigBatchId}/calls?external_id=crm-77777`, operation: '', variables: {} },
    {
      name: 'results ?outcome&status&transcript',
      rest: `/api/v1/public/call-batches/${s.bigBatchId}/results?outcome=yes&status=completed&transcript_status=processing`,
      operation: '',
      variables: {},
    },
    {
      name: 'call records ?agent_id',
      rest: `/api/v1/public/call-records?start_date=2000-01-01&end_date=2100-01-01&agent_id=${s.agentId}&page=3`,
      operation: '',
      variables: {},
    },
    {
      name: 'call records ?agent_id x2',
      rest: `/api/v1/public/call-records?start_date=2000-01-01&end_date=2100-01-01&agent_id=${s.agentId}&agent_id=agt-none`,
      operation: '',
      variables: {},
    },
    {
      name: 'batch list ?agent_id&created_at',
      rest: `/api/v1/public/call-batches?agent_id=${s.agentId}&created_at_from=2000-01-01T00:00:00Z&created_at_to=2100-01-01T00:00:00%2B02:00`,
      operation: '',
      variables: {},
    },
    { name: 'batch list ?status=completed', rest: `/api/v1/public/call-batches?status=completed&page=2`, operation: '', variables: {} },
  ];
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  let seqScans = 0;
  log('\nQuery plans (EXPLAIN ANALYZE of each statement the endpoint sends; auth lookups omitted):');
  for (const sc of [...list, ...extra]) {
    captured.length = 0;
    const res = await app.fetch(new Request(`http://bench.local${sc.rest}`, { headers: { authorization: `Bearer ${s.apiKey}` } }));
    if (res.status !== 200) throw new Error(`${sc.rest} answered ${res.status}: ${await res.text()}`);
    await res.arrayBuffer();
    log(`  ${sc.name}:`);
    for (const stmt of captured) {
      if (!/"?(calls|batches)"?/.test(stmt.text) || /api_keys|accounts/.test(stmt.text)) continue;
      const { rows } = await client.query({ text: `EXPLAIN (ANALYZE, FORMAT JSON) ${stmt.text}`, values: stmt.values as unknown[] });
      const plan = rows[0]['QUERY PLAN'][0] as { Plan: PlanNode; 'Execution Time': number };
      const found = scans(plan.Plan);
      seqScans += found.filter((f) => f.includes('SEQ SCAN')).length;
      const what = stmt.text
        .replace(/"public"\./g, '')
        .replace(/SELECT .*? FROM/, 'SELECT … FROM')
        .slice(0, 70);
      log(`    ${plan['Execution Time'].toFixed(2).padStart(7)} ms  ${found.join('; ') || '(no table scan)'}   [${what}…]`);
    }
  }
  (pool as unknown as { query: unknown }).query = original;
  await client.end();
  await app.stop();
  log(seqScans ? `\n${seqScans} sequential scan(s) on calls.` : '\nNo sequential scans on calls.');
  return seqScans === 0;
}

// ---------------------------------------------------------------------------------------------
// Load

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

async function startServer(url: string, rateLimitStore: string): Promise<{ base: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, ...SERVER_FLAGS, '--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: url,
      PORT: String(port),
      HOST: '127.0.0.1',
      RUN_WORKER: 'false',
      SEED_DEMO: 'false',
      MIGRATE_ON_START: 'false',
      LOG_LEVEL: 'warn',
      APP_SECRET,
      RATE_LIMIT_STORE: rateLimitStore,
      // The outcome scenario measures the read at 50 connections, not its limit of 2 at once (docs/api.md).
      OUTCOME_READS_PER_ACCOUNT: '1000',
      OUTCOME_READS_PER_PROCESS: '1000',
      NODE_ENV: 'production',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(`${base}/healthz`)).ok) return { base, child };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGTERM');
  throw new Error('server did not start');
}

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** Mean response size, bytes. */
  bytes: number;
  /** Server process CPU per request, ms (user + system): steadier than latency on a shared machine. */
  cpuMs: number;
}

/** utime + stime of a process, ms (Linux /proc; clock ticks of 10 ms). */
function cpuMsOf(pid: number): number {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return NaN;
  }
}

async function run(pid: number, opts: autocannon.Options) {
  const c0 = cpuMsOf(pid);
  const r = await autocannon({ connections: CONNECTIONS, duration: SECONDS, timeout: 60, ...opts });
  return { r, cpu: cpuMsOf(pid) - c0 };
}

/** Waits until the server answers a probe quickly again, so one run's backlog doesn't bleed into the next. */
async function drain(url: string, headers: Record<string, string>) {
  const until = Date.now() + 60_000;
  let fast = 0;
  while (Date.now() < until && fast < 3) {
    const t0 = performance.now();
    await fetch(url, { headers })
      .then((r) => r.arrayBuffer())
      .catch(() => undefined);
    fast = performance.now() - t0 < 50 ? fast + 1 : 0;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * REST and GraphQL alternate in ROUNDS short runs each (the machine's other load shifts over time,
 * and both surfaces should see the same share of it). Requests and CPU add up; p50 is the median of
 * the runs', p99 the worst run's.
 */
const ROUNDS = env('BENCH_ROUNDS', 3);

function combine(runs: Awaited<ReturnType<typeof run>>[]): Figures {
  const requests = runs.reduce((n, x) => n + x.r.requests.total, 0);
  const seconds = runs.reduce((n, x) => n + x.r.duration, 0);
  const p50s = runs.map((x) => x.r.latency.p50).sort((a, b) => a - b);
  return {
    rps: requests / seconds,
    p50: p50s[Math.floor(p50s.length / 2)],
    p99: Math.max(...runs.map((x) => x.r.latency.p99)),
    errors: runs.reduce((n, x) => n + x.r.errors + x.r.timeouts + x.r.non2xx, 0),
    bytes: runs.reduce((n, x) => n + x.r.throughput.total, 0) / Math.max(1, requests),
    cpuMs: runs.reduce((n, x) => n + x.cpu, 0) / Math.max(1, requests),
  };
}

async function compare(pid: number, rest: autocannon.Options, gql: autocannon.Options, probe: () => Promise<void>, rounds = ROUNDS) {
  const both = await alternate(
    [
      { pid, opts: rest },
      { pid, opts: gql },
    ],
    probe,
    rounds,
  );
  return { rest: both[0], gql: both[1] };
}

/** Short runs of each target in turn, the order flipping every round; each target's runs combined. */
async function alternate(
  targets: { pid: number; opts: autocannon.Options }[],
  probe: () => Promise<void>,
  rounds: number,
  seconds = SECONDS,
): Promise<Figures[]> {
  const acc = targets.map(() => [] as Awaited<ReturnType<typeof run>>[]);
  const duration = Math.max(2, Math.round(seconds / rounds));
  for (let round = 0; round < rounds; round++) {
    const order = targets.map((_, i) => i);
    if (round % 2) order.reverse();
    for (const i of order) {
      acc[i].push(await run(targets[i].pid, { ...targets[i].opts, duration }));
      await probe();
    }
  }
  return acc.map(combine);
}

// ---------------------------------------------------------------------------------------------
// The list pages against their bare bound (bench/bare-read-server.ts).

interface BoundPage {
  key: string;
  name: string;
  path: string;
}

function boundPages(s: Seeded): BoundPage[] {
  const b = s.pageBatchId;
  return [
    { key: 'calls', name: `calls page (200 of ${PAGE_CALLS})`, path: `/api/v1/public/call-batches/${b}/calls?limit=200` },
    { key: 'results', name: `results page (200 of ${PAGE_CALLS})`, path: `/api/v1/public/call-batches/${b}/results?limit=200` },
    { key: 'records', name: 'call records page (200)', path: `/api/v1/public/call-records?start_date=${s.day}&end_date=${s.day}&page_size=200` },
    { key: 'list', name: 'batch list (200)', path: `/api/v1/public/call-batches?limit=200` },
  ].filter((p) => BOUND_PAGES.has(p.key));
}

async function stopServer(child: ChildProcess): Promise<void> {
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
}

async function startBare(url: string, accountId: string, publicUrl: string): Promise<{ base: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, '--import', 'tsx', 'bench/bare-read-server.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      BARE_DATABASE_URL: url,
      BARE_ACCOUNT_ID: accountId,
      BARE_PUBLIC_URL: publicUrl,
      BARE_APP_SECRET: APP_SECRET,
      PORT: String(port),
      NODE_ENV: 'production',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    try {
      await fetch(`${base}/`);
      return { base, child };
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  child.kill('SIGTERM');
  throw new Error('bare server did not start');
}

/** The service's and the bare server's bodies for one page, fetched back to back (the signed links' expiry moves each minute). */
async function sameBytes(service: string, bare: string, headers: Record<string, string>): Promise<string> {
  let why = '';
  for (let attempt = 0; attempt < 3; attempt++) {
    const [a, b] = [await (await fetch(service, { headers })).text(), await (await fetch(bare)).text()];
    if (a === b) return '';
    let i = 0;
    while (i < a.length && a[i] === b[i]) i++;
    why = `differ at byte ${i} of ${a.length}/${b.length}: service …${a.slice(Math.max(0, i - 40), i + 40)}… bare …${b.slice(Math.max(0, i - 40), i + 40)}…`;
  }
  return why;
}

async function boundSection(
  dbUrl: string,
  s: Seeded,
  service: { base: string; child: ChildProcess },
  auth: Record<string, string>,
  pages: BoundPage[],
  which: string,
): Promise<string[]> {
  const bare = await startBare(dbUrl, s.accountId, service.base);
  const targets: string[] = [];
  try {
    log(
      `\nList pages against the bare bound, ${which} (${BOUND_CONNECTIONS} connections, ${SECONDS} s per side in ${ROUNDS} alternating runs; bare: node:http + pg, one statement, JSON.stringify):`,
    );
    log(
      `  ${'page'.padEnd(30)} ${'service'.padStart(8)} ${'bare'.padStart(8)} ${'ratio'.padStart(6)} ${'goal'.padStart(5)}  ${'CPU ms/req svc'.padStart(14)} ${'bare'.padStart(6)}  ${'p50 svc/bare ms'.padStart(15)}  ${'KB'.padStart(6)}  errors  bytes  load`,
    );
    const probe = () => drain(service.base + pages[0].path, auth);
    for (const page of pages) {
      const svc = { pid: service.child.pid!, opts: { url: service.base + page.path, headers: auth, connections: BOUND_CONNECTIONS } };
      const raw = { pid: bare.child.pid!, opts: { url: bare.base + page.path, connections: BOUND_CONNECTIONS } };
      const differs = await sameBytes(svc.opts.url, raw.opts.url, auth);
      await run(svc.pid, { ...svc.opts, duration: 2 });
      await run(raw.pid, { ...raw.opts, duration: 2 });
      await probe();
      const [a, b] = await alternate([svc, raw], probe, ROUNDS);
      const ratio = a.rps / b.rps;
      const met = ratio >= BOUND_GOAL;
      log(
        `  ${page.name.padEnd(30)} ${a.rps.toFixed(0).padStart(8)} ${b.rps.toFixed(0).padStart(8)} ${ratio.toFixed(2).padStart(6)} ${BOUND_GOAL.toFixed(2).padStart(5)}  ` +
          `${a.cpuMs.toFixed(2).padStart(14)} ${b.cpuMs.toFixed(2).padStart(6)}  ${`${a.p50}/${b.p50}`.padStart(15)}  ${(a.bytes / 1024).toFixed(1).padStart(6)}  ` +
          `${String(a.errors + b.errors).padStart(6)}  ${(differs ? 'DIFFER' : 'same').padEnd(5)}  ${os.loadavg()[0].toFixed(1)}`,
      );
      if (differs) log(`    ${differs}`);
      targets.push(`  ${`${page.name} >= ${BOUND_GOAL} of bare:`.padEnd(41)} ${ratio.toFixed(2)}  ${met && !differs ? 'met' : 'MISSED'}`);
    }
  } finally {
    await stopServer(bare.child);
  }
  return targets;
}

async function loadSection(
  dbUrl: string,
  seeded: Seeded,
  list: Scenario[],
  started: { base: string; child: ChildProcess },
  auth: Record<string, string>,
): Promise<string[]> {
  const server = started.child;
  log(`\nLoad (${CONNECTIONS} connections, ${SECONDS} s each, server: node src/main.ts, worker off, pool 10, RATE_LIMIT_STORE=${RATE_LIMIT_STORE}):`);
  log(
    `  ${'scenario'.padEnd(36)} ${'surface'.padEnd(8)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'CPU ms/req'.padStart(8)} ${'KB/resp'.padStart(8)} ${'errors'.padStart(6)}  REST/GraphQL`,
  );
  const summary: { name: string; rest: Figures; gql: Figures }[] = [];
  const probe = () => drain(started.base + list[0].rest, auth);
  const row = (name: string, surface: string, f: Figures, ratio = '') =>
    log(
      `  ${name.padEnd(36)} ${surface.padEnd(8)} ${f.rps.toFixed(0).padStart(8)} ${String(f.p50).padStart(7)} ${String(f.p99).padStart(7)} ` +
        `${(f.rps > 0 ? f.cpuMs.toFixed(2) : '-').padStart(8)} ${(f.bytes / 1024).toFixed(1).padStart(8)} ${String(f.errors).padStart(6)}  ${ratio}`,
    );
  for (const sc of list) {
    const restOpts: autocannon.Options = { url: started.base + sc.rest, headers: auth };
    const gqlOpts: autocannon.Options = {
      url: `${started.base}/graphql`,
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ query: OPERATIONS_TEXT, operationName: sc.operation, variables: sc.variables }),
    };
    // Warm both paths (JIT, Yoga's parse/validate caches, PostgreSQL buffers).
    const warm = await run(server.pid!, { ...restOpts, duration: 3 });
    await run(server.pid!, { ...gqlOpts, duration: 3 });
    await probe();
    // An endpoint answering a few requests a second has responses seconds long: short
    // alternating runs would end before most of them complete, so it gets one long run each.
    const rounds = warm.r.requests.average < SLOW_RPS ? 1 : ROUNDS;
    const { rest, gql } = await compare(server.pid!, restOpts, gqlOpts, probe, rounds);
    summary.push({ name: sc.name, rest, gql });
    const ratio = (a: number, b: number) => (a > 0 && b > 0 ? (a / b).toFixed(2) : '-');
    row(sc.name, 'REST', rest, `req/s ${ratio(rest.rps, gql.rps)}, CPU/req ${ratio(rest.cpuMs, gql.cpuMs)}`);
    row('', 'GraphQL', gql);
  }
  // An endpoint the database holds to a few requests a second (the outcome filter) says nothing of
  // the facade: one request more or less on either side is a swing of tens of percent.
  const measured = summary.filter((s) => s.rest.rps >= SLOW_RPS && s.gql.rps >= SLOW_RPS);
  const slow = summary.filter((s) => !measured.includes(s)).map((s) => s.name);
  const overheads = measured.map((s) => 1 - s.rest.rps / s.gql.rps);
  const cpuOverheads = measured.map((s) => s.rest.cpuMs / s.gql.cpuMs - 1);
  const worst = overheads.length ? Math.max(...overheads) : NaN;
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  const targets = [
    `  REST facade overhead < 20% vs GraphQL:   req/s worst ${(worst * 100).toFixed(1)}%, mean ${(mean(overheads) * 100).toFixed(1)}% fewer; ` +
      `server CPU/req worst ${(Math.max(...cpuOverheads) * 100).toFixed(1)}%, mean ${(mean(cpuOverheads) * 100).toFixed(1)}% more  ` +
      `${worst < 0.2 ? 'met' : 'MISSED'}${slow.length ? ` (not counted, under ${SLOW_RPS} req/s: ${slow.join(', ')})` : ''}`,
  ];
  const details = summary.find((s) => s.name === DETAILS);
  if (details) targets.unshift(...(await detailsSection(dbUrl, started, list.find((s) => s.name === DETAILS)!.rest, auth, details.rest, row, probe)));
  return targets;
}

/** Batch details beyond the load part's run: below saturation, and with the database rate-limit store. */
async function detailsSection(
  dbUrl: string,
  started: { base: string; child: ChildProcess },
  path: string,
  auth: Record<string, string>,
  loaded: Figures,
  row: (name: string, surface: string, f: Figures) => void,
  probe: () => Promise<void>,
): Promise<string[]> {
  // The same endpoint below saturation: what a request costs end to end, without the queue.
  for (const connections of [1, 10]) {
    const opts = { url: started.base + path, headers: auth, connections };
    const rest = combine([await run(started.child.pid!, opts)]);
    await probe();
    row(`batch details, ${connections} connection${connections > 1 ? 's' : ''}`, 'REST', rest);
  }
  let dbStore: Figures | undefined;
  if (RATE_LIMIT_STORE !== 'database') {
    // Its own server, stopped here: the main one keeps serving the other parts.
    const other = await startServer(dbUrl, 'database');
    try {
      const opts = { url: other.base + path, headers: auth };
      await run(other.child.pid!, { ...opts, duration: 2 });
      await drain(other.base + path, auth);
      dbStore = combine([await run(other.child.pid!, opts)]);
      // Its last requests answered before it stops (a stopped pool would fail them, noisily).
      await drain(other.base + path, auth);
      row('batch details, RATE_LIMIT_STORE=database', 'REST', dbStore);
    } finally {
      await stopServer(other.child);
    }
    await probe();
  }
  const targets = [
    `  batch details p99 < 25 ms at ${CONNECTIONS} connections (REST): ${loaded.p99} ms beside 25 ms  ${loaded.p99 < 25 ? 'met' : 'MISSED'}`,
    // What that p99 needs of the server (issue 17); steadier than latency when other work shares the machine.
    `  batch details CPU per request <= 0.30 ms:  ${loaded.cpuMs.toFixed(2)} ms beside 0.30 ms  ${loaded.cpuMs <= 0.3 ? 'met' : 'MISSED'}`,
  ];
  if (dbStore)
    targets.push(
      `  (with the database rate-limit store batch details p99 is ${dbStore.p99} ms at ${dbStore.rps.toFixed(0)} req/s, ${dbStore.cpuMs.toFixed(2)} ms CPU per request)`,
    );
  return targets;
}

async function main() {
  log(
    `Read API benchmark: PostgreSQL ${BASE_URL.replace(/\/\/[^@]*@/, '//')}, ${CONNECTIONS} connections, ${SECONDS} s per run, parts ${[...PARTS].join(',')}`,
  );
  const dbHandle = await throwawayDatabase(BASE_URL, 'cbs_bench');
  let db: Database | undefined;
  let server: ChildProcess | undefined;
  try {
    db = await openDatabase({ databaseUrl: dbHandle.url, poolSize: 10 });
    await migrate(db);
    log('Seeding:');
    const seeded = await seed(db);
    const list = scenarios(seeded).filter((s) => SCENARIOS.length === 0 || SCENARIOS.some((name) => s.name.startsWith(name)));
    const plansOk = PARTS.has('plans') ? await explainAll(db, seeded, list) : undefined;
    const outcomeTarget = PARTS.has('plans') ? await timeOutcomeTotal(db, seeded) : undefined;

    const started = await startServer(dbHandle.url, RATE_LIMIT_STORE);
    server = started.child;
    const auth = { authorization: `Bearer ${seeded.apiKey}` };
    const targets: string[] = [];
    if (PARTS.has('load')) targets.push(...(await loadSection(dbHandle.url, seeded, list, started, auth)));
    if (PARTS.has('bound')) {
      // Service and bare both fresh: the goal compares like with like.
      const fresh = PARTS.has('load') ? await startServer(dbHandle.url, RATE_LIMIT_STORE) : started;
      try {
        targets.push(...(await boundSection(dbHandle.url, seeded, fresh, auth, boundPages(seeded), 'fresh servers')));
      } finally {
        if (fresh !== started) await stopServer(fresh.child);
      }
      // Shown, not judged: the server that served the load part (after it, a page has cost it 20-40 % more CPU).
      const pages = boundPages(seeded);
      const again = pages.filter((p) => p.key === 'calls');
      if (PARTS.has('load') && again.length)
        await boundSection(dbHandle.url, seeded, started, auth, again, 'the service after the load part (not a target)');
    }
    if (plansOk !== undefined) targets.push(`  no sequential scan on calls:             ${plansOk ? 'met' : 'MISSED'}`);
    if (outcomeTarget) targets.push(outcomeTarget);
    log(
      `\nTargets (load average now ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(', ')} on ${os.cpus().length} cores):`,
    );
    for (const t of targets) log(t);
  } finally {
    if (server) await stopServer(server);
    await db?.close();
    await dbHandle.drop();
  }
}

main().catch((e) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
