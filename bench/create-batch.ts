// Benchmark (not a test): PUT /api/v1/public/call-batches with 1k, 10k and 100k contacts over real
// HTTP on loopback, against PGlite and (when 127.0.0.1:5432 answers) PostgreSQL. For each size it
// prints contacts/s end to end, the raw bound measured in the same run on the same database (the
// same rows inserted by bare unnest statements through the driver, in one transaction: the best of
// one statement per chunk and one statement for all rows) and their ratio, and the server's peak RSS.
//
//   npm run bench:create [-- --sizes 1000,10000,100000 --runs 3 --db pglite,postgres]
//   BENCH_PG_URL=postgresql://user@host:5432/postgres selects another PostgreSQL server.
//
// The server runs in a child process (this file with --serve), so its RSS is its own and the
// client's request building does not compete with it for the event loop.
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { SERVER_NODE_FLAGS } from './server-flags.ts';

const SELF = fileURLToPath(import.meta.url);
const CALL_BATCHES = '/api/v1/public/call-batches';
const MB = 1024 * 1024;

// ---------------------------------------------------------------------------------------------
// Shared: the contacts both the HTTP run and the raw bound insert.

const AREA_CODES = ['212', '305', '312', '415', '512', '617', '646', '206'];

function phone(i: number): string {
  const area = AREA_CODES[i % AREA_CODES.length];
  const rest = 2_000_000 + Math.floor(i / AREA_CODES.length); // exchange 200-999: valid NANP
  return `+1${area}${rest}`;
}

function contact(i: number) {
  return {
    contact_id: `cust-${i}`,
    name: `Contact ${i}`,
    phone_number: phone(i),
    metadata: { 'First Name': `Name${i}`, 'Account Tier': i % 3 === 0 ? 'gold' : 'silver', customerId: i },
  };
}

// ---------------------------------------------------------------------------------------------
// Server side (child process).

interface ServeInfo {
  /** Peak RSS of the started, idle server (PGlite alone reserves ~800 MB of WASM memory). */
  idleMaxRssMb: number;
  baseUrl: string;
  apiKey: string;
  agentId: string;
  versionId: string;
}

type Command = { cmd: 'raw'; n: number; chunk: number } | { cmd: 'rss' } | { cmd: 'stop' };

