// Benchmark (not a test): live progress fan-out on PostgreSQL with the API and the worker as
// separate processes.
//
//   npm run bench:subscriptions [-- --subscribers 1000 --calls 10000 --concurrency 500 --sim-call-ms 100 --workers 1
//                                  --client-processes 0 --writer worker|sql --client lean|graphql-ws --server api|floor]
//   BENCH_PG_URL=postgresql://user@host:5432/postgres selects the server (a throwaway database is
//   created and dropped).
//
// What runs: a throwaway database seeded with one manual batch of `calls` calls; `src/main.ts` as
// the API process (no worker inside); `subscribers` graphql-ws clients in this process (or split
// over `client-processes` child processes), each on its own WebSocket, subscribed to batchProgress
// of that batch; `workers` `src/worker.ts` processes.
// Once every client has the initial value the batch is started, and runs to completion.
//
// Figures:
//   delivery latency  client receive time - the batch row's updated_at of that value (stamped by
//                     the worker when it wrote the change, before commit): commit + NOTIFY + the
//                     hub's wait (coalescing) + fan-out + WebSocket + client parse; printed beside
//                     it, split: the NOTIFY alone (a plain LISTEN in this process), and the API's
//                     own wait and fan-out (its callbatch_live_progress_stage_seconds histogram);
//   messages/client   values each client received (the initial one included);
//   API CPU and RSS   of the API process, from /proc, over the run (CPU: % of one core).
// `--server floor` puts the clients on bench/bare-fanout-server.ts instead (a LISTEN and a bare
// ws.send loop): what any server reaches on this machine, beside the API in alternating runs.
// Run it with `--client-processes 1`: the NOTIFY probe then has this process to itself; with the
// clients beside it the probe reads late whenever the clients are busy, and a server that sends
// more values (the floor) raises its own bound.
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import WebSocket from 'ws';
import { createClient, type Client } from 'graphql-ws';
import { SERVER_NODE_FLAGS, WORKER_NODE_FLAGS } from './server-flags.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SERVER = process.env.BENCH_PG_URL || process.env.TEST_DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/postgres';
const APP_SECRET = 'bench-app-secret-0123456789abcdef0123456789';
const METRICS_TOKEN = 'bench-metrics-token-0123456789';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback;
}
const SUBSCRIBERS = Number(arg('subscribers', '1000'));
const CALLS = Number(arg('calls', '10000'));
const CONCURRENCY = Number(arg('concurrency', '500'));
const SIM_CALL_MS = Number(arg('sim-call-ms', '100'));
const WORKERS = Number(arg('workers', '1'));
// `lean`: a minimal graphql-transport-ws client (one JSON.parse per message, timestamp taken on
// arrival), so 1,000 clients sharing this one process measure the server rather than themselves;
// `graphql-ws`: the graphql-ws library's client.
const CLIENT = arg('client', 'lean') as 'lean' | 'graphql-ws';
// `worker`: real src/worker.ts processes dial the calls. `sql`: this process moves the counters
// itself (5 calls per transaction, a transaction every 5 ms), isolating the API's part from the
// worker's CPU on a small machine.
const WRITER = arg('writer', 'worker') as 'worker' | 'sql';
// 0: the clients run in this process; N: in N child processes (subscribers split evenly), so that
// this process's own work (the SQL writer, the NOTIFY probe) does not delay their receipts.
const CLIENT_PROCESSES = Number(arg('client-processes', '0'));
// `api`: the clients subscribe on the service's API process. `floor`: on bench/bare-fanout-server.ts,
// which only LISTENs and writes the newest value with a bare ws.send to every socket (the API
// process still runs, without subscribers, to start the batch): what any server gets on this machine.
const SERVER_KIND = arg('server', 'api') as 'api' | 'floor';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const withDb = (url: string, db: string) => {
  const u = new URL(url);
  u.pathname = `/${db}`;
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

function spawnEntry(entry: string, env: Record<string, string>, nodeArgs: string[] = []): ChildProcess {
  const child = spawn(
    process.execPath,
    [...nodeArgs, ...(entry.includes('worker') ? WORKER_NODE_FLAGS : SERVER_NODE_FLAGS), '--import', 'tsx', path.join(ROOT, entry)],
    {
      cwd: ROOT,
      // DEFAULT_COMPLIANCE_PROFILES: the seeded batch dials whatever the hour (us_tcpa would hold it at night).
      env: { ...process.env, APP_SECRET, MIGRATE_ON_START: 'false', LOG_LEVEL: 'warn', DEFAULT_COMPLIANCE_PROFILES: 'none', ...env },
      stdio: ['ignore', process.env.BENCH_CHILD_STDOUT ? 'inherit' : 'ignore', 'inherit'],
    },
  );
  return child;
}

async function stop(child: ChildProcess) {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([exited, sleep(10_000)]);
  if (child.exitCode === null) child.kill('SIGKILL');
}

/** CPU seconds (user + system) and RSS bytes of a process, from /proc. */
function procSample(pid: number): { cpu: number; rss: number } {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]); // utime + stime
  const rssPages = Number(fields[21]);
  return { cpu: ticks / 100, rss: rssPages * 4096 };
}

