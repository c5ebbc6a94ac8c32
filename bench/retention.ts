// Benchmark (not a test): retention on PostgreSQL (or PGlite). Seeds, by SQL, finished batches old
// enough to go (calls with history, recordings, webhook deliveries in the proportions measured in
// docs/deployment.md) beside batches inside the retention, then prints
//   - the candidate read's plan (EXPLAIN ANALYZE, BUFFERS) with batches_finished_idx and without it;
//   - one chunk of calls deleted (EXPLAIN ANALYZE in a rolled-back transaction: the cascades' time);
//   - a dispatch worker placing a batch alone (simulator, SIM_CALL_MS=0), then a like batch while
//     pruneFinishedBatches deletes the old ones: calls/s side by side, the prune's calls/s beside
//     the rate 10 million calls a day need, its longest statement beside the bound, and how many
//     samples found a session of the database waiting on a lock;
//   - dropOldRecordings and pruneProviderEvents rates.
//
//   npx tsx bench/retention.ts [--batches 100] [--calls 1000] [--dispatch 20000] [--db postgres]
//   BENCH_PG_URL=postgresql://user@host:5432/postgres selects another PostgreSQL server.
import { seedWithoutOutcomeCounts } from './outcome-counts.ts';
import { openThrowawayDatabase } from './throwaway-database.ts';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.ts';
import { openDatabase, type Database } from '../src/db/client.ts';
import { migrate } from '../src/db/migrate.ts';
import { runStatement } from '../src/db/sql-statement.ts';
import { systemClock, type AppDeps } from '../src/deps.ts';
import { createWorker } from '../src/dispatch/worker.ts';
import { createLogger } from '../src/logger.ts';
import { createMetrics } from '../src/metrics.ts';
import { createAccount } from '../src/services/accounts/accounts.ts';
import { addDidNumber, createAgent, createPromptVersion } from '../src/services/accounts/catalog.ts';
import { dropOldRecordings } from '../src/services/retention/drop-recordings.ts';
import { CALL_CHUNK, CALLS_SQL, CANDIDATES, CANDIDATES_SQL, pruneFinishedBatches } from '../src/services/retention/prune-batches.ts';
import { pruneProviderEvents } from '../src/services/retention/prune-provider-events.ts';

const { values } = parseArgs({
  options: {
    batches: { type: 'string', default: '100' },
    calls: { type: 'string', default: '1000' },
    dispatch: { type: 'string', default: '20000' },
    window: { type: 'string', default: '100000' },
    db: { type: 'string', default: 'postgres' },
  },
});
const OLD_BATCHES = Number(values.batches);
const CALLS = Number(values.calls);
const DISPATCH = Number(values.dispatch);
/** Finished batches inside the retention (no calls): what the candidate read must not walk. */
const WINDOW_BATCHES = Number(values.window);
const PG_URL = process.env.BENCH_PG_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
/** 10 million calls a day, deleted as fast as they come. */
const DAY_RATE = 10_000_000 / 86_400;
/** Longest a prune statement may hold its rows (far below a lease, a claim's poll is 200 ms). */
const MAX_STATEMENT_MS = 1_000;
const RETENTION_DAYS = 30;
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const load = () =>
  `load average ${os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(', ')} (${os.cpus().length} cores)`;

const KINDS: [RegExp, string][] = [
  [/DELETE FROM calls/, 'calls chunk'],
  [/DELETE FROM webhook_deliveries/, 'deliveries chunk'],
  [/DELETE FROM batches/, 'batch row'],
  [/SELECT EXISTS/, 'pending check'],
  [/SELECT b\.id/, 'candidate read'],
];
const kindOf = (sql: string) => KINDS.find(([re]) => re.test(sql))?.[1] ?? 'other';