async function serve(dbArg: string): Promise<void> {
  const { loadConfig } = await import('../src/config.ts');
  const { createDeps } = await import('../src/bootstrap.ts');
  const { buildApp } = await import('../src/app.ts');
  const { createAccount } = await import('../src/services/accounts/accounts.ts');
  const { addDidNumber, createAgent, createPromptVersion } = await import('../src/services/accounts/catalog.ts');
  const { newId, newIds } = await import('../src/domain/ids.ts');

  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-create-'));
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    PORT: '0',
    HOST: '127.0.0.1',
    RUN_WORKER: 'false',
    SEED_DEMO: 'false',
    APP_SECRET: 'bench-app-secret-0123456789abcdef0123456789',
    DATA_DIR: dataDir,
    ...(dbArg === 'pglite' ? {} : { DATABASE_URL: dbArg }),
  });
  const deps = await createDeps(config);
  const { account, apiKey } = await createAccount(deps.db, {
    name: 'Bench',
    email: 'bench@example.com',
    voices: ['alloy'],
    limits: { maxBatchSize: 1_000_000, maxConcurrentCalls: 50, maxCallDurationSeconds: 600, rateLimitPerMinute: 1_000_000 },
  });
  const agent = await createAgent(deps.db, account, { name: 'Bench agent', voice: 'alloy' });
  const version = await createPromptVersion(deps.db, account, { agentId: agent.id, name: 'v1', prompt: 'Hello.' });
  await addDidNumber(deps.db, account, '+14155550100');
  const app = buildApp(deps);
  const baseUrl = await app.listen();

  // The raw bound: the rows the service would insert, through the bare driver in one transaction.
  async function rawInsert(n: number, chunk: number): Promise<number> {
    const batchId = newId('batch');
    const now = new Date().toISOString();
    const rows = Array.from({ length: n }, (_, i) => contact(i));
    const cols = {
      id: newIds('call', n),
      seq: rows.map((_, i) => i + 1),
      ext: rows.map((c) => c.contact_id),
      name: rows.map((c) => c.name),
      phone: rows.map((c) => c.phone_number),
      alt: rows.map(() => null),
      meta: rows.map((c) => ({ first_name: c.metadata['First Name'], account_tier: c.metadata['Account Tier'], customer_id: c.metadata.customerId })),
      status: rows.map(() => 'queued'),
    };
    const batchSql = `INSERT INTO batches (id, account_id, agent_id, prompt_version_id, status, start_mode, scheduled_at, timezone,
      concurrency, voice, interruption, use_alternate_number, recording_enabled, max_duration_seconds, deduplicate_by_phone,
      total_contacts, accepted_contacts, rejected_contacts, created_at)
      VALUES ($1, $2, $3, $4, 'paused', 'manual', now(), 'UTC', 1, 'alloy', false, false, false, 60, false, $5, $5, 0, now())`;
    const callsSql = `INSERT INTO calls (id, account_id, batch_id, agent_id, prompt_version_id, seq, external_id, name,
      phone_number, alternate_phone, metadata, status, created_at, updated_at)
      SELECT c.id, $1, $2, $3, $4, c.seq, c.ext, c.name, c.phone, c.alt, c.meta, c.status, $5::timestamptz, $5::timestamptz
      FROM unnest($6::text[], $7::int[], $8::text[], $9::text[], $10::text[], $11::text[],
                  ARRAY(SELECT m.value FROM jsonb_array_elements($12::jsonb) WITH ORDINALITY AS m(value, n) ORDER BY m.n), $13::text[])
        AS c(id, seq, ext, name, phone, alt, meta, status)`;
    const run = async (query: (sql: string, params: unknown[]) => Promise<unknown>) => {
      await query(batchSql, [batchId, account.id, agent.id, version.id, n]);
      for (let start = 0; start < n; start += chunk) {
        const end = Math.min(n, start + chunk);
        const part = (a: unknown[]) => a.slice(start, end);
        await query(callsSql, [
          account.id, batchId, agent.id, version.id, now,
          part(cols.id), part(cols.seq), part(cols.ext), part(cols.name), part(cols.phone), part(cols.alt), JSON.stringify(part(cols.meta)), part(cols.status),
        ]);
      }
    };
    const t0 = performance.now();
    if (deps.db.pglite) {
      await deps.db.pglite.transaction(async (tx) => run((sql, params) => tx.query(sql, params)));
    } else {
      const client = new pg.Client({ connectionString: deps.db.url });
      await client.connect();
      const t1 = performance.now(); // connecting is not part of the bound
      await client.query('BEGIN');
      await run((sql, params) => client.query(sql, params));
      await client.query('COMMIT');
      const ms = performance.now() - t1;
      await client.end();
      return ms;
    }
    return performance.now() - t0;
  }

  const idleMaxRssMb = (process.resourceUsage().maxRSS * 1024) / MB;
  const info: ServeInfo = { baseUrl, apiKey, agentId: agent.id, versionId: version.id, idleMaxRssMb };
  process.send!({ ready: info });
  process.on('message', async (m: Command) => {
    if (m.cmd === 'raw') process.send!({ rawMs: await rawInsert(m.n, m.chunk) });
    else if (m.cmd === 'rss') process.send!({ maxRssMb: (process.resourceUsage().maxRSS * 1024) / MB, rssMb: process.memoryUsage().rss / MB });
    else if (m.cmd === 'stop') {
      await app.stop();
      await deps.db.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
      process.exit(0);
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Client side (parent process).

function ask<T>(child: ChildProcess, msg: Command | null, key: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: Record<string, unknown>) => {
      if (key in m) {
        child.off('message', onMessage);
        child.off('exit', onExit);
        resolve(m[key] as T);
      }
    };
    const onExit = (code: number) => reject(new Error(`server exited (${code})`));
    child.on('message', onMessage);
    child.once('exit', onExit);
    if (msg) child.send(msg);
  });
}