async function seed(url: string) {
  const { loadConfig } = await import('../src/config.ts');
  const { createDeps } = await import('../src/bootstrap.ts');
  const deps = await createDeps(
    loadConfig({ DATABASE_URL: url, LOG_LEVEL: 'warn', RUN_WORKER: 'false', SEED_DEMO: 'false', APP_SECRET, MIGRATE_ON_START: 'true' }),
  );
  try {
    const { createAccount } = await import('../src/services/accounts/accounts.ts');
    const { addDidNumber, createAgent, createPromptVersion } = await import('../src/services/accounts/catalog.ts');
    const { newId, newIds } = await import('../src/domain/ids.ts');
    const { withSqlTransaction } = await import('../src/db/sql-transaction.ts');
    const { account, apiKey } = await createAccount(deps.db, {
      name: 'Bench',
      email: 'bench@example.com',
      voices: ['alloy'],
      limits: { maxBatchSize: 1_000_000, maxConcurrentCalls: CONCURRENCY * 2, maxCallDurationSeconds: 600, rateLimitPerMinute: 1_000_000 },
    });
    const agent = await createAgent(deps.db, account, { name: 'Bench Agent', voice: 'alloy', outcomeKeys: ['interested'], recordingEnabled: false });
    const version = await createPromptVersion(deps.db, account, { agentId: agent.id, name: 'v1', prompt: 'Be brief.' });
    const did = await addDidNumber(deps.db, account, '+14155550100');
    const batchId = newId('batch');
    const now = new Date().toISOString();
    await withSqlTransaction(deps.db, async (tx) => {
      await tx.query(
        `INSERT INTO batches (id, account_id, agent_id, prompt_version_id, did_number_id, status, start_mode, scheduled_at,
                              timezone, concurrency, voice, interruption, use_alternate_number, recording_enabled,
                              max_duration_seconds, deduplicate_by_phone, total_contacts, accepted_contacts,
                              rejected_contacts, queued, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, 'paused', 'manual', $6, 'UTC', $7, 'alloy', true, false, false, 600, false, $8, $8, 0, $8, $6, $6)`,
        [batchId, account.id, agent.id, version.id, did.id, now, CONCURRENCY, CALLS],
      );
      const ids = newIds('call', CALLS);
      // Last digits cycle 0-9: the simulator's mix of no answer, busy, failed and answered calls.
      const phones = ids.map((_, i) => `+1415${String(2_000_000 + i).padStart(7, '0')}`);
      await tx.query(
        `INSERT INTO calls (id, account_id, batch_id, agent_id, prompt_version_id, seq, external_id, phone_number,
                            status, created_at, updated_at)
         SELECT u.id, $2, $3, $4, $5, u.seq, 'c' || u.seq, u.phone, 'queued', $6, $6
           FROM unnest($1::text[], $7::int[], $8::text[]) AS u(id, seq, phone)`,
        [ids, account.id, batchId, agent.id, version.id, now, ids.map((_, i) => i + 1), phones],
      );
    });
    return { apiKey, batchId };
  } finally {
    await deps.db.close();
  }
}

