// Benchmark (not a test): PUT /api/v1/public/call-batches with 1k, 10k and 100k contacts over real
// HTTP on loopback, against PGlite and (when 127.0.0.1:5432 answers) PostgreSQL. The PUT is timed by
// the client (this process) from before the request's first byte until its answer is parsed; the
// server is a child process. For each size it prints contacts/s end to end beside bounds measured
// in the same run on the same database, runs alternating with the creates so that drift in the
// machine's load hits all of them:
//   issue unnest / issue copy (PostgreSQL; bench/create-issue-bounds.ts) the same rows by one
//         INSERT … SELECT FROM unnest(...), and by one binary COPY, into issue 35's minimal table
//         (id, batch, account, contact id, name, phone, jsonb metadata, status, created_at; primary
//         key its one index): the goal is judged against the unnest one;
//   min   the same rows by one INSERT … SELECT FROM unnest(...) into a table of the calls table's
//         columns with only a primary key and one index (issue 17's bound);
//   calls the same rows by bare unnest statements into the service's own `calls` table (its indexes
//         and triggers), through the driver in one transaction: the better of one statement per
//         chunk and one statement for all rows;
// the ratios of the service to each, and the server's peak RSS during each create (Linux: VmHWM,
// reset before the create) beside the whole process's. The server sends its Server-Timing header
// (SERVER_TIMING=true): the medians of its phases are printed beside the client's time, so a
// create's time splits into body read, JSON parse, REST reading, GraphQL, screening, COPY and the
// answer (src/phase-timer.ts names them). The machine's load average is printed
// with the figures: on a shared machine every figure moves with it.
//
//   npm run bench:create [-- --sizes 1000,10000,100000 --runs 9 --db pglite,postgres]
//   BENCH_PG_URL=postgresql://user@host:5432/postgres selects another PostgreSQL server.
//
// The server runs in a child process (this file with --serve), so its RSS is its own and the
// client's request building does not compete with it for the event loop. On PostgreSQL the bounds
// run in this client process: run in the server, their ~50 MB of parameter arrays a run left the
// server's garbage collector work that landed on the service's next create.
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { newId, newIds } from '../src/domain/ids.ts';
import { SERVER_NODE_FLAGS } from './server-flags.ts';
import { ISSUE_TABLE_DDL, issueBound, type BoundContact, type IssueBound } from './create-issue-bounds.ts';

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

/** A contact as the service stores it (metadata keys normalised), for the bounds. */
function boundContact(i: number): BoundContact {
  const c = contact(i);
  return { ...c, metadata: { first_name: c.metadata['First Name'], account_tier: c.metadata['Account Tier'], customer_id: c.metadata.customerId } };
}

