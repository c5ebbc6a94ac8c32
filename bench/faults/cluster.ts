// The deployment a fault campaign runs on: a throwaway PostgreSQL database, the fake provider
// (a process of its own, fake-provider.ts), 1-2 API processes (src/main.ts, no worker) and 2-3
// dispatch workers (src/worker.ts), each process reaching the database and the provider through
// links of its own (links.ts) that the nemesis can cut; a webhook receiver for the batches'
// callbacks. Workers get a clock of their own through libfaketime when it is installed, so one
// process's clock can be stepped from outside.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDatabase, type Database } from '../../src/db/client.ts';
import { createAccount } from '../../src/services/accounts/accounts.ts';
import { addDidNumber, createAgent, createPromptVersion } from '../../src/services/accounts/catalog.ts';
import { setAccountProvider } from '../../src/services/accounts/provider-config.ts';
import { loadConfig } from '../../src/config.ts';
import { throwawayDatabase } from '../throwaway-database.ts';
import { openLink, type Link } from './links.ts';
import { FAKE_API_KEY } from './provider-log.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const EXIT_WITH_PARENT = path.join(ROOT, 'test/helpers/exit-with-parent.ts');
const APP_SECRET = 'fault-campaign-app-secret-0123456789abcdef';
/** libfaketime's multi-threaded build (Debian/Ubuntu package libfaketime). */
export const FAKETIME_LIB =
  ['/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1', '/usr/lib/aarch64-linux-gnu/faketime/libfaketimeMT.so.1'].find((p) => fs.existsSync(p)) ??
  null;

export interface ClusterOptions {
  serverUrl: string;
  workers: number;
  apis: number;
  leaseMs: number;
  /** Where the fake provider's log and the processes' stderr go. */
  dir: string;
}

export interface Proc {
  /** Role and slot: `w1`, `api2`. */
  slot: string;
  kind: 'worker' | 'api';
  /** This incarnation's name (`w1.g2`): its WORKER_ID, its provider path, its application_name. */
  name: string;
  child: ChildProcess;
  url: string;
  db: Link;
  provider: Link;
  /** libfaketime's offset file for this process (null: no clock of its own). */
  clockFile: string | null;
  paused: boolean;
  alive: boolean;
}

export interface Received {
  t: number;
  id: string;
  type: string;
  callId: string | null;
  batchId: string | null;
}