interface Progress {
  status: string;
  queued: number;
  inProgress: number;
  completed: number;
  failed: number;
  cancelled: number;
  acceptedContacts: number;
  updatedAt: string;
}

interface Subscriber {
  client?: Client;
  messages: number;
  last: Progress | undefined;
  sumRuleBroken: number;
  dispose(): void;
}

const QUERY = `subscription($id: ID!) { batchProgress(batchId: $id) { status queued inProgress completed failed cancelled acceptedContacts updatedAt } }`;

/** graphql-transport-ws by hand: connection_init -> connection_ack -> subscribe -> next… */
function leanSubscribe(
  url: string,
  apiKey: string,
  variables: Record<string, unknown>,
  onNext: (payload: { data?: { batchProgress: Progress }; errors?: unknown }, at: number) => void,
): () => void {
  const ws = new WebSocket(url, 'graphql-transport-ws');
  ws.on('open', () => ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${apiKey}` } })));
  ws.on('message', (raw) => {
    const at = Date.now();
    const msg = JSON.parse(raw.toString());
    if (msg.type === 'next') onNext(msg.payload, at);
    else if (msg.type === 'connection_ack') ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: QUERY, variables } }));
    else if (msg.type === 'ping') ws.send('{"type":"pong"}');
    else if (msg.type === 'error') console.error('subscription error', JSON.stringify(msg.payload));
  });
  ws.on('close', (code) => {
    if (code !== 1000 && code !== 1005) console.error(`subscriber closed ${code}`);
  });
  ws.on('error', (e) => console.error('subscriber failed', e.message));
  return () => ws.close(1000);
}

type StageBuckets = Map<string, { le: number; count: number }[]>;

/** callbatch_live_progress_stage_seconds's cumulative buckets by stage, from the API's /metrics. */
async function stageBuckets(base: string): Promise<StageBuckets> {
  const text = await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  const out: StageBuckets = new Map();
  for (const m of text.matchAll(/^callbatch_live_progress_stage_seconds_bucket\{le="([^"]+)",stage="(\w+)"\} (\d+)$/gm)) {
    const list = out.get(m[2]) ?? [];
    list.push({ le: m[1] === '+Inf' ? Infinity : Number(m[1]) * 1000, count: Number(m[3]) });
    out.set(m[2], list);
  }
  return out;
}

/** A quantile of a stage over the run (between two scrapes), as the upper bound of its bucket, in ms. */
function stageQuantile(before: StageBuckets, after: StageBuckets, stage: string, q: number): string {
  const a = after.get(stage) ?? [];
  const b = before.get(stage) ?? [];
  const counts = a.map((x, i) => ({ le: x.le, count: x.count - (b[i]?.count ?? 0) }));
  const total = counts.at(-1)?.count ?? 0;
  if (!total) return 'n/a';
  const hit = counts.find((x) => x.count >= q * total)!;
  return hit.le === Infinity ? '> 1000' : `≤ ${hit.le}`;
}

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/** What a set of subscribers has seen so far. */
interface GroupReport {
  latencies: number[];
  perClient: number[];
  sumRuleBroken: number;
  final: Progress | undefined;
}

interface Target {
  port: number;
  apiKey: string;
  batchId: string;
}

const finishedProgress = (p?: Progress) => !!p && p.status === 'completed' && p.queued === 0 && p.inProgress === 0;

/** `count` subscribers in this process. */
async function connectSubscribers(count: number, { port, apiKey, batchId }: Target) {
  const subscribers: Subscriber[] = [];
  const latencies: number[] = [];
  let initialised = 0;
  for (let i = 0; i < count; i++) {
    const sub: Subscriber = { messages: 0, last: undefined, sumRuleBroken: 0, dispose: () => {} };
    const onNext = (r: { data?: { batchProgress: Progress } | null; errors?: unknown }, at: number) => {
      const p = r.data?.batchProgress;
      if (!p) {
        console.error('subscription error', JSON.stringify(r.errors));
        return;
      }
      if (sub.messages === 0) initialised++;
      else latencies.push(at - Date.parse(p.updatedAt));
      sub.messages++;
      sub.last = p;
      if (p.queued + p.inProgress + p.completed + p.failed + p.cancelled !== p.acceptedContacts) sub.sumRuleBroken++;
    };
    if (CLIENT === 'lean') {
      sub.dispose = leanSubscribe(`ws://127.0.0.1:${port}/graphql`, apiKey, { id: batchId }, onNext);
    } else {
      const client = createClient({
        url: `ws://127.0.0.1:${port}/graphql`,
        webSocketImpl: WebSocket,
        connectionParams: { authorization: `Bearer ${apiKey}` },
        retryAttempts: 0,
        lazy: true,
      });
      sub.client = client;
      sub.dispose = client.subscribe<{ batchProgress: Progress }>(
        { query: QUERY, variables: { id: batchId } },
        { next: (r) => onNext(r as never, Date.now()), error: (e) => console.error('subscriber failed', e), complete: () => {} },
      );
    }
    subscribers.push(sub);
    // At most 200 handshakes under way (each gives up waiting after 5 s): a burst past the server's
    // accept queue gets connections reset on a busy machine (seen beside two CPU burners at 5,000).
    for (let waited = 0; i + 1 - initialised > 200 && waited < 250; waited++) await sleep(20);
  }
  return {
    initialised: () => initialised,
    finished: () => subscribers.every((s) => finishedProgress(s.last)),
    report: async (): Promise<GroupReport> => ({
      latencies,
      perClient: subscribers.map((s) => s.messages),
      sumRuleBroken: subscribers.reduce((a, s) => a + s.sumRuleBroken, 0),
      final: subscribers[0]?.last,
    }),
    close() {
      for (const s of subscribers) {
        s.dispose();
        void s.client?.dispose();
      }
    },
  };
}