/** A Server-Timing value as phase → milliseconds. */
function parseServerTiming(value: string | null): Map<string, number> {
  const out = new Map<string, number>();
  for (const entry of (value ?? '').split(',')) {
    const [name, ...params] = entry.trim().split(';');
    const dur = params.map((p) => /^dur=([\d.]+)$/.exec(p.trim())).find(Boolean);
    if (name && dur) out.set(name, Number(dur[1]));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Server side (child process).

interface ServeInfo {
  /** Peak RSS of the started, idle server (PGlite's WebAssembly, compiled in its first queries, peaks at ~850 MB). */
  idleMaxRssMb: number;
  baseUrl: string;
  apiKey: string;
  accountId: string;
  agentId: string;
  versionId: string;
}

type Command = { cmd: 'raw'; n: number; chunk: number; table: RawTable } | { cmd: 'rss' } | { cmd: 'resetPeak' } | { cmd: 'cpu' } | { cmd: 'stop' };

/** CPU milliseconds spent so far by this process and by the database's server processes. */
interface CpuSnapshot {
  node: number;
  /** null when the database's processes can't be read (not on this machine); PGlite: inside node. */
  db: number | null;
  /** Of `node`, the main thread's share (Linux: /proc/self/task/<pid>/schedstat); the rest is V8's helper threads (GC). */
  mainThread: number | null;
}

/** A raw insert's wall time and the CPU it cost the server process and its database backend. */
interface RawResult {
  ms: number;
  cpuMs: number | null;
}

const nodeCpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** CPU time of one task, from its Linux schedstat (ns on the CPU), or null where it can't be read. */
function schedstatCpuMs(path: string): number | null {
  try {
    return Number(fs.readFileSync(path, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return null;
  }
}

/** A local PostgreSQL backend's CPU time. */
const backendCpuMs = (pid: number) => schedstatCpuMs(`/proc/${pid}/schedstat`);
/** This process's main thread (its JavaScript); the rest of the process's CPU is V8's helper threads. */
const mainThreadCpuMs = () => schedstatCpuMs(`/proc/self/task/${process.pid}/schedstat`);

/** `calls`, or the minimal table: the same columns, a primary key and one index. */
type RawTable = 'calls' | 'min';
const MIN_TABLE = 'bench_min_calls';

/** The process's peak RSS since it started or since the last reset (Linux: /proc VmHWM, reset by clear_refs 5). */
function peakRssMb(): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) / 1024 : (process.resourceUsage().maxRSS * 1024) / MB;
}

/** Starts a new peak from the current RSS; false where /proc can't (the peak is then the process's). */
function resetPeakRss(): boolean {
  try {
    fs.writeFileSync('/proc/self/clear_refs', '5');
    return true;
  } catch {
    return false;
  }
}

async function serve(dbArg: string): Promise<void> {
  const { loadConfig } = await import('../src/config.ts');
  const { createDeps } = await import('../src/bootstrap.ts');
  const { buildApp } = await import('../src/app.ts');
  const { createAccount } = await import('../src/services/accounts/accounts.ts');
  const { addDidNumber, createAgent, createPromptVersion } = await import('../src/services/accounts/catalog.ts');

  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-create-'));
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    PORT: '0',
    HOST: '127.0.0.1',
    RUN_WORKER: 'false',
    SEED_DEMO: 'false',
    SERVER_TIMING: 'true',
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
  const ddl = `CREATE TABLE ${MIN_TABLE} (LIKE calls INCLUDING DEFAULTS);
    ALTER TABLE ${MIN_TABLE} ADD PRIMARY KEY (id);
    CREATE INDEX ON ${MIN_TABLE} (batch_id, seq);
    ${ISSUE_TABLE_DDL}`;
  if (deps.db.pglite) await deps.db.pglite.exec(ddl);
  else await deps.db.pool!.query(ddl);

  // The service's backends: every connection to the bench database but the monitor's own.
  const monitor = deps.db.pglite ? null : new pg.Client({ connectionString: deps.db.url });
  await monitor?.connect();
  async function cpuNow(): Promise<CpuSnapshot> {
    const node = nodeCpuMs();
    const mainThread = mainThreadCpuMs();
    if (!monitor) return { node, db: 0, mainThread };
    const { rows } = await monitor.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
    );
    let db = 0;
    for (const { pid } of rows) {
      const ms = backendCpuMs(pid);
      if (ms === null) return { node, db: null, mainThread };
      db += ms;
    }
    return { node, db, mainThread };
  }

  const target: RawTarget = {
    accountId: account.id,
    agentId: agent.id,
    versionId: version.id,
    pglite: deps.db.pglite ?? null,
    url: deps.db.url ?? '',
  };
  const idleMaxRssMb = peakRssMb();
  // The process's peak over its life: a reset forgets the peak before it, so it is kept here.
  let lifePeakMb = idleMaxRssMb;
  const info: ServeInfo = { baseUrl, apiKey, accountId: account.id, agentId: agent.id, versionId: version.id, idleMaxRssMb };
  process.send!({ ready: info });
  process.on('message', async (m: Command) => {
    if (m.cmd === 'raw') process.send!({ raw: await rawInsert(target, m.n, m.chunk, m.table) });
    else if (m.cmd === 'cpu') process.send!({ cpu: await cpuNow() });
    else if (m.cmd === 'rss') process.send!({ maxRssMb: peakRssMb(), lifeMaxRssMb: Math.max(lifePeakMb, peakRssMb()) });
    else if (m.cmd === 'resetPeak') {
      lifePeakMb = Math.max(lifePeakMb, peakRssMb());
      process.send!({ reset: resetPeakRss() ? process.memoryUsage().rss / MB : null });
    } else if (m.cmd === 'stop') {
      await monitor?.end();
      await app.stop();
      await deps.db.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
      process.exit(0);
    }
  });
}

interface RawTarget {
  accountId: string;
  agentId: string;
  versionId: string;
  /** The server's embedded database, or null for a PostgreSQL server at `url`. */
  pglite: PGlite | null;
  url: string;
}

/**
 * The raw bound: the rows the service would insert, through the bare driver in one transaction.
 * On PGlite it runs in the server process (its database is embedded there); on PostgreSQL in this
 * client process, so that the server's heap carries only the service's garbage.
 */
async function rawInsert(target: RawTarget, n: number, chunk: number, table: RawTable): Promise<RawResult> {
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
  const callsSql = `INSERT INTO ${table === 'min' ? MIN_TABLE : 'calls'} (id, account_id, batch_id, agent_id, prompt_version_id, seq, external_id, name,
    phone_number, alternate_phone, metadata, status, created_at, updated_at)
    SELECT c.id, $1, $2, $3, $4, c.seq, c.ext, c.name, c.phone, c.alt, c.meta, c.status, $5::timestamptz, $5::timestamptz
    FROM unnest($6::text[], $7::int[], $8::text[], $9::text[], $10::text[], $11::text[],
                ARRAY(SELECT m.value FROM jsonb_array_elements($12::jsonb) WITH ORDINALITY AS m(value, n) ORDER BY m.n), $13::text[])
      AS c(id, seq, ext, name, phone, alt, meta, status)`;
  const run = async (query: (sql: string, params: unknown[]) => Promise<unknown>) => {
    if (table === 'calls') await query(batchSql, [batchId, target.accountId, target.agentId, target.versionId, n]);
    for (let start = 0; start < n; start += chunk) {
      const end = Math.min(n, start + chunk);
      const part = (a: unknown[]) => a.slice(start, end);
      await query(callsSql, [
        target.accountId,
        batchId,
        target.agentId,
        target.versionId,
        now,
        part(cols.id),
        part(cols.seq),
        part(cols.ext),
        part(cols.name),
        part(cols.phone),
        part(cols.alt),
        JSON.stringify(part(cols.meta)),
        part(cols.status),
      ]);
    }
  };
  const t0 = performance.now();
  const c0 = nodeCpuMs();
  if (target.pglite) {
    await target.pglite.transaction(async (tx) => run((sql, params) => tx.query(sql, params)));
    return { ms: performance.now() - t0, cpuMs: nodeCpuMs() - c0 };
  }
  const client = new pg.Client({ connectionString: target.url });
  await client.connect();
  const [{ pid }] = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows;
  // Connecting is not part of the bound.
  const t1 = performance.now();
  const c1 = nodeCpuMs();
  const b1 = backendCpuMs(pid);
  await client.query('BEGIN');
  await run((sql, params) => client.query(sql, params));
  await client.query('COMMIT');
  const ms = performance.now() - t1;
  const b2 = backendCpuMs(pid);
  const cpuMs = b1 === null || b2 === null ? null : nodeCpuMs() - c1 + (b2 - b1);
  await client.end();
  return { ms, cpuMs };
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
  runs: number;
  e2eMs: number[];
  minMs: number[];
  callsMs: number[];
  /** CPU milliseconds of each run (server process + database backends), null where unreadable. */
  e2eCpu: CpuSnapshot[];
  minCpu: Array<number | null>;
  callsCpu: Array<number | null>;
  /** Issue 35's bounds, each run's (PostgreSQL only: empty on PGlite). */
  issueMs: Record<IssueBound, number[]>;
  issueCpu: Record<IssueBound, Array<number | null>>;
  /** Each create's phases from the server's Server-Timing header, ms. */
  phases: Array<Map<string, number>>;
  /** The server's peak RSS during the creates of this size (reset before each), and over its life. */
  createPeakRssMb: number;
  lifePeakRssMb: number;
  /** RSS when the peak was reset before the create (the highest of the runs); null: no reset, the peak is the process's. */
  rssBeforeMb: number | null;
  idleRssMb: number;
  load: string;
}

// Goals: the client-timed create at least 0.6 of issue 35's unnest bound on PostgreSQL at 10k
// (median of 9 alternating runs); from issue 17, a 100k create under 600 MB of server RSS and
// PGlite at least 10k contacts/s.
const GOAL_VS_ISSUE_UNNEST = 0.6;
const GOAL_RUNS = 9;
const ISSUE_BOUNDS: IssueBound[] = ['unnest', 'copy', 'calls-copy'];
const RSS_BOUND_MB = 600;
const PGLITE_MIN_RATE = 10_000;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

const rate = (size: number, ms: number) => (size / ms) * 1000;
const loadNow = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

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
  const put = async (payload: string, n: number): Promise<{ ms: number; phases: Map<string, number> }> => {
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
    return { ms, phases: parseServerTiming(res.headers.get('server-timing')) };
  };
  const onPostgres: RawTarget | null =
    dbArg === 'pglite' ? null : { accountId: info.accountId, agentId: info.agentId, versionId: info.versionId, pglite: null, url: dbArg };
  const raw = (n: number, c: number, table: RawTable) =>
    onPostgres ? rawInsert(onPostgres, n, c, table) : ask<RawResult>(child, { cmd: 'raw', n, chunk: c, table }, 'raw');
  const cpu = () => ask<CpuSnapshot>(child, { cmd: 'cpu' }, 'cpu');

  const rows: Row[] = [];
  try {
    // Warm-up (JIT, connection pool, first-use caches); not measured.
    for (let w = 0; w < 3; w++) await put(body(2_000, `warmup-${w}-${crypto.randomUUID()}`), 2_000);
    await raw(2_000, chunk, 'calls');
    await raw(2_000, 2_000, 'min');
    if (onPostgres)
      for (const bound of ISSUE_BOUNDS)
        await issueBound(
          onPostgres.url,
          info,
          Array.from({ length: 2_000 }, (_, i) => boundContact(i)),
          bound,
        );
    await cpu();

    for (const size of sizes) {
      const sizeRuns = size >= 100_000 ? Math.max(1, Math.min(runs, 2)) : runs;
      const row: Row = {
        db: label,
        size,
        runs: sizeRuns,
        e2eMs: [],
        minMs: [],
        callsMs: [],
        e2eCpu: [],
        minCpu: [],
        callsCpu: [],
        createPeakRssMb: 0,
        lifePeakRssMb: 0,
        rssBeforeMb: null,
        issueMs: { unnest: [], copy: [], 'calls-copy': [] },
        issueCpu: { unnest: [], copy: [], 'calls-copy': [] },
        phases: [],
        idleRssMb: info.idleMaxRssMb,
        load: loadNow(),
      };
      const boundContacts = Array.from({ length: size }, (_, i) => boundContact(i));
      let boundsRan = false;
      for (let r = 0; r < sizeRuns; r++) {
        const payload = body(size, `bench-${size}-${r}-${crypto.randomUUID()}`);
        const service = async () => {
          // PGlite runs the bounds inside the server process: their inserts grow its WebAssembly
          // memory, which never shrinks, so on PGlite only the size's first create (before its own
          // bounds; smaller sizes' bounds may have run) measures the service.
          const measuresRss = dbArg !== 'pglite' || !boundsRan;
          const before = await ask<number | null>(child, { cmd: 'resetPeak' }, 'reset');
          if (measuresRss) row.rssBeforeMb = before === null ? null : Math.max(row.rssBeforeMb ?? 0, before);
          const c0 = await cpu();
          const { ms, phases } = await put(payload, size);
          row.e2eMs.push(ms);
          row.phases.push(phases);
          const c1 = await cpu();
          const diff = (x: number | null, y: number | null) => (x === null || y === null ? null : y - x);
          row.e2eCpu.push({ node: c1.node - c0.node, db: diff(c0.db, c1.db), mainThread: diff(c0.mainThread, c1.mainThread) });
          const { maxRssMb } = await askMany<{ maxRssMb: number }>(child, { cmd: 'rss' });
          if (measuresRss) row.createPeakRssMb = Math.max(row.createPeakRssMb, maxRssMb);
        };
        const bounds = async () => {
          boundsRan = true;
          if (onPostgres) {
            for (const bound of ISSUE_BOUNDS) {
              const r = await issueBound(onPostgres.url, info, boundContacts, bound);
              row.issueMs[bound].push(r.ms);
              row.issueCpu[bound].push(r.cpuMs);
            }
          }
          const min = await raw(size, size, 'min');
          row.minMs.push(min.ms);
          row.minCpu.push(min.cpuMs);
          // The calls bound: the better of chunked statements and one statement for all rows.
          const [a, b] = [await raw(size, chunk, 'calls'), await raw(size, size, 'calls')];
          const best = a.ms <= b.ms ? a : b;
          row.callsMs.push(best.ms);
          row.callsCpu.push(best.cpuMs);
        };
        // Alternate which goes first, so a change in the machine's load hits both sides.
        if (r % 2 === 0) await service().then(bounds);
        else await bounds().then(service);
      }
      const { lifeMaxRssMb } = await askMany<{ lifeMaxRssMb: number }>(child, { cmd: 'rss' });
      row.lifePeakRssMb = lifeMaxRssMb;
      row.load += ` → ${loadNow()}`;
      rows.push(row);
      printRow(row);
    }
  } finally {
    child.send({ cmd: 'stop' });
    await new Promise((r) => child.once('exit', r));
  }
  return rows;
}

