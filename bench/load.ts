// Sustained mixed-load benchmark (not a test): `npm run bench:load`.
//
// Starts the real server (src/main.ts, RUN_WORKER=true) on loopback, seeds two accounts through the
// admin API, starts one large immediate batch so the dispatch worker is busy throughout, then for
// BENCH_SECONDS runs BENCH_CONNECTIONS concurrent clients issuing a mix of creates (PUT, new
// idempotency key each), batch-detail reads and list reads (batches, a batch's calls) as either
// account. Account A has a budget it never reaches; account B's budget is deliberately small, so
// its 429s are the intended ones. Prints throughput, latency percentiles, status counts, the
// server's RSS over time, the dispatch batch's progress, and checks afterwards that every accepted
// batch and call is present.
//
// It runs twice, each time on a fresh server and database holding the same data (a third account,
// the attacker's, with its dialling batch and the batch and do-not-call list its attacks read):
// calm (the mix alone), then hostile (the same mix while bench/hostile-attacks.ts, in a process of
// its own (bench/attacker.ts), sends the attacks of issues 13 and 31 from that account and from no
// account at all). Side by side it prints the legitimate clients' p99 and unexpected
// errors and the server's peak RSS, with the bounds: hostile p99 at most 2x the calm one, no
// unexpected error, peak RSS under 600 MiB. Any bound missed exits 1.
//
// Environment: BENCH_PG_URL (PostgreSQL server where a throwaway database may be created;
// default postgresql://postgres@127.0.0.1:5432/postgres; `pglite` = embedded database in a temp
// dir), BENCH_SECONDS (60), BENCH_CONNECTIONS (32), BENCH_DISPATCH_CONTACTS (2000),
// BENCH_SIM_CALL_MS (1500), BENCH_B_RATE_LIMIT (per minute, 300), BENCH_CREATE_CONTACTS (10),
// BENCH_PHASES (`calm,hostile`), BENCH_ATTACKS (comma-separated parts of attack names: only those;
// a part no name contains, `none`, runs the hostile phase's seeding with no attack),
// BENCH_ATTACKER_RATE_LIMIT (the attacking account's requests per minute, 600 = the default),
// BENCH_ATTACK_IN_FLIGHT (the attacker's requests in flight, going round the attacks: 4; `fleet` =
// every attack at once with its own loops, 20 in flight plus socket storms),
// BENCH_ATTACKER_BATCH (calls in the attacker's batch that the export attack reads: 10,000),
// BENCH_ATTACKER_SUPPRESSIONS (do-not-call numbers the deep-page attack reads: 100,000).
import { fork, spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVER_NODE_FLAGS } from './server-flags.ts';
import { throwawayDatabase } from './throwaway-database.ts';
import type { AttackReport, AttackTarget } from './hostile-attacks.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const DB_BASE = process.env.BENCH_PG_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const SECONDS = num('BENCH_SECONDS', 60);
const CONNECTIONS = num('BENCH_CONNECTIONS', 32);
const DISPATCH_CONTACTS = num('BENCH_DISPATCH_CONTACTS', 2000);
const SIM_CALL_MS = num('BENCH_SIM_CALL_MS', 1500);
const B_RATE = num('BENCH_B_RATE_LIMIT', 300);
const CREATE_CONTACTS = num('BENCH_CREATE_CONTACTS', 10);
const C_RATE = num('BENCH_ATTACKER_RATE_LIMIT', 600);
const ATTACKER_BATCH = num('BENCH_ATTACKER_BATCH', 10_000);
const ATTACKER_SUPPRESSIONS = num('BENCH_ATTACKER_SUPPRESSIONS', 100_000);
const PHASES = (process.env.BENCH_PHASES ?? 'calm,hostile').split(',').map((p) => p.trim()) as Phase[];
const ATTACK_FILTER = (process.env.BENCH_ATTACKS ?? '')
  .split(',')
  .map((a) => a.trim())
  .filter(Boolean);