type Group = Awaited<ReturnType<typeof connectSubscribers>>;

/** `count` subscribers in a child process (this file, --role clients), driven over IPC. */
function childSubscribers(count: number, target: Target): Group {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      fileURLToPath(import.meta.url),
      '--role',
      'clients',
      '--count',
      String(count),
      '--target',
      JSON.stringify(target),
      '--client',
      CLIENT,
    ],
    {
      cwd: ROOT,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  );
  let state = { initialised: 0, finished: false };
  let report: ((r: GroupReport) => void) | undefined;
  child.on('message', (m: { state?: typeof state; report?: GroupReport }) => {
    if (m.state) state = m.state;
    if (m.report) report?.(m.report);
  });
  child.on('exit', (code) => {
    if (code) console.error(`client process exited with ${code}`);
  });
  return {
    initialised: () => state.initialised,
    finished: () => state.finished,
    report: () => new Promise<GroupReport>((resolve) => ((report = resolve), child.send('report'))),
    close: () => void child.kill('SIGTERM'),
  };
}

/** Child role: connects its subscribers, reports their state every 50 ms and their figures when asked (then exits). */
async function runClients(): Promise<never> {
  const group = await connectSubscribers(Number(arg('count', '0')), JSON.parse(arg('target', '{}')) as Target);
  const tell = () => process.send!({ state: { initialised: group.initialised(), finished: group.finished() } });
  const timer = setInterval(tell, 50);
  process.on('message', async (m) => {
    if (m !== 'report') return;
    clearInterval(timer);
    process.send!({ report: await group.report() }, () => {
      group.close();
      process.exit(0);
    });
  });
  process.on('SIGTERM', () => process.exit(0));
  return new Promise<never>(() => {});
}