/** The same database, timing every statement sent through the raw driver (the prune's). */
function timed(db: Database, record: (ms: number, kind: string) => void): Database {
  const time = async <T>(sql: string, f: () => Promise<T>) => {
    const t0 = performance.now();
    try {
      return await f();
    } finally {
      record(performance.now() - t0, kindOf(sql));
    }
  };
  if (db.pglite) {
    const p = db.pglite;
    return { ...db, pglite: { query: (sql: string, params?: unknown[]) => time(sql, () => p.query(sql, params)) } as unknown as typeof p };
  }
  const pool = db.pool!;
  return { ...db, pool: { query: (sql: string, params?: unknown[]) => time(sql, () => pool.query(sql, params)) } as unknown as typeof pool };
}

interface Catalog {
  accountId: string;
  agentId: string;
  versionId: string;
}

// Finished batches: b in 1..nBatches, calls seq 1..callsPer, 70 % answered (4 history rows, a
// ~4.3 KB recording, 2 deliveries), the rest unanswered (2 history rows, 1 delivery): 3.4 history
// rows and 1.7 deliveries per call, as measured after a simulator batch (docs/deployment.md).
async function seedOld(db: Database, cat: Catalog, endedAt: Date, idBase: number, nBatches: number, callsPer: number) {
  const params = [cat.accountId, cat.agentId, cat.versionId, endedAt.toISOString(), idBase, nBatches, callsPer];
  await runStatement(
    db,
    `INSERT INTO batches (id, account_id, agent_id, prompt_version_id, status, start_mode, scheduled_at, timezone, concurrency, voice,
                          interruption, use_alternate_number, recording_enabled, max_duration_seconds, deduplicate_by_phone, callback_url,
                          total_contacts, accepted_contacts, rejected_contacts, completed, failed, created_at, started_at, completed_at)
     SELECT 'sched_' || lpad(to_hex($5::bigint + b), 32, '0'), $1, $2, $3, 'completed', 'immediate', $4::timestamptz - interval '1 hour', 'UTC', 50,
            'alloy', true, false, true, 600, false, 'https://hooks.example.com/in', $7, $7, 0, ($7 * 7) / 10, $7 - ($7 * 7) / 10,
            $4::timestamptz - interval '1 hour', $4::timestamptz - interval '1 hour', $4::timestamptz
       FROM generate_series(1, $6::int) b`,
    params,
  );
  await runStatement(
    db,
    `INSERT INTO calls (id, account_id, batch_id, agent_id, prompt_version_id, seq, external_id, name, phone_number, metadata, status,
                        transcript_status, duration_seconds, answer_duration_seconds, "timestamp", created_at, completed_at, hangup_by,
                        disconnect_reason, summary, outcomes, recording_available, llm_transcript, attempts, dialed_number)
     SELECT 'call_' || lpad(to_hex(($5::bigint + b) * 1000000 + s), 32, '0'), $1, 'sched_' || lpad(to_hex($5::bigint + b), 32, '0'), $2, $3,
            s, 'contact-' || s, 'Contact ' || s, '+1415' || (2000000 + s)::text, '{"plan": "gold"}', CASE WHEN s % 10 < 7 THEN 'completed' ELSE 'no_answer' END,
            CASE WHEN s % 10 < 7 THEN 'ready' END, 60, CASE WHEN s % 10 < 7 THEN 50 END, $4::timestamptz - interval '30 minutes',
            $4::timestamptz - interval '1 hour', $4::timestamptz, CASE WHEN s % 10 < 7 THEN 'agent' END,
            CASE WHEN s % 10 < 7 THEN 'agent_hangup' ELSE 'no_answer' END,
            CASE WHEN s % 10 < 7 THEN repeat('The contact asked about pricing and a demo. ', 5) END,
            CASE WHEN s % 10 < 7 THEN '{"interested": "yes", "callback_requested": "no"}'::jsonb END, s % 10 < 7,
            CASE WHEN s % 10 < 7 THEN repeat('Agent: Hello, this is a call about your plan. User: Tell me more please. ', 20) END,
            1, '+1415' || (2000000 + s)::text
       FROM generate_series(1, $6::int) b, generate_series(1, $7::int) s`,
    params,
  );
  await runStatement(
    db,
    `INSERT INTO call_events (account_id, call_id, from_status, to_status, detail, at)
     SELECT c.account_id, c.id, e.f, e.t, jsonb_build_object('event', e.t, 'worker', 'bench#000000'), c.completed_at
       FROM calls c CROSS JOIN LATERAL (VALUES ('pending', 'ringing', 'any'), ('ringing', 'answered', 'completed'), ('answered', 'completed', 'completed'),
                                               ('completed', 'completed', 'completed'), ('ringing', 'no_answer', 'no_answer')) AS e(f, t, k)
      WHERE c.batch_id IN (SELECT id FROM batches WHERE completed_at = $1::timestamptz) AND (e.k = 'any' OR e.k = c.status)`,
    [endedAt.toISOString()],
  );
  await runStatement(
    db,
    `INSERT INTO recordings (call_id, account_id, content_type, data, created_at)
     SELECT c.id, c.account_id, 'audio/wav', decode((SELECT string_agg(md5(c.id || i::text), '') FROM generate_series(1, 270) i), 'hex'), c.completed_at
       FROM calls c WHERE c.batch_id IN (SELECT id FROM batches WHERE completed_at = $1::timestamptz) AND c.recording_available`,
    [endedAt.toISOString()],
  );
  await runStatement(
    db,
    `INSERT INTO webhook_deliveries (id, account_id, batch_id, event_type, payload, url, status, attempts, next_attempt_at, delivered_at, created_at)
     SELECT 'msg_' || md5(c.id || k), c.account_id, c.batch_id, CASE k WHEN 1 THEN 'call.completed' ELSE 'call.analyzed' END,
            jsonb_build_object('type', 'call.completed', 'data', jsonb_build_object('call_id', c.id, 'summary', c.summary, 'llm_transcript', c.llm_transcript)),
            'https://hooks.example.com/in', 'delivered', 1, c.completed_at, c.completed_at, c.completed_at
       FROM calls c CROSS JOIN generate_series(1, 2) k
      WHERE c.batch_id IN (SELECT id FROM batches WHERE completed_at = $1::timestamptz) AND (k = 1 OR c.status = 'completed')`,
    [endedAt.toISOString()],
  );
}