const f = (x: number, d = 0) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

/** Microseconds of CPU per contact (server process + database backends): steadier than wall time on a busy machine. */
function cpuLine(r: Row): string {
  const us = (ms: number | null) => (ms === null ? null : (ms * 1000) / r.size);
  const service = r.e2eCpu.map((c) => (c.db === null ? null : us(c.node + c.db)));
  if (service.some((x) => x === null) || r.minCpu.some((x) => x === null) || r.callsCpu.some((x) => x === null)) {
    return '  CPU per contact: the database processes are not readable from here\n';
  }
  const s = median(service as number[]);
  const node = median(r.e2eCpu.map((c) => us(c.node)!));
  const min = median(r.minCpu.map((x) => us(x)!));
  const calls = median(r.callsCpu.map((x) => us(x)!));
  const issue = ISSUE_BOUNDS.filter((b) => r.issueCpu[b].length > 0 && r.issueCpu[b].every((x) => x !== null))
    .map(
      (b) => `, issue ${b} ${f(median(r.issueCpu[b].map((x) => us(x)!)), 1)} µs (service/${b} ${f(median(r.issueCpu[b].map((x) => us(x)!)) / s, 2)})`,
    )
    .join('');
  const main = r.e2eCpu.every((c) => c.mainThread !== null) ? median(r.e2eCpu.map((c) => us(c.mainThread)!)) : null;
  const threads = main === null ? '' : `: main thread ${f(main, 1)}, V8's helper threads ${f(Math.max(0, node - main), 1)}`;
  const where = r.db === 'pglite' ? `all in the server process${threads}` : `server process ${f(node, 1)}${threads}`;
  return (
    `  CPU per contact (server process + database): service ${f(s, 1)} µs (${where}), bound min ${f(min, 1)} µs, bound calls ${f(calls, 1)} µs${issue};` +
    ` by CPU service/min ${f(min / s, 2)}, service/calls ${f(calls / s, 2)}\n`
  );
}

