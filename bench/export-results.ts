// CSV export benchmark (not a test): `npm run bench:export`.
//
// Seeds one batch of BENCH_EXPORT_CALLS calls (default 100,000; 70 % answered, each with a summary,
// outcomes and a ~1 kB transcript), starts the app in this process on a free port and downloads
// GET …/results.csv over HTTP, reading as fast as it can. Prints rows per second, the bytes written
// and the process's resident memory before, at its peak during the download and after, beside the
// bound the export keeps: one page of rows read at a time, however large the batch.
//
// Database: embedded PGlite in a temporary directory (default; its memory is this process's), or a
// throwaway database on BENCH_PG_URL (e.g. postgresql://postgres@127.0.0.1:5432/postgres).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
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
const PG_URL = process.env.BENCH_PG_URL;
const MB = 1024 * 1024;

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
  const { account, apiKey } = await createAccount(db, { name: 'Bench Co', email: 'bench@example.com', voices: ['alloy'], limits: { rateLimitPerMinute: 1_000_000 } });
  const agent = await createAgent(db, account, { name: 'Sales Agent', voice: 'alloy', outcomeKeys: ['interested', 'sentiment'] });
  const version = await createPromptVersion(db, account, { agentId: agent.id, name: 'v1', prompt: 'Offer a demo.' });
  const did = await addDidNumber(db, account, '+14155550100');
  const batchId = newId('batch');
  const now = new Date();
  await db.prisma.batch.create({
    data: {
      id: batchId, accountId: account.id, agentId: agent.id, promptVersionId: version.id, didNumberId: did.id, status: 'completed',
      startMode: 'immediate', scheduledAt: now, timezone: 'UTC', concurrency: 5, voice: 'alloy', interruption: false,
      useAlternateNumber: false, recordingEnabled: true, maxDurationSeconds: 600, deduplicateByPhone: false,
      totalContacts: CALLS, acceptedContacts: CALLS, rejectedContacts: 0, completed: CALLS, createdAt: now, startedAt: now, completedAt: now,
    },
  });
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
  return { apiKey, batchId };
}

async function main() {
  const { db, cleanup } = await openBenchDatabase();
  try {
    await migrate(db);
    const t0 = performance.now();
    const { apiKey, batchId } = await seed(db);
    console.log(`seeded ${CALLS} calls on ${PG_URL ? 'PostgreSQL' : 'PGlite'} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const config = loadConfig({ ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', RUN_WORKER: 'false', APP_SECRET: 'bench-app-secret-0123456789abcdef0123456789' });
    const app = buildApp({ config, db, logger: createLogger('warn'), clock: systemClock, appSecret: config.APP_SECRET!, metrics: createMetrics(db) });
    const base = await app.listen();
    try {
      global.gc?.();
      const before = process.memoryUsage().rss;
      let peak = before;
      const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
      const started = performance.now();
      const res = await fetch(`${base}/api/v1/public/call-batches/${batchId}/results.csv`, { headers: { authorization: `Bearer ${apiKey}` } });
      if (res.status !== 200) throw new Error(`export answered ${res.status}: ${await res.text()}`);
      let bytes = 0;
      let lines = 0;
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        bytes += chunk.byteLength;
        for (let i = 0; i < chunk.byteLength; i++) if (chunk[i] === 10) lines++;
      }
      const seconds = (performance.now() - started) / 1000;
      clearInterval(sampler);
      const after = process.memoryUsage().rss;
      const rows = lines - 1;
      console.log(`exported ${rows} rows (${(bytes / MB).toFixed(1)} MB of CSV) in ${seconds.toFixed(1)} s: ${Math.round(rows / seconds)} rows/s`);
      console.log(`RSS before ${(before / MB).toFixed(0)} MB, peak ${(peak / MB).toFixed(0)} MB (+${((peak - before) / MB).toFixed(0)} MB), after ${(after / MB).toFixed(0)} MB`);
      console.log(`bound: ${EXPORT_PAGE_ROWS} rows held at a time (one page, ~${Math.ceil((bytes / rows) * EXPORT_PAGE_ROWS / 1024)} kB of CSV here), whatever the batch size; the CSV is ${(bytes / MB).toFixed(1)} MB`);
      if (rows !== CALLS) throw new Error(`expected ${CALLS} rows, got ${rows}`);
    } finally {
      await app.stop();
    }
  } finally {
    await cleanup();
  }
}

await main();