async function seedWindow(db: Database, cat: Catalog, now: Date) {
  await runStatement(
    db,
    `INSERT INTO batches (id, account_id, agent_id, prompt_version_id, status, start_mode, scheduled_at, timezone, concurrency, voice,
                          interruption, use_alternate_number, recording_enabled, max_duration_seconds, deduplicate_by_phone,
                          total_contacts, accepted_contacts, rejected_contacts, created_at, started_at, completed_at)
     SELECT 'sched_' || lpad(to_hex(900000000 + b), 32, '0'), $1, $2, $3, CASE WHEN b % 20 = 0 THEN 'cancelled' ELSE 'completed' END, 'immediate',
            t, 'UTC', 5, 'alloy', true, false, true, 600, false, 0, 0, 0, t, t, t
       FROM generate_series(1, $4::int) b
      CROSS JOIN LATERAL (SELECT $5::timestamptz - ($6::int * interval '1 day') * b / $4::int AS t) x`,
    [cat.accountId, cat.agentId, cat.versionId, WINDOW_BATCHES, now.toISOString(), RETENTION_DAYS - 1],
  );
}

async function dispatchBatch(db: Database, cat: Catalog, idBase: number, n: number, now: Date): Promise<string> {
  const id = 'sched_' + (idBase + 1).toString(16).padStart(32, '0');
  await runStatement(
    db,
    `INSERT INTO batches (id, account_id, agent_id, prompt_version_id, status, start_mode, scheduled_at, timezone, concurrency, voice,
                          interruption, use_alternate_number, recording_enabled, max_duration_seconds, deduplicate_by_phone,
                          total_contacts, accepted_contacts, rejected_contacts, queued, created_at)
     VALUES ($1, $2, $3, $4, 'queued', 'immediate', $5, 'UTC', 500, 'alloy', true, false, true, 600, false, $6, $6, 0, $6, $5)`,
    [id, cat.accountId, cat.agentId, cat.versionId, now.toISOString(), n],
  );
  await runStatement(
    db,
    `INSERT INTO calls (id, account_id, batch_id, agent_id, prompt_version_id, seq, external_id, phone_number, status, created_at)
     SELECT 'call_' || lpad(to_hex($6::bigint * 1000000 + s), 32, '0'), $2, $1, $3, $4, s, 'd-' || s, '+1415' || (3000000 + s)::text, 'pending', $5
       FROM generate_series(1, $7::int) s`,
    [id, cat.accountId, cat.agentId, cat.versionId, now.toISOString(), idBase + 1, n],
  );
  return id;
}