/** The medians of the server's phases, in the order it reported them, and what the client waited beyond them. */
function phaseLine(r: Row): string {
  if (r.phases.length === 0 || r.phases.every((p) => p.size === 0)) return '  server phases: no Server-Timing header\n';
  const names = [...new Set(r.phases.flatMap((p) => [...p.keys()]))].filter((n) => n !== 'total');
  const med = (n: string) => median(r.phases.map((p) => p.get(n) ?? 0));
  const serverTotal = med('total');
  const outside = median(r.phases.map((p, i) => r.e2eMs[i] - (p.get('total') ?? 0)));
  return (
    `  server phases, median ms of ${r.phases.length} (Server-Timing): ${names.map((n) => `${n} ${f(med(n), 1)}`).join(', ')}\n` +
    `    server total ${f(serverTotal, 1)} ms; client time beyond it ${f(outside, 1)} ms (sending the body before the handler runs, the answer's transfer, the client's parse)\n`
  );
}

const LABEL = 26;

function printRow(r: Row) {
  const e2e = median(r.e2eMs);
  const min = median(r.minMs);
  const calls = median(r.callsMs);
  const spread = (xs: number[]) => (xs.length > 1 ? ` [${f(rate(r.size, Math.max(...xs)))}-${f(rate(r.size, Math.min(...xs)))}]` : '');
  const issueLine = (b: IssueBound, goal: string) => {
    const xs = r.issueMs[b];
    if (xs.length === 0) return '';
    const ms = median(xs);
    return `  ${(b === 'calls-copy' ? 'floor calls-copy' : `bound issue ${b}`).padEnd(LABEL)} ${f(ms).padStart(6)} ms = ${f(rate(r.size, ms)).padStart(7)} rows/s${spread(xs)}   service/${b} ${f(ms / e2e, 2)}${goal}\n`;
  };
  console.log(
    `${r.db.padEnd(8)} ${f(r.size).padStart(7)} contacts, median of ${r.runs} (load ${r.load}):\n` +
      `  ${'service (client-timed PUT)'.padEnd(LABEL)} ${f(e2e).padStart(6)} ms = ${f(rate(r.size, e2e)).padStart(7)} contacts/s${spread(r.e2eMs)}\n` +
      issueLine('unnest', ` (goal ≥ ${GOAL_VS_ISSUE_UNNEST} on postgres at 10k, median of ${GOAL_RUNS})`) +
      issueLine('copy', '') +
      issueLine('calls-copy', " (the service's COPY into calls alone, no screening: a floor, not a bound)") +
      `  ${'bound min'.padEnd(LABEL)} ${f(min).padStart(6)} ms = ${f(rate(r.size, min)).padStart(7)} rows/s${spread(r.minMs)}   service/min    ${f(min / e2e, 2)} (issue 17's bound)\n` +
      `  ${'bound calls'.padEnd(LABEL)} ${f(calls).padStart(6)} ms = ${f(rate(r.size, calls)).padStart(7)} rows/s${spread(r.callsMs)}   service/calls  ${f(calls / e2e, 2)}\n` +
      phaseLine(r) +
      cpuLine(r) +
      `  server peak RSS during the create ${f(r.createPeakRssMb)} MB (bound ${RSS_BOUND_MB} MB at 100k; ` +
      `${r.rssBeforeMb === null ? 'not reset: the whole process' : `RSS before it ${f(r.rssBeforeMb)} MB`}); ` +
      `whole process ${f(r.lifePeakRssMb)} MB, of which startup ${f(r.idleRssMb)} MB`,
  );
}

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback;
}

