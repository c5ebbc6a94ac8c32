// CSV export benchmark (not a test): `npm run bench:export`.
//
// Seeds one batch of BENCH_EXPORT_CALLS calls (default 100,000; 70 % answered, each with a summary,
// outcomes and a ~1 kB transcript), starts the app in this process on a free port and downloads
// GET …/results.csv over HTTP, as fast as it can or pausing BENCH_EXPORT_READ_DELAY_MS per chunk (a
// slow client: the server must wait for it, not queue the file). Prints rows per second, the RSS
// before, at peak and after, and the live memory after a full GC (heapUsed + arrayBuffers) idle, at
// the first page, each quarter and the end, beside the bound the export keeps: one page at a time.
// RSS alone says little: with V8's default heap limit garbage piles up uncollected (+146 MB on a
// 100k export); run with NODE_OPTIONS=--max-old-space-size=96 to see it stay flat.
//
// Database: embedded PGlite in a temporary directory (default; its memory is this process's), or a
// throwaway database on BENCH_PG_URL (e.g. postgresql://postgres@127.0.0.1:5432/postgres).
import { seedWithoutOutcomeCounts } from './outcome-counts.ts';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import pg from 'pg';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase, type Database } from '../src/db/client.ts';
import { migrate } from '../src/db/migrate.ts';
import { runStatement } from '../src/db/sql-statement.ts';
import { systemClock } from '../src/deps.ts';
import { newId } from '../src/domain/ids.ts';
import { createLogger } from '../src/logger.ts';
import { createMetrics } from '../src/metrics.ts';
import { createAccount } from '../src/services/accounts/accounts.ts';
import { addDidNumber, createAgent, createPromptVersion } from '../src/services/accounts/catalog.ts';
import { EXPORT_PAGE_ROWS } from '../src/services/batches/export-batch-results.ts';

const CALLS = Number(process.env.BENCH_EXPORT_CALLS ?? 100_000);
const READ_DELAY_MS = Number(process.env.BENCH_EXPORT_READ_DELAY_MS ?? 0);
const PG_URL = process.env.BENCH_PG_URL;
const MB = 1024 * 1024;
// A full collection on demand without a node flag, so `npm run bench:export` needs no --expose-gc.
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