async function main() {
  const dbName = `cbs_bench_subs_${crypto.randomBytes(5).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${dbName}`);
  const url = withDb(SERVER, dbName);
  const children: ChildProcess[] = [];
  const groups: Group[] = [];
  try {
    console.log(`seeding ${CALLS} calls…`);
    const { apiKey, batchId } = await seed(url);

    const port = await freePort();
    // BENCH_API_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") profiles the API process.
    const apiArgs = (process.env.BENCH_API_NODE_ARGS ?? '').split(' ').filter(Boolean);
    // Every subscriber connects from loopback with one key of one account: lift the per-address,
    // per-key, per-account and per-process caps and the account's delivery budget, which would pace
    // the very latency this measures.
    const caps = {
      WS_MAX_CONNECTIONS_PER_ADDRESS: '100000',
      MAX_CONNECTIONS_PER_ADDRESS: '100000',
      MAX_SUBSCRIPTIONS_PER_KEY: '1000000',
      MAX_SUBSCRIPTIONS_PER_ACCOUNT: '1000000',
      MAX_SUBSCRIPTIONS_PER_PROCESS: '1000000',
      SUBSCRIPTION_EVENTS_PER_ACCOUNT_PER_SECOND: '1000000',
    };
    const api = spawnEntry(
      'src/main.ts',
      {
        METRICS_TOKEN,
        DATABASE_URL: url,
        PORT: String(port),
        HOST: '127.0.0.1',
        RUN_WORKER: 'false',
        SEED_DEMO: 'false',
        DB_POOL_SIZE: '10',
        ...caps,
      },
      apiArgs,
    );
    children.push(api);
    const base = `http://127.0.0.1:${port}`;
    for (let i = 0; ; i++) {
      if (api.exitCode !== null) throw new Error('API process exited');
      try {
        if ((await fetch(`${base}/healthz`)).ok) break;
      } catch {
        // not yet
      }
      if (i > 600) throw new Error('API process did not start');
      await sleep(100);
    }

    let served: ChildProcess = api;
    let servedPort = port;
    if (SERVER_KIND === 'floor') {
      servedPort = await freePort();
      served = spawnEntry('bench/bare-fanout-server.ts', { DATABASE_URL: url, PORT: String(servedPort), HOST: '127.0.0.1', BATCH_ID: batchId });
      children.push(served);
      for (
        let i = 0;
        !(await fetch(`http://127.0.0.1:${servedPort}/healthz`).then(
          (r) => r.ok,
          () => false,
        ));
        i++
      ) {
        if (served.exitCode !== null || i > 600) throw new Error('floor server did not start');
        await sleep(100);
      }
    }

    const where = CLIENT_PROCESSES > 0 ? `${CLIENT_PROCESSES} client processes` : 'this process';
    console.log(`connecting ${SUBSCRIBERS} graphql-ws subscribers in ${where}…`);
    const connectStart = performance.now();
    const target: Target = { port: servedPort, apiKey, batchId };
    if (CLIENT_PROCESSES > 0) {
      for (let i = 0; i < CLIENT_PROCESSES; i++) {
        const share = Math.floor(SUBSCRIBERS / CLIENT_PROCESSES) + (i < SUBSCRIBERS % CLIENT_PROCESSES ? 1 : 0);
        groups.push(childSubscribers(share, target));
      }
    } else {
      groups.push(await connectSubscribers(SUBSCRIBERS, target));
    }
    const initialised = () => groups.reduce((a, g) => a + g.initialised(), 0);
    while (initialised() < SUBSCRIBERS) {
      if (performance.now() - connectStart > 180_000) throw new Error(`only ${initialised()}/${SUBSCRIBERS} subscribers got their first value`);
      await sleep(20);
    }
    console.log(`all subscribed in ${((performance.now() - connectStart) / 1000).toFixed(1)} s`);

    for (let i = 0; i < (WRITER === 'worker' ? WORKERS : 0); i++) {
      children.push(
        spawnEntry('src/worker.ts', { DATABASE_URL: url, SIM_CALL_MS: String(SIM_CALL_MS), WORKER_POLL_MS: '20', WORKER_ID: `bench-w${i}` }),
      );
    }
    // Let the workers boot before the clock starts.
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    for (let i = 0; ; i++) {
      const r = await db.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1`, [dbName]);
      // API pool + LISTEN + this client + at least one connection per worker.
      if (WRITER === 'sql' || r.rows[0].n >= 2 + WORKERS || i > 300) break;
      await sleep(100);
    }
    await sleep(2000);

    // Decomposition: how long after its stamp a change's NOTIFY reaches a listener at all (the
    // worker's transaction and commit), next to the end-to-end figure.
    const notifyLatencies: number[] = [];
    const listener = new pg.Client({ connectionString: url });
    await listener.connect();
    listener.on('notification', (m) => {
      // The payload carries the batch's updated_at as the change stamped it (notify_batch_changed).
      const stamp = Date.parse(JSON.parse(m.payload ?? '{}').updated_at);
      if (Number.isFinite(stamp)) notifyLatencies.push(Date.now() - stamp);
    });
    await listener.query('LISTEN batch_changed');

    const stagesBefore = await stageBuckets(base);
    const apiPid = served.pid!;
    const cpu0 = procSample(apiPid);
    const own0 = process.cpuUsage();
    let peakRss = cpu0.rss;
    const t0 = performance.now();
    const sampler = setInterval(() => {
      try {
        peakRss = Math.max(peakRss, procSample(apiPid).rss);
      } catch {
        // process gone
      }
    }, 100);

    let writer: Promise<void> | undefined;
    if (WRITER === 'worker') {
      const res = await fetch(`${base}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
        body: JSON.stringify({ query: 'mutation($id: ID!) { startBatch(id: $id) { status } }', variables: { id: batchId } }),
      });
      const started = await res.json();
      if (started.errors) throw new Error(`startBatch failed: ${JSON.stringify(started.errors)}`);
    } else {
      writer = (async () => {
        const w = new pg.Client({ connectionString: url });
        await w.connect();
        try {
          for (let left = CALLS; left > 0;) {
            const k = Math.min(5, left);
            left -= k;
            await w.query(
              `UPDATE batches SET queued = queued - $2, completed = completed + $2,
                      status = CASE WHEN queued - $2 = 0 THEN 'completed' ELSE 'running' END,
                      completed_at = CASE WHEN queued - $2 = 0 THEN clock_timestamp() END, updated_at = clock_timestamp()
                WHERE id = $1`,
              [batchId, k],
            );
            await sleep(5);
          }
        } finally {
          await w.end();
        }
      })();
    }

    while (!groups.every((g) => g.finished())) {
      if (performance.now() - t0 > 600_000) throw new Error('batch did not finish within 10 minutes');
      if (children.some((c) => c.exitCode !== null)) throw new Error('a child process exited during the run');
      await sleep(50);
    }
    await writer;
    const elapsed = (performance.now() - t0) / 1000;
    clearInterval(sampler);
    const cpu1 = procSample(apiPid);
    const own = process.cpuUsage(own0);
    const stagesAfter = await stageBuckets(base);
    await listener.end();
    await db.end();

    const reports = await Promise.all(groups.map((g) => g.report()));
    const latencies = reports.flatMap((r) => r.latencies).sort((a, b) => a - b);
    const perClient = reports.flatMap((r) => r.perClient).sort((a, b) => a - b);
    const total = perClient.reduce((a, b) => a + b, 0);
    const final = reports[0].final!;
    const broken = reports.reduce((a, r) => a + r.sumRuleBroken, 0);

    console.log('');
    const load = os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ');
    const writerText =
      WRITER === 'worker' ? `API and ${WORKERS} worker process(es) separate` : 'counters moved by SQL from the bench process (no worker)';
    console.log(
      `live progress fan-out — PostgreSQL, ${writerText}, ${os.cpus().length} CPUs, load average ${load}${SERVER_KIND === 'floor' ? '; subscribers on the FLOOR server (bench/bare-fanout-server.ts), not the API' : ''}`,
    );
    console.log(
      `  subscribers            ${SUBSCRIBERS} WebSocket connections (graphql-transport-ws, ${CLIENT} client in ${where}), batchProgress on one batch`,
    );
    console.log(
      WRITER === 'worker'
        ? `  batch                  ${CALLS} calls, concurrency ${CONCURRENCY}, simulated call ${SIM_CALL_MS} ms`
        : `  batch                  ${CALLS} calls completed 5 per transaction, a transaction every 5 ms`,
    );
    console.log(`  run                    ${elapsed.toFixed(1)} s (start -> every client saw completed), ${(CALLS / elapsed).toFixed(0)} calls/s`);
    console.log(
      `  final counters         completed ${final.completed}, failed ${final.failed}, cancelled ${final.cancelled}, queued ${final.queued}, in progress ${final.inProgress}`,
    );
    console.log(`  sum rule violations    ${broken} of ${total} values`);
    console.log(
      `  messages per client    min ${perClient[0]}, median ${quantile(perClient, 0.5)}, max ${perClient.at(-1)} (${(quantile(perClient, 0.5) / elapsed).toFixed(1)}/s); total ${total}`,
    );
    console.log(
      `  delivery latency       p50 ${quantile(latencies, 0.5)} ms, p90 ${quantile(latencies, 0.9)} ms, p99 ${quantile(latencies, 0.99)} ms, max ${latencies.at(-1)} ms (${latencies.length} values)`,
    );
    notifyLatencies.sort((a, b) => a - b);
    console.log(
      `  of which NOTIFY        p50 ${quantile(notifyLatencies, 0.5)} ms, p99 ${quantile(notifyLatencies, 0.99)} ms after the stamp (worker transaction + commit, seen by a plain LISTEN)`,
    );
    const stage = (name: string) =>
      `p50 ${stageQuantile(stagesBefore, stagesAfter, name, 0.5)} ms, p99 ${stageQuantile(stagesBefore, stagesAfter, name, 0.99)} ms`;
    console.log(
      `  of which hub wait      ${stage('wait')} (API: from the notification that brought the value sent to its fan-out; /metrics buckets)`,
    );
    console.log(`  of which fan-out       ${stage('fanout')} (API: from the fan-out's start until every socket is written)`);
    console.log(
      `  ${SERVER_KIND === 'floor' ? 'floor process CPU' : 'API process CPU  '}      ${(((cpu1.cpu - cpu0.cpu) / elapsed) * 100).toFixed(0)}% of one core over the run (${(cpu1.cpu - cpu0.cpu).toFixed(1)} s)`,
    );
    const ownWork = [CLIENT_PROCESSES ? '' : `the ${SUBSCRIBERS} clients`, WRITER === 'sql' ? 'the SQL writer' : '', 'the NOTIFY probe']
      .filter(Boolean)
      .join(', ');
    console.log(`  bench process CPU      ${(((own.user + own.system) / 1e6 / elapsed) * 100).toFixed(0)}% of one core (${ownWork})`);
    console.log(
      `  ${SERVER_KIND === 'floor' ? 'floor process RSS' : 'API process RSS  '}      ${(cpu0.rss / 2 ** 20).toFixed(0)} MB with subscribers idle, peak ${(peakRss / 2 ** 20).toFixed(0)} MB`,
    );
    // Issue 35's bounds: 1,000 subscribers p99 < 250 ms, p50 < NOTIFY p50 + 30 ms, RSS < 500 MB; 5,000: p99 < 500 ms, RSS < 1 GB.
    const many = SUBSCRIBERS > 1000;
    const p99Bound = many ? 500 : 250;
    const rssBound = many ? 1024 : 500;
    const p50Bound = quantile(notifyLatencies, 0.5) + 30;
    const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');
    const p50Text = many
      ? ''
      : `; p50 ${quantile(latencies, 0.5)} < NOTIFY p50 + 30 = ${p50Bound} ms: ${verdict(quantile(latencies, 0.5) < p50Bound)}`;
    console.log(
      `  targets                p99 ${quantile(latencies, 0.99)} < ${p99Bound} ms: ${verdict(quantile(latencies, 0.99) < p99Bound)}${p50Text}; ` +
        `peak RSS ${(peakRss / 2 ** 20).toFixed(0)} < ${rssBound} MB: ${verdict(peakRss < rssBound * 2 ** 20)}`,
    );
  } finally {
    for (const g of groups) g.close();
    await Promise.all(children.map(stop));
    await adminQuery(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch((e) => console.error('drop failed', e));
  }
}

(arg('role', 'main') === 'clients' ? runClients() : main()).then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