export interface Cluster {
  db: Database;
  dbUrl: string;
  fakeUrl: string;
  providerLog: string;
  procs: Proc[];
  workers(): Proc[];
  apis(): Proc[];
  account: { id: string; apiKey: string; agentId: string; versionId: string };
  receiverUrl: string;
  received: Received[];
  restart(p: Proc): Promise<void>;
  setProviderMode(mode: 'normal' | 'slow' | 'failing' | { talkMs: number | null }): Promise<void>;
  /** Steps a worker's clock to `offsetMs` from the machine's (libfaketime; no-op without it). */
  stepClock(p: Proc, offsetMs: number): void;
  close(): Promise<void>;
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

async function waitUntil(what: string, cond: () => Promise<boolean>, ms: number, abort?: () => string | null): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const why = abort?.();
    if (why) throw new Error(`${what}: ${why}`);
    if (await cond().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function startCluster(o: ClusterOptions): Promise<Cluster> {
  fs.mkdirSync(o.dir, { recursive: true });
  const database = await throwawayDatabase(o.serverUrl, 'faults');
  const target = new URL(database.url);
  const providerLog = path.join(o.dir, 'provider.jsonl');
  fs.writeFileSync(providerLog, '');
  const closers: Array<() => Promise<void> | void> = [];
  const children = new Set<ChildProcess>();
  const killAll = () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  };
  process.once('exit', killAll);

  // The batches' callbacks: every delivery, as received.
  const received: Received[] = [];
  const receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        received.push({
          t: Date.now(),
          id: String(req.headers['webhook-id'] ?? body.id),
          type: body.type,
          callId: body.data?.call_id ?? null,
          batchId: body.data?.batch_id ?? null,
        });
      } catch {
        // not ours
      }
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  closers.push(() => new Promise<void>((r) => (receiver.closeAllConnections(), receiver.close(() => r()))));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as net.AddressInfo).port}/hooks`;

  const apiPorts = await Promise.all(Array.from({ length: o.apis }, () => freePort()));
  const fake = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(ROOT, 'bench/faults/fake-provider.ts'),
      providerLog,
      apiPorts.map((p) => `http://127.0.0.1:${p}/providers/retell/webhook`).join(','),
    ],
    {
      cwd: ROOT,
      stdio: ['pipe', 'pipe', fs.openSync(path.join(o.dir, 'fake-provider.err'), 'a')],
    },
  );
  children.add(fake);
  const fakePort = await new Promise<number>((resolve, reject) => {
    let out = '';
    fake.stdout!.on('data', (d) => {
      out += d;
      const m = /listening (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    fake.once('exit', (code) => reject(new Error(`fake provider exited (${code})`)));
  });
  const fakeUrl = `http://127.0.0.1:${fakePort}`;

  const shared = {
    APP_SECRET,
    SEED_DEMO: 'false',
    LOG_LEVEL: 'warn',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    RETELL_API_KEY: FAKE_API_KEY,
    RETELL_POLL_MS: '50',
    RETELL_DIAL_RATE_PER_NUMBER: '0',
    RETELL_RECONCILE_GRACE_MS: '3000',
    RETELL_ANALYSIS_GRACE_MS: '4000',
    LEASE_MS: String(o.leaseMs),
    DB_CONNECT_TIMEOUT_MS: '1000',
    DB_POOL_SIZE: '6',
    // The fake's calls are simulated: no jurisdiction's calling hours apply to them (the campaign runs at any hour).
    DEFAULT_COMPLIANCE_PROFILES: 'none',
  };
  const procs: Proc[] = [];
  const generation = new Map<string, number>();

  async function launch(p: Omit<Proc, 'child' | 'name' | 'paused' | 'alive' | 'url'> & { port: number }): Promise<Proc> {
    const g = (generation.get(p.slot) ?? 0) + 1;
    generation.set(p.slot, g);
    const name = `${p.slot}.g${g}`;
    const dbUrl = new URL(database.url);
    dbUrl.hostname = '127.0.0.1';
    dbUrl.port = String(p.db.port);
    dbUrl.searchParams.set('application_name', name);
    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      ...shared,
      DATABASE_URL: dbUrl.toString(),
      RETELL_BASE_URL: `http://127.0.0.1:${p.provider.port}/p/${name}`,
      PUBLIC_URL: `http://127.0.0.1:${apiPorts[0]}`,
      HOST: '127.0.0.1',
    };
    if (p.kind === 'worker') {
      Object.assign(env, {
        WORKER_ID: name,
        WORKER_PORT: String(p.port),
        WORKER_POLL_MS: '50',
        WEBHOOK_POLL_MS: '50',
        WEBHOOK_TIMEOUT_MS: '2000',
        WEBHOOK_LEASE_MS: '12000',
        WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1,1',
        MIGRATE_ON_START: 'false',
      });
      if (p.clockFile) {
        fs.writeFileSync(p.clockFile, '+0\n');
        Object.assign(env, {
          LD_PRELOAD: FAKETIME_LIB!,
          FAKETIME_TIMESTAMP_FILE: p.clockFile,
          FAKETIME_CACHE_DURATION: '1',
          FAKETIME_DONT_FAKE_MONOTONIC: '1',
        });
      }
    } else {
      Object.assign(env, { RUN_WORKER: 'false', PORT: String(p.port), MIGRATE_ON_START: p.slot === 'api1' ? 'true' : 'false' });
    }
    const entry = p.kind === 'worker' ? 'src/worker.ts' : 'src/main.ts';
    const out = fs.openSync(path.join(o.dir, `${name}.log`), 'a');
    // stdin is a pipe from the campaign: when it dies without its cleanup, the process stops too.
    const child = spawn(process.execPath, ['--import', 'tsx', '--import', EXIT_WITH_PARENT, path.join(ROOT, entry)], {
      cwd: ROOT,
      env,
      stdio: ['pipe', out, out],
    });
    fs.closeSync(out);
    children.add(child);
    const proc: Proc = { ...p, name, child, url: `http://127.0.0.1:${p.port}`, paused: false, alive: true };
    child.once('exit', () => (proc.alive = false));
    await waitUntil(
      `${name} ready`,
      async () => (await fetch(`${proc.url}/healthz`)).ok,
      90_000,
      () => (proc.alive ? null : `${name} exited (see ${o.dir}/${name}.log)`),
    );
    return proc;
  }

  const pgPort = Number(target.port || 5432);
  for (let i = 1; i <= o.apis; i++) {
    const db = await openLink(target.hostname, pgPort);
    const provider = await openLink('127.0.0.1', fakePort);
    procs.push(await launch({ slot: `api${i}`, kind: 'api', db, provider, clockFile: null, port: apiPorts[i - 1]! }));
  }
  for (let i = 1; i <= o.workers; i++) {
    const db = await openLink(target.hostname, pgPort);
    const provider = await openLink('127.0.0.1', fakePort);
    const clockFile = FAKETIME_LIB ? path.join(o.dir, `w${i}.clock`) : null;
    procs.push(await launch({ slot: `w${i}`, kind: 'worker', db, provider, clockFile, port: await freePort() }));
  }

  const config = loadConfig({ DATABASE_URL: database.url, APP_SECRET });
  const db = await openDatabase({ databaseUrl: database.url, poolSize: 4 });
  const { account, apiKey } = await createAccount(db, {
    name: 'Faults',
    email: 'faults@example.com',
    voices: ['alloy'],
    limits: { maxConcurrentCalls: 200, rateLimitPerMinute: 100_000 },
  });
  const agent = await createAgent(db, account, { name: 'Agent', voice: 'alloy', outcomeKeys: ['interested'] });
  const version = await createPromptVersion(db, account, { agentId: agent.id, name: 'v1', prompt: 'You are a helpful assistant.' });
  await addDidNumber(db, account, '+14155550100');
  await setAccountProvider({ db, config, appSecret: APP_SECRET } as never, account.id, 'retell', { apiKey: FAKE_API_KEY, dialRatePerNumber: 0 });
  await db.prisma.$executeRaw`UPDATE agents SET provider_agent_id = 'agent_faults' WHERE id = ${agent.id}`;
  await db.prisma.$executeRaw`UPDATE prompt_versions SET provider_agent_version = 1 WHERE id = ${version.id}`;
  await db.prisma.$executeRaw`UPDATE accounts SET max_call_duration_seconds = 60 WHERE id = ${account.id}`;

  return {
    db,
    dbUrl: database.url,
    fakeUrl,
    providerLog,
    procs,
    workers: () => procs.filter((p) => p.kind === 'worker'),
    apis: () => procs.filter((p) => p.kind === 'api'),
    account: { id: account.id, apiKey, agentId: agent.id, versionId: version.id },
    receiverUrl,
    received,
    async restart(p) {
      if (p.alive) {
        const exited = new Promise((r) => p.child.once('exit', r));
        p.child.kill('SIGKILL');
        await exited;
      }
      // Whatever was cut stays cut for the new process too: a restart is not a heal.
      const next = await launch({
        slot: p.slot,
        kind: p.kind,
        db: p.db,
        provider: p.provider,
        clockFile: p.clockFile,
        port: Number(new URL(p.url).port),
      });
      Object.assign(p, { name: next.name, child: next.child, alive: true, paused: false });
      next.child.once('exit', () => (p.alive = false));
    },
    async setProviderMode(mode) {
      await fetch(`${fakeUrl}/__mode`, { method: 'POST', body: JSON.stringify(typeof mode === 'string' ? { mode } : mode) });
    },
    stepClock(p, offsetMs) {
      if (!p.clockFile) return;
      const s = offsetMs / 1000;
      fs.writeFileSync(p.clockFile, `${s >= 0 ? '+' : ''}${s.toFixed(3)}s\n`);
    },
    async close() {
      killAll();
      process.removeListener('exit', killAll);
      for (const p of procs) {
        p.db.heal('reset');
        p.provider.heal('reset');
        await p.db.close();
        await p.provider.close();
      }
      for (const c of closers) await c();
      await db.close();
      await database.drop().catch(() => undefined);
    },
  };
}

export const cpuCount = os.availableParallelism();