async function main() {
  if (process.argv.includes('--serve')) return serve(process.argv[process.argv.indexOf('--serve') + 1]);

  const sizes = arg('sizes', '1000,10000,100000').split(',').map(Number);
  const runs = Number(arg('runs', String(GOAL_RUNS)));
  const targets = arg('db', 'pglite,postgres').split(',');
  const { CALL_CHUNK_SIZE } = await import('../src/services/batches/insert-calls.ts');
  const chunk = Number(arg('chunk', String(CALL_CHUNK_SIZE.postgres)));
  console.log(
    `create-batch benchmark: sizes ${sizes.join(', ')}; ${runs} runs each (100k: ≤2); calls-bound chunk ${chunk}; node ${process.version}; ${os.cpus().length} CPUs; load ${loadNow()}`,
  );

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
  console.log(`\ntargets (load now ${loadNow()}):`);
  const pg10k = at('postgres', 10_000);
  if (pg10k) {
    const bound = median(pg10k.issueMs.unnest);
    const ratio = bound / median(pg10k.e2eMs);
    const runsNote = pg10k.runs >= GOAL_RUNS ? `median of ${pg10k.runs}` : `median of ${pg10k.runs}: fewer than the goal's ${GOAL_RUNS} runs`;
    check(
      ratio >= GOAL_VS_ISSUE_UNNEST && pg10k.runs >= GOAL_RUNS,
      `postgres 10k: client-timed PUT ${f(rate(10_000, median(pg10k.e2eMs)))} contacts/s = ${f(ratio, 2)} of the issue's unnest bound ` +
        `(${f(rate(10_000, bound))} rows/s; ${runsNote}; goal ≥ ${GOAL_VS_ISSUE_UNNEST})`,
    );
  }
  for (const db of ['pglite', 'postgres']) {
    const big = at(db, 100_000);
    if (big)
      check(big.createPeakRssMb < RSS_BOUND_MB, `${db} 100k: server peak RSS during the create ${f(big.createPeakRssMb)} MB < ${RSS_BOUND_MB} MB`);
  }
  const lite = rows.filter((r) => r.db === 'pglite');
  if (lite.length) {
    const worst = Math.min(...lite.map((r) => rate(r.size, median(r.e2eMs))));
    check(worst >= PGLITE_MIN_RATE, `pglite: slowest size ${f(worst)} contacts/s >= ${f(PGLITE_MIN_RATE)}`);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