async function explain(db: Database, sql: string, params: unknown[]): Promise<string[]> {
  const rows = await runStatement<Record<string, string>>(db, `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${sql}`, params);
  return rows.map((r) => Object.values(r)[0]!);
}

async function inRolledBack<T>(
  db: Database,
  f: (c: { query: (sql: string, p?: unknown[]) => Promise<{ rows: Record<string, string>[] }> }) => Promise<T>,
): Promise<T | null> {
  if (!db.pool) return null;
  const c = await db.pool.connect();
  try {
    await c.query('BEGIN');
    return await f(c as never);
  } finally {
    await c.query('ROLLBACK');
    c.release();
  }
}

async function sizes(db: Database): Promise<string> {
  const rows = await runStatement<{ t: string; n: number; mb: number }>(
    db,
    `SELECT t, (xpath('/row/n/text()', query_to_xml('SELECT count(*) AS n FROM ' || t, false, true, '')))[1]::text::int AS n,
            round(pg_total_relation_size(t::regclass) / 1048576.0, 1)::float8 AS mb
       FROM unnest(ARRAY['batches', 'calls', 'call_events', 'recordings', 'webhook_deliveries', 'provider_events']) t`,
  );
  return rows.map((r) => `${r.t} ${fmt(r.n)} rows / ${r.mb} MB`).join(', ');
}