async function askMany<T extends Record<string, unknown>>(child: ChildProcess, msg: Command): Promise<T> {
  return new Promise((resolve) => {
    const onMessage = (m: T) => {
      child.off('message', onMessage);
      resolve(m);
    };
    child.on('message', onMessage);
    child.send(msg);
  });
}

function portOpen(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host, port });
    s.setTimeout(1000);
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
    s.once('timeout', () => (s.destroy(), resolve(false)));
  });
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

interface Row {
  db: string;
  size: number;
  e2eMs: number;
  rate: number;
  rawMs: number;
  rawRate: number;
  ratio: number;
  peakRssMb: number;
  idleRssMb: number;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function benchTarget(label: string, dbArg: string, sizes: number[], runs: number, chunk: number): Promise<Row[]> {
  // BENCH_CPU_PROF=<dir> writes a V8 CPU profile of each server process there.
  const prof = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const child = spawn(process.execPath, [...prof, ...SERVER_NODE_FLAGS, ...process.execArgv, SELF, '--serve', dbArg], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, NODE_ENV: 'production' },
  });
  const info = await ask<ServeInfo>(child, null, 'ready');
  const body = (n: number, key: string) =>
    JSON.stringify({
      agent_id: info.agentId,
      version_id: info.versionId,
      interruption: false,
      use_alternate_number: false,
      start_mode: 'manual',
      schedule_date: '2030-01-01',
      schedule_time: '09:00',
      schedule_timezone: 'America/New_York (EST, UTC-05:00)',
      contacts: Array.from({ length: n }, (_, i) => contact(i)),
      idempotency_key: key,
    });
  const put = async (payload: string, n: number): Promise<number> => {
    const t0 = performance.now();
    const res = await fetch(info.baseUrl + CALL_BATCHES, {
      method: 'PUT',
      headers: { authorization: `Bearer ${info.apiKey}`, 'content-type': 'application/json' },
      body: payload,
    });
    const out = (await res.json()) as { data?: { accepted_contacts: number } };
    const ms = performance.now() - t0;
    if (res.status !== 201 || out.data?.accepted_contacts !== n) {
      throw new Error(`${label}: unexpected response ${res.status} ${JSON.stringify(out).slice(0, 300)}`);
    }
    return ms;
  };

  const rows: Row[] = [];
  try {
    // Warm-up (JIT, connection pool, first-use caches); not measured.
    for (let w = 0; w < 3; w++) await put(body(2_000, `warmup-${w}-${crypto.randomUUID()}`), 2_000);
    await ask<number>(child, { cmd: 'raw', n: 2_000, chunk }, 'rawMs');

    for (const size of sizes) {
      const sizeRuns = size >= 100_000 ? Math.max(1, Math.min(runs, 2)) : runs;
      const e2e: number[] = [];
      const raw: number[] = [];
      for (let r = 0; r < sizeRuns; r++) {
        const payload = body(size, `bench-${size}-${r}-${crypto.randomUUID()}`);
        e2e.push(await put(payload, size));
        raw.push(await ask<number>(child, { cmd: 'raw', n: size, chunk }, 'rawMs'));
        // Also the bound as one single statement; the better of the two is the bound.
        raw.push(await ask<number>(child, { cmd: 'raw', n: size, chunk: size }, 'rawMs'));
      }
      const { maxRssMb } = await askMany<{ maxRssMb: number }>(child, { cmd: 'rss' });
      const e2eMs = median(e2e);
      const rawMs = Math.min(...raw);
      const row: Row = {
        db: label,
        size,
        e2eMs,
        rate: (size / e2eMs) * 1000,
        rawMs,
        rawRate: (size / rawMs) * 1000,
        ratio: rawMs / e2eMs,
        peakRssMb: maxRssMb,
        idleRssMb: info.idleMaxRssMb,
      };
      rows.push(row);
      printRow(row, sizeRuns);
    }
  } finally {
    child.send({ cmd: 'stop' });
    await new Promise((r) => child.once('exit', r));
  }
  return rows;
}