const ATTACK_IN_FLIGHT = process.env.BENCH_ATTACK_IN_FLIGHT === 'fleet' ? 'fleet' : num('BENCH_ATTACK_IN_FLIGHT', 4);
const MAX_P99_RATIO = 2;
const MAX_RSS_MIB = 600;
type Phase = 'calm' | 'hostile';
const ADMIN_TOKEN = `bench-admin-${crypto.randomBytes(12).toString('hex')}`;
const APP_SECRET = 'bench-app-secret-0123456789abcdef0123456789';
const API = '/api/v1/public';

const log = (msg = '') => process.stdout.write(msg + '\n');

// ---------------------------------------------------------------------------------------------
// Database and server

interface Storage {
  env: Record<string, string>;
  label: string;
  drop(): Promise<void>;
}

async function storage(): Promise<Storage> {
  if (DB_BASE !== 'pglite') {
    try {
      const { url, drop } = await throwawayDatabase(DB_BASE, 'cbs_load');
      const u = new URL(url);
      return { env: { DATABASE_URL: url }, label: `PostgreSQL (${u.host}, throwaway database ${u.pathname.slice(1)})`, drop };
    } catch (e) {
      log(`PostgreSQL at ${DB_BASE} not usable (${(e as Error).message}); using embedded PGlite.`);
    }
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cbs-load-'));
  return { env: { DATA_DIR: dir }, label: `embedded PGlite (${dir})`, drop: async () => fs.rmSync(dir, { recursive: true, force: true }) };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

function withoutDatabaseUrl(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { DATABASE_URL: _ignored, ...rest } = env;
  return rest;
}

async function startServer(db: Storage): Promise<{ base: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, '--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: {
      // The shell's DATABASE_URL must not override the database chosen here (PGlite has none).
      ...withoutDatabaseUrl(process.env),
      ...db.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      RUN_WORKER: 'true',
      SEED_DEMO: 'false',
      SIM_CALL_MS: String(SIM_CALL_MS),
      // The dispatch batch must dial whatever the hour: under the us_tcpa default it waits out the night.
      DEFAULT_COMPLIANCE_PROFILES: 'none',
      ADMIN_TOKEN,
      APP_SECRET,
      LOG_LEVEL: 'error',
      NODE_ENV: 'production',
      // Attackers claim their own addresses (X-Forwarded-For), as they would behind a proxy.
      TRUST_PROXY: 'true',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
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

function rssMiB(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  return kb / 1024;
}

// ---------------------------------------------------------------------------------------------
// Seeding through the admin API

interface Account {
  label: string;
  id: string;
  key: string;
  agentId: string;
  versionId: string;
}

async function admin<T>(base: string, query: string, variables: Record<string, unknown>, actAs?: string): Promise<T> {
  const headers: Record<string, string> = { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_TOKEN}` };
  if (actAs) headers['x-act-as-account'] = actAs;
  const res = await fetch(`${base}/graphql`, { method: 'POST', headers, body: JSON.stringify({ query, variables }) });
  const body = (await res.json()) as { data?: T; errors?: Array<{ message: string }> };
  if (body.errors?.length || !body.data) throw new Error(`admin API: ${JSON.stringify(body.errors)}`);
  return body.data;
}

async function seedAccount(base: string, label: string, rateLimitPerMinute: number): Promise<Account> {
  const created = await admin<{ adminCreateAccount: { account: { id: string }; apiKey: string } }>(
    base,
    `mutation($input: AdminCreateAccountInput!) { adminCreateAccount(input: $input) { account { id } apiKey } }`,
    {
      input: {
        name: `Load ${label}`,
        email: `load-${label.toLowerCase()}@example.com`,
        limits: { maxBatchSize: 100_000, maxConcurrentCalls: 100, maxCallDurationSeconds: 600, rateLimitPerMinute },
        batchConcurrency: 50,
        voices: ['alloy', 'verse'],
      },
    },
  );
  const id = created.adminCreateAccount.account.id;
  const agent = await admin<{ createAgent: { id: string } }>(
    base,
    `mutation($input: CreateAgentInput!) { createAgent(input: $input) { id } }`,
    { input: { name: 'Load agent', voice: 'alloy', outcomeKeys: ['interested'] } },
    id,
  );
  const version = await admin<{ createPromptVersion: { id: string } }>(
    base,
    `mutation($input: CreatePromptVersionInput!) { createPromptVersion(input: $input) { id } }`,
    { input: { agentId: agent.createAgent.id, name: 'v1', prompt: 'You are a friendly assistant.' } },
    id,
  );
  await admin(base, `mutation($input: AddDidNumberInput!) { addDidNumber(input: $input) { id } }`, { input: { number: '+14155550100' } }, id);
  return { label, id, key: created.adminCreateAccount.apiKey, agentId: agent.createAgent.id, versionId: version.createPromptVersion.id };
}

let phoneSeq = 0;
function createBody(a: Account, contacts: number, startMode: string, idempotencyKey: string) {
  return {
    agent_id: a.agentId,
    version_id: a.versionId,
    interruption: true,
    use_alternate_number: false,
    start_mode: startMode,
    schedule_date: '2030-01-15',
    schedule_time: '09:30',
    schedule_timezone: 'America/New_York (EST, UTC-05:00)',
    idempotency_key: idempotencyKey,
    contacts: Array.from({ length: contacts }, (_, i) => {
      // A valid San Francisco number (exchange 2xx–9xx) ending in 4–9: the simulator completes these calls.
      const n = 2_000_000 + ((phoneSeq++ * 10) % 7_999_990) + 4 + (i % 6);
      return { contact_id: `c${i}`, phone_number: `+1415${n}`, metadata: { seq: i } };
    }),
  };
}

// ---------------------------------------------------------------------------------------------
// Load

type Op = 'create' | 'detail' | 'list-batches' | 'list-calls';
const MIX: Array<[Op, number]> = [
  ['create', 15],
  ['detail', 40],
  ['list-batches', 25],
  ['list-calls', 20],
];

interface Stats {
  latencies: Record<Op, number[]>;
  /** Each answered request: when it ended (ms after the start) and how long it took, for the timeline. */
  finished: Array<{ at: number; ms: number }>;
  statuses: Record<Op, Map<number, number>>;
  intended429: number;
  /** First few unexpected responses, for the report. */
  unexpected: Array<{ op: Op; account: string; status: number; body: string }>;
  unexpectedCount: number;
  networkErrors: number;
}

function pick<T>(weighted: Array<[T, number]>): T {
  const total = weighted.reduce((s, [, w]) => s + w, 0);
  let r = Math.random() * total;
  for (const [v, w] of weighted) if ((r -= w) < 0) return v;
  return weighted[0][0];
}

function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

interface PhaseFigures {
  phase: Phase;
  reqPerSec: number;
  p50: number;
  p99: number;
  unexpected: number;
  networkErrors: number;
  peakRssMiB: number;
  consistent: boolean;
  attacks: AttackReport[];
}

/** The attacker's own batch: contacts with the largest metadata allowed, dialled, so its reads return full records. */
function fullMetadataContacts(n: number) {
  return Array.from({ length: n }, (_, i) => ({
    contact_id: `m${i}`,
    phone_number: `+1415${2_000_000 + i * 10 + 4}`,
    metadata: Object.fromEntries(Array.from({ length: 8 }, (_, k) => [`field_${k}`, 'x'.repeat(950)])),
  }));
}

/**
 * What the round-two attacks read: a batch of BENCH_ATTACKER_BATCH calls (manual, never dialled) to
 * export, and BENCH_ATTACKER_SUPPRESSIONS do-not-call numbers to page through, added as the operator
 * (no budget) 1,000 a request.
 */
async function seedAttackerLists(base: string, c: Account): Promise<{ bigBatchId: string; suppressions: number }> {
  const t0 = performance.now();
  const r = await fetch(`${base}${API}/call-batches`, {
    method: 'POST',
    headers: { authorization: `Bearer ${c.key}`, 'content-type': 'application/json' },
    body: JSON.stringify(createBody(c, ATTACKER_BATCH, 'manual', crypto.randomUUID())),
  });
  const body = (await r.json()) as { data: { batch_id: string } };
  if (r.status !== 201) throw new Error(`attacker's big batch not created: ${r.status} ${JSON.stringify(body)}`);
  const numbers = (from: number) => Array.from({ length: 1_000 }, (_, i) => `+1212${2_000_000 + from + i}`);
  for (let from = 0; from < ATTACKER_SUPPRESSIONS; from += 1_000 * 4) {
    await Promise.all(
      [0, 1, 2, 3]
        .map((k) => from + k * 1_000)
        .filter((f) => f < ATTACKER_SUPPRESSIONS)
        .map((f) =>
          admin(base, `mutation($n: [String!]!) { addSuppressions(phoneNumbers: $n, reason: "bench") { added } }`, { n: numbers(f) }, c.id),
        ),
    );
  }
  log(
    `  and a ${ATTACKER_BATCH}-call batch to export, ${ATTACKER_SUPPRESSIONS} do-not-call numbers to page (seeded in ${((performance.now() - t0) / 1000).toFixed(1)} s).`,
  );
  return { bigBatchId: body.data.batch_id, suppressions: ATTACKER_SUPPRESSIONS };
}

/** Forks bench/attacker.ts (its own event loop, so it does not delay the measured clients) and starts the attacks. */
async function startAttacker(target: AttackTarget): Promise<{ stop(): Promise<AttackReport[]> }> {
  const child = fork(path.join(ROOT, 'bench/attacker.ts'), [], { execArgv: ['--import', 'tsx'], serialization: 'advanced', stdio: 'inherit' });
  const next = () =>
    new Promise<{ started?: boolean; reports?: AttackReport[] }>((resolve, reject) => {
      child.once('message', resolve);
      child.once('exit', (code) => reject(new Error(`attacker exited with ${code}`)));
    });
  const started = next();
  child.send({ target, only: ATTACK_FILTER, inFlight: ATTACK_IN_FLIGHT });
  await started;
  return {
    async stop() {
      const done = next();
      child.send({ stop: true });
      return (await done).reports!;
    },
  };
}

/** The slowest answer ending in each 5 s of the run: shows whether slow answers are spread or one stall. */
function timeline(finished: Array<{ at: number; ms: number }>, elapsedSeconds: number): string[] {
  const slots = Array.from({ length: Math.ceil(elapsedSeconds / 5) }, () => 0);
  for (const f of finished) {
    const i = Math.min(slots.length - 1, Math.floor(f.at / 5000));
    slots[i] = Math.max(slots[i], f.ms);
  }
  return slots.map((ms) => ms.toFixed(0));
}

async function runPhase(phase: Phase): Promise<PhaseFigures> {
  const db = await storage();
  let server: ChildProcess | undefined;
  try {
    log(`\n=== ${phase} phase: ${SECONDS} s, ${CONNECTIONS} concurrent clients on loopback, database: ${db.label}`);
    const started = await startServer(db);
    server = started.child;
    const base = started.base;
    const [A, B] = [await seedAccount(base, 'A', 10_000_000), await seedAccount(base, 'B', B_RATE)];
    log(`Accounts: A (rate limit 10,000,000/min), B (rate limit ${B_RATE}/min: its 429s are intended).`);
    // "A normal key" (issue 13): the attacker's account has the default budget unless told otherwise.
    // Both phases hold the same data (C's account, its dialling batch and the lists the attacks read):
    // the phases then differ only by the attacks, not by a larger database and its aftermath.
    const C = await seedAccount(base, 'C', C_RATE);
    const r = await fetch(`${base}${API}/call-batches`, {
      method: 'POST',
      headers: { authorization: `Bearer ${C.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...createBody(C, 0, 'immediate', crypto.randomUUID()), contacts: fullMetadataContacts(200) }),
    });
    if (r.status !== 201) throw new Error(`attacker batch not created: ${r.status} ${await r.text()}`);
    const attacking =
      phase === 'hostile'
        ? `attacks in flight: ${ATTACK_IN_FLIGHT === 'fleet' ? 'fleet (every attack at once)' : ATTACK_IN_FLIGHT}`
        : 'no attack in this phase';
    log(`Attacker account C (rate limit ${C_RATE}/min): a 200-contact batch with 8 KiB of metadata per contact, dialling; ${attacking}.`);
    const attackerBig = await seedAttackerLists(base, C);

    const auth = (a: Account) => ({ authorization: `Bearer ${a.key}` });
    const dispatch = await fetch(`${base}${API}/call-batches`, {
      method: 'PUT',
      headers: { ...auth(A), 'content-type': 'application/json' },
      body: JSON.stringify(createBody(A, DISPATCH_CONTACTS, 'immediate', crypto.randomUUID())),
    });
    const dispatchBody = (await dispatch.json()) as { data: { batch_id: string; accepted_contacts: number } };
    if (dispatch.status !== 201) throw new Error(`dispatch batch not created: ${dispatch.status} ${JSON.stringify(dispatchBody)}`);
    const dispatchId = dispatchBody.data.batch_id;
    log(`Dispatch batch ${dispatchId}: ${dispatchBody.data.accepted_contacts} contacts, immediate, SIM_CALL_MS=${SIM_CALL_MS}.`);

    const accepted = new Map<string, { account: Account; accepted: number }>([
      [dispatchId, { account: A, accepted: dispatchBody.data.accepted_contacts }],
    ]);
    const ids: Record<string, string[]> = { A: [dispatchId], B: [] };
    const stats: Stats = {
      latencies: { create: [], detail: [], 'list-batches': [], 'list-calls': [] },
      finished: [],
      statuses: { create: new Map(), detail: new Map(), 'list-batches': new Map(), 'list-calls': new Map() },
      intended429: 0,
      unexpected: [],
      unexpectedCount: 0,
      networkErrors: 0,
    };

    // Warm-up (JIT, pools), then the RSS baseline.
    for (let i = 0; i < 50; i++) await fetch(`${base}${API}/call-batches?limit=10`, { headers: auth(A) }).then((r) => r.arrayBuffer());
    const rss: Array<{ t: number; mib: number }> = [{ t: 0, mib: rssMiB(server.pid!) }];
    const t0 = performance.now();
    const deadline = t0 + SECONDS * 1000;
    const sampler = setInterval(() => rss.push({ t: (performance.now() - t0) / 1000, mib: rssMiB(server!.pid!) }), 1000);
    const attacks =
      phase === 'hostile' ? await startAttacker({ base, key: C.key, agentId: C.agentId, versionId: C.versionId, ...attackerBig }) : null;

    async function request(op: Op, account: Account): Promise<void> {
      const own = ids[account.label];
      // Reads by id need one of the account's own batches; until it has one, list instead.
      if (!own.length && (op === 'detail' || op === 'list-calls')) op = 'list-batches';
      const anyId = own[Math.floor(Math.random() * own.length)];
      let url: string;
      let init: RequestInit = { headers: auth(account) };
      switch (op) {
        case 'create':
          url = `${base}${API}/call-batches`;
          init = {
            method: 'PUT',
            headers: { ...auth(account), 'content-type': 'application/json' },
            body: JSON.stringify(createBody(account, CREATE_CONTACTS, Math.random() < 0.2 ? 'immediate' : 'manual', crypto.randomUUID())),
          };
          break;
        case 'detail':
          url = `${base}${API}/call-batches/${anyId}`;
          break;
        case 'list-batches':
          url = `${base}${API}/call-batches?limit=50&page=${1 + Math.floor(Math.random() * 3)}`;
          break;
        case 'list-calls':
          url = `${base}${API}/call-batches/${account === A && Math.random() < 0.5 ? dispatchId : anyId}/calls?limit=100`;
          break;
      }
      const t = performance.now();
      let status: number;
      let text: string;
      try {
        const res = await fetch(url, init);
        status = res.status;
        text = await res.text();
      } catch {
        stats.networkErrors++;
        return;
      }
      stats.latencies[op].push(performance.now() - t);
      stats.finished.push({ at: performance.now() - t0, ms: performance.now() - t });
      stats.statuses[op].set(status, (stats.statuses[op].get(status) ?? 0) + 1);
      // Reads only use the account's own ids, so a 404 is as unexpected as a 5xx.
      if (status === 429 && account === B) {
        stats.intended429++;
        return;
      }
      if (status >= 400) {
        stats.unexpectedCount++;
        if (stats.unexpected.length < 5) stats.unexpected.push({ op, account: account.label, status, body: text.slice(0, 300) });
        return;
      }
      if (op === 'create') {
        const body = JSON.parse(text) as { data: { batch_id: string; accepted_contacts: number } };
        accepted.set(body.data.batch_id, { account, accepted: body.data.accepted_contacts });
        ids[account.label].push(body.data.batch_id);
      }
    }

    await Promise.all(
      Array.from({ length: CONNECTIONS }, async (_, c) => {
        while (performance.now() < deadline) await request(pick(MIX), c % 4 === 3 ? B : A);
      }),
    );
    const attackReports = (await attacks?.stop()) ?? [];
    clearInterval(sampler);
    const elapsed = (performance.now() - t0) / 1000;
    rss.push({ t: elapsed, mib: rssMiB(server.pid!) });

    // ----- figures
    const all = Object.values(stats.latencies)
      .flat()
      .sort((x, y) => x - y);
    log();
    log(
      `Requests: ${all.length} in ${elapsed.toFixed(1)} s = ${(all.length / elapsed).toFixed(0)} req/s; p50 ${percentile(all, 50).toFixed(1)} ms, p99 ${percentile(all, 99).toFixed(1)} ms, max ${all[all.length - 1]?.toFixed(0)} ms`,
    );
    log(`  ${'operation'.padEnd(13)} ${'count'.padStart(7)} ${'req/s'.padStart(7)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)}  statuses`);
    for (const [op] of MIX) {
      const l = stats.latencies[op].sort((x, y) => x - y);
      const st = [...stats.statuses[op]]
        .sort()
        .map(([s, n]) => `${s}×${n}`)
        .join(' ');
      log(
        `  ${op.padEnd(13)} ${String(l.length).padStart(7)} ${(l.length / elapsed).toFixed(0).padStart(7)} ${percentile(l, 50).toFixed(1).padStart(8)} ${percentile(l, 99).toFixed(1).padStart(8)}  ${st}`,
      );
    }
    log(`Slowest answer per 5 s (ms, by when it ended): ${timeline(stats.finished, elapsed).join(' ')}`);
    const { unexpectedCount } = stats;
    log(
      `Errors: ${unexpectedCount} unexpected (non-2xx other than account B's 429s), ${stats.networkErrors} network errors; intended 429s (account B): ${stats.intended429}`,
    );
    for (const u of stats.unexpected) log(`  ${u.op} as ${u.account}: ${u.status} ${u.body}`);

    log(
      `Server RSS (MiB) every 5 s: ${rss
        .filter((_, i) => i % 5 === 0)
        .map((s) => s.mib.toFixed(0))
        .join(' ')}`,
    );
    const third = rss.filter((s) => s.t >= elapsed / 3);
    const mid = third[0]?.mib ?? rss[0].mib;
    const end = rss[rss.length - 1].mib;
    log(
      `  baseline ${rss[0].mib.toFixed(0)}, at ${third[0]?.t.toFixed(0) ?? 0} s ${mid.toFixed(0)}, end ${end.toFixed(0)}: growth over the last two thirds ${(end - mid).toFixed(0)} MiB (${(((end - mid) / mid) * 100).toFixed(1)} %)`,
    );

    // ----- dispatch progress
    const progress = (await (await fetch(`${base}${API}/call-batches/${dispatchId}`, { headers: auth(A) })).json()) as {
      data: Record<string, unknown>;
    };
    const d = progress.data;
    log(
      `Load average at the end: ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
    log(
      `Dispatch batch after the run: status ${d.status}, queued ${d.queued}, in_progress ${d.in_progress}, completed ${d.completed}, failed ${d.failed}, cancelled ${d.cancelled}`,
    );

    // ----- consistency: every accepted batch and its calls are there (operator API: no budget)
    let missing = 0;
    let wrongCalls = 0;
    const entries = [...accepted];
    const checkOne = async ([id, { account, accepted: n }]: [string, { account: Account; accepted: number }]) => {
      const r = await admin<{ batch: { acceptedContacts: number }; calls: { pagination: { total: number } } }>(
        base,
        `query($id: ID!) { batch(id: $id) { acceptedContacts } calls(batchId: $id, limit: 1) { pagination { total } } }`,
        { id },
        account.id,
      ).catch(() => null);
      if (!r) missing++;
      else if (r.batch.acceptedContacts !== n || r.calls.pagination.total !== n) wrongCalls++;
    };
    for (let i = 0; i < entries.length; i += 16) await Promise.all(entries.slice(i, i + 16).map(checkOne));
    const totalCalls = entries.reduce((s, [, v]) => s + v.accepted, 0);
    log(
      `Consistency: ${entries.length} accepted batches with ${totalCalls} calls checked: ${missing} missing, ${wrongCalls} with a wrong call count`,
    );
    for (const a of attackReports) {
      const outcomes = [...a.outcomes]
        .sort((x, y) => y[1] - x[1])
        .map(([o, n]) => `${o}×${n}`)
        .join(' ');
      log(`  attack ${a.name.padEnd(48)} ${String(a.sent).padStart(6)} sent: ${outcomes}`);
    }
    return {
      phase,
      reqPerSec: all.length / elapsed,
      p50: percentile(all, 50),
      p99: percentile(all, 99),
      unexpected: unexpectedCount,
      networkErrors: stats.networkErrors,
      peakRssMiB: Math.max(...rss.map((s) => s.mib)),
      consistent: !missing && !wrongCalls,
      attacks: attackReports,
    };
  } finally {
    if (server && server.exitCode === null) {
      server.kill('SIGTERM');
      await new Promise((r) => server!.once('exit', r));
    }
    await db.drop();
  }
}

function compare(figures: PhaseFigures[]): void {
  const calm = figures.find((f) => f.phase === 'calm');
  const hostile = figures.find((f) => f.phase === 'hostile');
  const row = (name: string, value: (f: PhaseFigures) => string, bound: string, ok: boolean) =>
    log(`  ${name.padEnd(26)} ${figures.map((f) => value(f).padStart(10)).join(' ')}   ${bound.padEnd(28)} ${ok ? 'PASS' : 'FAIL'}`);
  log(`\n=== Side by side (legitimate clients: accounts A and B)`);
  log(`  ${''.padEnd(26)} ${figures.map((f) => f.phase.padStart(10)).join(' ')}   bound`);
  row('requests/s', (f) => f.reqPerSec.toFixed(0), '', true);
  row('p50 ms', (f) => f.p50.toFixed(1), '', true);
  const p99Bound = calm ? calm.p99 * MAX_P99_RATIO : Infinity;
  row('p99 ms', (f) => f.p99.toFixed(1), `hostile <= ${MAX_P99_RATIO} x calm = ${p99Bound.toFixed(1)}`, !hostile || hostile.p99 <= p99Bound);
  const errorsOk = figures.every((f) => f.unexpected === 0 && f.networkErrors === 0);
  row('unexpected errors', (f) => String(f.unexpected + f.networkErrors), '0', errorsOk);
  row(
    'API peak RSS MiB',
    (f) => f.peakRssMiB.toFixed(0),
    `< ${MAX_RSS_MIB}`,
    figures.every((f) => f.peakRssMiB < MAX_RSS_MIB),
  );
  row(
    'batches and calls intact',
    (f) => (f.consistent ? 'yes' : 'NO'),
    'yes',
    figures.every((f) => f.consistent),
  );
  const attack5xx =
    hostile?.attacks.flatMap((a) => [...a.outcomes.keys()].filter((o) => /^5\d\d$|^error/.test(o)).map((o) => `${a.name}: ${o}`)) ?? [];
  if (hostile) row('attacks answered 5xx/error', () => String(attack5xx.length), '0', attack5xx.length === 0);
  for (const line of attack5xx) log(`    ${line}`);
  const failed =
    (hostile && hostile.p99 > p99Bound) || !errorsOk || figures.some((f) => f.peakRssMiB >= MAX_RSS_MIB || !f.consistent) || attack5xx.length > 0;
  if (failed) process.exitCode = 1;
}

async function main() {
  log(
    `Machine: ${os.cpus().length} CPUs, load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} (other processes share them)`,
  );
  const figures: PhaseFigures[] = [];
  for (const phase of PHASES) figures.push(await runPhase(phase));
  compare(figures);
}

main().catch((e) => {
  process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