async function run(kind: 'pglite' | 'postgres') {
  const opened =
    kind === 'pglite'
      ? { db: await openDatabase({ inMemory: true }), drop: async () => {} }
      : await openThrowawayDatabase(PG_URL, 'cbs_bench_ret', 12);
  if (!opened) return console.log(`${kind}: not reachable, skipped`);
  const { db } = opened;
  if (kind === 'pglite') opened.drop = () => db.close();
  try {
    await migrate(db);
    const config = loadConfig({
      LOG_LEVEL: 'silent',
      SIM_CALL_MS: '0',
      BATCH_RETENTION_DAYS: String(RETENTION_DAYS),
      RECORDING_RETENTION_DAYS: '10',
      PROVIDER_EVENT_RETENTION_DAYS: '7',
      APP_SECRET: 'bench-app-secret-0123456789abcdef0123456789',
    });
    const deps: AppDeps = {
      config,
      db,
      logger: createLogger('silent'),
      clock: systemClock,
      appSecret: config.APP_SECRET!,
      metrics: createMetrics(db),
    };
    const { account } = await createAccount(db, {
      name: 'Bench',
      email: 'bench@example.com',
      limits: { maxBatchSize: 1_000_000, maxConcurrentCalls: 1_000, maxCallDurationSeconds: 600, rateLimitPerMinute: 100_000 },
    });
    const agent = await createAgent(db, account, { name: 'Agent', voice: 'alloy', outcomeKeys: ['interested', 'callback_requested'] });
    const version = await createPromptVersion(db, account, { agentId: agent.id, name: 'v1', prompt: 'Hello' });
    await addDidNumber(db, account, '+14155550100');
    const cat = { accountId: account.id, agentId: agent.id, versionId: version.id };
    const now = new Date();
    const day = 86_400_000;

    let t0 = performance.now();
    // With the outcome counters' insert trigger off, counted after (bench/outcome-counts.ts).
    await seedWithoutOutcomeCounts(
      (sql) => runStatement(db, sql),
      async () => {
        await seedOld(db, cat, new Date(now.getTime() - (RETENTION_DAYS + 10) * day), 0, OLD_BATCHES, CALLS);
        // Inside the batch retention, past the recording retention: dropOldRecordings' work.
        await seedOld(db, cat, new Date(now.getTime() - 20 * day), 100_000, Math.max(1, Math.floor(OLD_BATCHES / 5)), CALLS);
        await seedWindow(db, cat, now);
      },
    );
    await runStatement(
      db,
      `INSERT INTO provider_events (id, provider, call_id, event_type, payload, received_at, processed_at)
       SELECT 'retell:bench' || g || ':call_ended', 'retell', NULL, 'call_ended', jsonb_build_object('event', 'call_ended', 'n', g),
              $1::timestamptz - interval '10 days', CASE WHEN g % 10 = 0 THEN NULL ELSE $1::timestamptz - interval '10 days' END
         FROM generate_series(1, $2::int) g`,
      [now.toISOString(), OLD_BATCHES * CALLS],
    );
    if (db.pool) await db.pool.query('VACUUM ANALYZE');
    console.log(`${kind}: seeded in ${((performance.now() - t0) / 1000).toFixed(1)} s: ${kind === 'postgres' ? await sizes(db) : ''}`);
    console.log(
      `  ${fmt(OLD_BATCHES)} finished batches of ${fmt(CALLS)} calls ended ${RETENTION_DAYS + 10} days ago (to delete); ${fmt(Math.floor(OLD_BATCHES / 5))} ended 20 days ago (recordings to drop); ${fmt(WINDOW_BATCHES)} finished in the last ${RETENTION_DAYS - 1} days (kept)`,
    );

    // The candidate read with and without the index.
    const cutoff = new Date(now.getTime() - RETENTION_DAYS * day).toISOString();
    const candidateParams = [cutoff, '-infinity', '', CANDIDATES];
    if (db.pool) {
      console.log(`  candidate read (${CANDIDATES} batches), with batches_finished_idx:`);
      for (const l of await explain(db, CANDIDATES_SQL, candidateParams)) console.log(`    ${l}`);
      const without = await inRolledBack(db, async (c) => {
        await c.query('DROP INDEX batches_finished_idx');
        return (await c.query(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${CANDIDATES_SQL}`, candidateParams)).rows.map((r) => Object.values(r)[0]!);
      });
      console.log('  the same without it:');
      for (const l of without ?? []) console.log(`    ${l}`);
      const chunk = await inRolledBack(db, async (c) => {
        const [first] = (await c.query(CANDIDATES_SQL, candidateParams)).rows;
        return (await c.query(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${CALLS_SQL}`, [first!.id, 0, CALL_CHUNK.postgres])).rows.map(
          (r) => Object.values(r)[0]!,
        );
      });
      console.log(`  one chunk of ${CALL_CHUNK.postgres} calls deleted (rolled back):`);
      for (const l of chunk ?? []) console.log(`    ${l}`);
    }

    // Dispatch alone, then dispatch beside the prune.
    const worker = createWorker(deps, { pollMs: 20 });
    const aloneId = await dispatchBatch(db, cat, 500_000, DISPATCH, now);
    t0 = performance.now();
    await worker.drain({ timeoutMs: 900_000 });
    const aloneRate = DISPATCH / ((performance.now() - t0) / 1000);

    const besideId = await dispatchBatch(db, cat, 600_000, DISPATCH, now);
    const statementMs: number[] = [];
    let slowest = { ms: 0, kind: '' };
    const pruneDeps = {
      ...deps,
      db: timed(db, (ms, kind) => {
        statementMs.push(ms);
        if (ms > slowest.ms) slowest = { ms, kind };
      }),
    };
    let lockSamples = 0;
    let lockWaits = 0;
    let sampling = db.pool !== undefined;
    const sampler = (async () => {
      while (sampling) {
        const [r] = await runStatement<{ n: number }>(
          db,
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        );
        lockSamples += 1;
        if ((r?.n ?? 0) > 0) lockWaits += 1;
        await new Promise((res) => setTimeout(res, 50));
      }
    })();
    t0 = performance.now();
    const dispatchDone = worker.drain({ timeoutMs: 900_000 }).then(() => performance.now() - t0);
    const ended = async () =>
      (await runStatement<{ n: number }>(db, `SELECT count(*)::int AS n FROM calls WHERE batch_id = $1 AND completed_at IS NOT NULL`, [besideId]))[0]
        ?.n ?? 0;
    const pruneDone = pruneFinishedBatches(pruneDeps).then(async (r) => ({ r, ms: performance.now() - t0, ended: await ended() }));
    const [dispatchMs, prune] = await Promise.all([dispatchDone, pruneDone]);
    sampling = false;
    await sampler;
    await worker.stop();
    // Over the time both ran: the prune's, or the dispatch's when it ended first.
    const besideRate = prune.ms < dispatchMs ? prune.ended / (prune.ms / 1000) : DISPATCH / (dispatchMs / 1000);
    const pruneRate = prune.r.calls / (prune.ms / 1000);
    const sorted = [...statementMs].sort((x, y) => x - y);
    const maxMs = slowest.ms;
    const p99 = sorted[Math.floor(sorted.length * 0.99)] ?? 0;
    const placed = await runStatement<{ id: string; n: number }>(
      db,
      `SELECT batch_id AS id, count(*)::int AS n FROM calls WHERE batch_id IN ($1, $2) AND completed_at IS NOT NULL GROUP BY batch_id`,
      [aloneId, besideId],
    );
    console.log(
      `  dispatch alone: ${fmt(aloneRate)} calls/s; while the prune ran: ${fmt(besideRate)} calls/s (${((besideRate / aloneRate) * 100).toFixed(0)} %); ended ${placed.map((p) => fmt(p.n)).join(' and ')} of ${fmt(DISPATCH)} each`,
    );
    console.log(
      `  prune: ${fmt(prune.r.batches)} batches, ${fmt(prune.r.calls)} calls (with their history and recordings), ${fmt(prune.r.deliveries)} deliveries in ${(prune.ms / 1000).toFixed(1)} s: ` +
        `${fmt(pruneRate)} calls/s (10 million calls a day need ${fmt(DAY_RATE)} calls/s: ${pruneRate >= DAY_RATE ? 'met' : 'NOT met'}, ${((DAY_RATE / pruneRate) * 100).toFixed(1)} % of one worker's day)`,
    );
    console.log(
      `  prune statements: ${fmt(statementMs.length)}, p99 ${p99.toFixed(0)} ms, longest ${maxMs.toFixed(0)} ms, a ${slowest.kind} (bound < ${MAX_STATEMENT_MS} ms: ${maxMs < MAX_STATEMENT_MS ? 'met' : 'NOT met'}); ` +
        (db.pool ? `samples with a session waiting on a lock: ${lockWaits} of ${lockSamples}` : 'one connection (PGlite): statements take turns'),
    );
    const [left] = await runStatement<{ n: number }>(db, `SELECT count(*)::int AS n FROM batches WHERE completed_at < $1::timestamptz`, [cutoff]);
    console.log(`  finished batches older than the retention left: ${left?.n}`);

    t0 = performance.now();
    const dropped = await dropOldRecordings(deps);
    const dropMs = performance.now() - t0;
    t0 = performance.now();
    const events = await pruneProviderEvents(deps);
    const eventMs = performance.now() - t0;
    console.log(
      `  recordings dropped: ${fmt(dropped)} in ${(dropMs / 1000).toFixed(1)} s (${fmt(dropped / (dropMs / 1000))}/s); provider events: ${fmt(events)} in ${(eventMs / 1000).toFixed(1)} s (${fmt(events / (eventMs / 1000))}/s)`,
    );
    if (kind === 'postgres') console.log(`  after: ${await sizes(db)} (deleted space is reused after VACUUM, not returned to the disk)`);
    console.log(`  ${load()}`);
  } finally {
    await opened.drop();
  }
}

for (const kind of values.db!.split(',') as ('pglite' | 'postgres')[]) await run(kind);