async function openBenchDatabase(): Promise<{ db: Database; cleanup(): Promise<void> }> {
  if (!PG_URL) {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-export-'));
    const db = await openDatabase({ dataDir });
    return { db, cleanup: async () => (await db.close(), fs.rmSync(dataDir, { recursive: true, force: true })) };
  }
  const name = `bench_export_${process.pid}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  const db = await openDatabase({ databaseUrl: url.toString(), poolSize: 10 });
  return {
    db,
    cleanup: async () => {
      await db.close();
      await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

async function seed(db: Database): Promise<{ apiKey: string; batchId: string }> {
  const { account, apiKey } = await createAccount(db, {
    name: 'Bench Co',
    email: 'bench@example.com',
    voices: ['alloy'],
    limits: { rateLimitPerMinute: 1_000_000 },
  });
  const agent = await createAgent(db, account, { name: 'Sales Agent', voice: 'alloy', outcomeKeys: ['interested', 'sentiment'] });
  const version = await createPromptVersion(db, account, { agentId: agent.id, name: 'v1', prompt: 'Offer a demo.' });
  const did = await addDidNumber(db, account, '+14155550100');
  const batchId = newId('batch');
  const now = new Date();
  await db.prisma.batch.create({
    data: {
      id: batchId,
      accountId: account.id,
      agentId: agent.id,
      promptVersionId: version.id,
      didNumberId: did.id,
      status: 'completed',
      startMode: 'immediate',
      scheduledAt: now,
      timezone: 'UTC',
      concurrency: 5,
      voice: 'alloy',
      interruption: false,
      useAlternateNumber: false,
      recordingEnabled: true,
      maxDurationSeconds: 600,
      deduplicateByPhone: false,
      totalContacts: CALLS,
      acceptedContacts: CALLS,
      rejectedContacts: 0,
      completed: CALLS,
      createdAt: now,
      startedAt: now,
      completedAt: now,
    },
  });
  // With the outcome counters' insert trigger off, counted after (bench/outcome-counts.ts).
  await seedWithoutOutcomeCounts(
    (sql) => runStatement(db, sql),
    async () => {
      await runStatement(
        db,
        `INSERT INTO calls (id, account_id, batch_id, agent_id, prompt_version_id, seq, external_id, name, phone_number, status,
                          transcript_status, duration_seconds, answer_duration_seconds, timestamp, created_at, updated_at, completed_at,
                          hangup_by, disconnect_reason, summary, outcomes, recording_available, llm_transcript, attempts)
       SELECT 'call_' || lpad(g::text, 32, '0'), $1, $2, $3, $4, g, 'crm-' || g, 'Contact ' || g, '+1415' || lpad(g::text, 7, '0'), 'completed',
              CASE WHEN g % 10 < 7 THEN 'ready' END, 60, 55, now(), now(), now(), now(), 'agent', 'agent_hangup',
              CASE WHEN g % 10 < 7 THEN 'The contact ' || CASE WHEN g % 3 = 0 THEN 'asked for a demo next week' ELSE 'is not interested right now' END || '.' END,
              CASE WHEN g % 10 < 7 THEN jsonb_build_object('interested', CASE WHEN g % 3 = 0 THEN 'yes' ELSE 'no' END, 'sentiment', 'neutral') END,
              g % 10 < 7,
              CASE WHEN g % 10 < 7 THEN left(repeat('Agent: Hello, this is Ava from Acme, am I speaking with contact ' || g || '? User: Yes. ', 12), 1000) END,
              1
       FROM generate_series(1, $5::int) g`,
        [account.id, batchId, agent.id, version.id, CALLS],
      );
    },
  );
  return { apiKey, batchId };
}

/** Live memory after a full collection: heapUsed (JS objects) and arrayBuffers (CSV chunks, socket buffers). */
function liveAfterGc(): { heap: number; buffers: number } {
  gc();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, buffers: m.arrayBuffers };
}

type Sample = { rows: number } & ReturnType<typeof liveAfterGc>;

/** Downloads the CSV, reading slowly when READ_DELAY_MS is set; samples live memory at the start, quarters and end. */
async function download(url: string, apiKey: string): Promise<{ bytes: number; rows: number; samples: Sample[] }> {
  // node:http rather than fetch: its response reads from the socket only as the loop below takes
  // chunks, so a slow reader pushes back on the server instead of piling up in this client.
  const res = await new Promise<http.IncomingMessage>((resolve, reject) =>
    http.get(url, { headers: { authorization: `Bearer ${apiKey}` } }, resolve).on('error', reject),
  );
  if (res.statusCode !== 200) throw new Error(`export answered ${res.statusCode}: ${(await res.toArray()).join('')}`);
  const marks = [EXPORT_PAGE_ROWS, CALLS / 4, CALLS / 2, (3 * CALLS) / 4];
  const samples: Sample[] = [];
  let bytes = 0;
  let lines = 0;
  for await (const chunk of res as AsyncIterable<Buffer>) {
    bytes += chunk.byteLength;
    for (let i = 0; i < chunk.byteLength; i++) if (chunk[i] === 10) lines++;
    if (lines - 1 >= marks[samples.length]) samples.push({ rows: lines - 1, ...liveAfterGc() });
    if (READ_DELAY_MS) await new Promise((r) => setTimeout(r, READ_DELAY_MS));
  }
  samples.push({ rows: lines - 1, ...liveAfterGc() });
  return { bytes, rows: lines - 1, samples };
}

async function measureExport(base: string, apiKey: string, batchId: string): Promise<void> {
  const idle = liveAfterGc();
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
  const started = performance.now();
  const { bytes, rows, samples } = await download(`${base}/api/v1/public/call-batches/${batchId}/results.csv`, apiKey);
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  const after = process.memoryUsage().rss;
  const pageKb = Math.ceil(((bytes / rows) * EXPORT_PAGE_ROWS) / 1024);
  const heapLimit = v8.getHeapStatistics().heap_size_limit;
  console.log(
    `exported ${rows} rows (${(bytes / MB).toFixed(1)} MB of CSV) in ${seconds.toFixed(1)} s: ${Math.round(rows / seconds)} rows/s${READ_DELAY_MS ? ` (reader pausing ${READ_DELAY_MS} ms per chunk)` : ''}`,
  );
  console.log(
    `RSS before ${(before / MB).toFixed(0)} MB, peak ${(peak / MB).toFixed(0)} MB (+${((peak - before) / MB).toFixed(0)} MB), after ${(after / MB).toFixed(0)} MB; V8 heap limit ${(heapLimit / MB).toFixed(0)} MB`,
  );
  const fmt = (s: { heap: number; buffers: number }) => `heap ${(s.heap / MB).toFixed(1)} MB + buffers ${(s.buffers / MB).toFixed(1)} MB`;
  console.log(`live after GC: idle ${fmt(idle)}`);
  for (const s of samples)
    console.log(
      `  at row ${String(s.rows).padStart(7)}: ${fmt(s)} (${((s.heap + s.buffers - idle.heap - idle.buffers) / MB).toFixed(1)} MB over idle)`,
    );
  const first = samples[0];
  const last = samples[samples.length - 1];
  const grown = last.heap + last.buffers - first.heap - first.buffers;
  console.log(
    `live growth from the first page to the last: ${(grown / MB).toFixed(1)} MB over ${last.rows - first.rows} rows (${Math.round(grown / Math.max(1, last.rows - first.rows))} B/row; a leak of one row's CSV would be ~${Math.round(bytes / rows)} B/row)`,
  );
  console.log(
    `bound: ${EXPORT_PAGE_ROWS} rows held at a time (one page, ~${pageKb} kB of CSV here), whatever the batch size; the CSV is ${(bytes / MB).toFixed(1)} MB`,
  );
  if (rows !== CALLS) throw new Error(`expected ${CALLS} rows, got ${rows}`);
}

async function main() {
  const { db, cleanup } = await openBenchDatabase();
  try {
    await migrate(db);
    const t0 = performance.now();
    const { apiKey, batchId } = await seed(db);
    console.log(`seeded ${CALLS} calls on ${PG_URL ? 'PostgreSQL' : 'PGlite'} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const config = loadConfig({
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      RUN_WORKER: 'false',
      APP_SECRET: 'bench-app-secret-0123456789abcdef0123456789',
    });
    const app = buildApp({ config, db, logger: createLogger('warn'), clock: systemClock, appSecret: config.APP_SECRET!, metrics: createMetrics(db) });
    const base = await app.listen();
    try {
      await measureExport(base, apiKey, batchId);
    } finally {
      await app.stop();
    }
  } finally {
    await cleanup();
  }
}

await main();