function printRow(r: Row, n: number) {
  const f = (x: number, d = 0) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
  console.log(
    `${r.db.padEnd(10)} ${f(r.size).padStart(8)} contacts | e2e ${f(r.e2eMs).padStart(6)} ms = ${f(r.rate).padStart(7)} contacts/s (median of ${n})` +
      ` | raw unnest ${f(r.rawMs).padStart(6)} ms = ${f(r.rawRate).padStart(7)} rows/s | e2e/raw ${f(r.ratio, 2)} | server peak RSS ${f(r.peakRssMb)} MB (idle ${f(r.idleRssMb)})`,
  );
}

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback;
}

async function main() {
  if (process.argv.includes('--serve')) return serve(process.argv[process.argv.indexOf('--serve') + 1]);

  const sizes = arg('sizes', '1000,10000,100000').split(',').map(Number);
  const runs = Number(arg('runs', '3'));
  const targets = arg('db', 'pglite,postgres').split(',');
  const { DEFAULT_CALL_CHUNK_SIZE } = await import('../src/services/batches/insert-calls.ts');
  const chunk = Number(arg('chunk', String(DEFAULT_CALL_CHUNK_SIZE)));
  console.log(`create-batch benchmark: sizes ${sizes.join(', ')}; ${runs} runs each (100k: ≤2); raw-bound chunk ${chunk}; node ${process.version}; ${os.cpus().length} CPUs`);

  const rows: Row[] = [];
  if (targets.includes('pglite')) rows.push(...(await benchTarget('pglite', 'pglite', sizes, runs, chunk)));
  if (targets.includes('postgres')) {
    const base = process.env.BENCH_PG_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
    const u = new URL(base);
    if (!(await portOpen(u.hostname, Number(u.port || 5432)))) {
      console.log(`postgres   skipped: ${u.hostname}:${u.port || 5432} does not answer`);
    } else {
      const name = `bench_create_${crypto.randomBytes(4).toString('hex')}`;
      const admin = new pg.Client({ connectionString: base });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${name}`);
      try {
        rows.push(...(await benchTarget('postgres', withDatabase(base, name), sizes, runs, chunk)));
      } finally {
        await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await admin.end();
      }
    }
  }

  const check = (ok: boolean, text: string) => console.log(`${ok ? 'MET ' : 'MISS'}  ${text}`);
  const at = (db: string, size: number) => rows.find((r) => r.db === db && r.size === size);
  console.log('\ntargets:');
  const pg10k = at('postgres', 10_000);
  if (pg10k) {
    check(pg10k.rate >= 40_000, `postgres 10k: ${Math.round(pg10k.rate)} contacts/s >= 40,000`);
    check(pg10k.ratio >= 0.5, `postgres 10k: e2e/raw ${pg10k.ratio.toFixed(2)} >= 0.5`);
  }
  for (const db of ['pglite', 'postgres']) {
    const big = at(db, 100_000);
    if (big) check(big.peakRssMb < 600, `${db} 100k: server peak RSS ${Math.round(big.peakRssMb)} MB < 600 MB`);
  }
  const lite = rows.filter((r) => r.db === 'pglite');
  if (lite.length) {
    const worst = Math.min(...lite.map((r) => r.rate));
    check(worst >= 10_000, `pglite: slowest size ${Math.round(worst)} contacts/s >= 10,000`);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
