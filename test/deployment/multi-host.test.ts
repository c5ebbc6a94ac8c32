// Past one machine (issue 17): the deployment of docs/deployment.md on four test hosts — two API
// processes (src/main.ts, no worker) and two dispatch workers (src/worker.ts), each in a network
// namespace of its own, sharing one PostgreSQL reached through a TCP forwarder, the APIs behind a
// round-robin proxy. All four boot at once on an empty database (so they race to migrate it). A
// 5,000-call batch runs while graphql-ws subscribers watch each API directly and a receiver takes
// its webhooks; mid-batch one API and one worker are killed with SIGKILL. Then: every call ended
// exactly once and was dialled once; the subscribers of the surviving API saw the final counters;
// the rate limit is one budget over both APIs; every event was delivered under one webhook-id.
// PostgreSQL only, and root for `ip netns`: skipped otherwise, saying why.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/client.ts';
import { listMigrations } from '../../src/db/migrate.ts';
import { createAccount } from '../../src/services/accounts/accounts.ts';
import { addDidNumber, createAgent, createPromptVersion } from '../../src/services/accounts/catalog.ts';
import type { AppDeps } from '../../src/deps.ts';
import { CALL_BATCHES, makeContacts } from '../helpers/batch-requests.ts';
import { createPgDatabase, TEST_DATABASE_URL } from '../helpers/database.ts';
import { expectConsistentBatch } from '../helpers/dispatch.ts';
import { startRoundRobinProxy, type RoundRobinProxy } from '../helpers/round-robin-proxy.ts';
import { sumRuleHolds, wsStream, type Stream } from '../helpers/subscriptions.ts';
import { createTestNetwork, netnsUnavailable, type TestNetwork } from '../helpers/test-hosts.ts';
import { waitFor } from '../helpers/wait.ts';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';
import { wsClient } from '../helpers/ws-client.ts';
import type { Client } from 'graphql-ws';

const skipReason = !TEST_DATABASE_URL ? 'PostgreSQL only (TEST_DATABASE_URL is not set): the processes share one database' : netnsUnavailable();
if (skipReason) console.warn(`multi-host deployment test skipped: ${skipReason}`);

const root = path.resolve(import.meta.dirname, '../..');
const CALLS = 5_000;
// 200 calls of 400 ms in flight: at most 500 calls a second; a loaded 2-core machine makes fewer.
const CONCURRENCY = 200;
const SIM_CALL_MS = 400;
const LEASE_MS = 5_000;
const API_PORT = 3000;
const WORKER_PORT = 9090;
const APP_SECRET = 'multi-host-app-secret-0123456789abcdef0123';
const ADMIN_TOKEN = 'multi-host-admin-token-0123456789';
const TERMINAL = ['completed', 'failed', 'no_answer', 'busy', 'cancelled'];
const IN_FLIGHT = ['ringing', 'answered', 'in_progress'];

interface Proc {
  name: string;
  child: ChildProcess;
  url: string;
  stderr(): string;
  exited: Promise<number | null>;
}

interface Seeded {
  accountId: string;
  apiKey: string;
  agentId: string;
  versionId: string;
}

const PROGRESS = `subscription($id: ID!) { batchProgress(batchId: $id) {
  status queued inProgress completed failed cancelled acceptedContacts callbacks } }`;

describe.skipIf(skipReason !== null)(`two APIs and two workers on hosts of their own${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  let net: TestNetwork;
  let pg: { url: string; drop(): Promise<void> };
  let db: Database;
  let rx: Receiver;
  let proxy: RoundRobinProxy;
  const procs: Record<string, Proc> = {};
  const clients: Client[] = [];

  const output = () =>
    Object.values(procs)
      .map((p) => `--- ${p.name} (exit ${p.child.exitCode ?? p.child.signalCode ?? 'running'}):\n${p.stderr().slice(-2000)}`)
      .join('\n');
  const abortIfDied =
    (...names: string[]) =>
    () => {
      for (const n of names) if (procs[n]!.child.exitCode !== null) throw new Error(`${n} exited early\n${output()}`);
    };

  function start(name: string, entry: string, env: Record<string, string>, port: number): Proc {
    const host = net.hosts[name]!;
    const child = host.node(entry, { LOG_LEVEL: 'warn', HOST: host.address, ...env });
    let err = '';
    child.stdout!.resume();
    child.stderr!.on('data', (d) => (err += d));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    return { name, child, url: `http://${host.address}:${port}`, stderr: () => err, exited };
  }

  async function seed(name: string, limits: { rateLimitPerMinute?: number; maxConcurrentCalls?: number }): Promise<Seeded> {
    const { account, apiKey } = await createAccount(db, { name, email: `${name.toLowerCase()}@example.com`, voices: ['alloy'], limits });
    const agent = await createAgent(db, account, { name: 'Sales Agent', voice: 'alloy', outcomeKeys: ['interested'] });
    const version = await createPromptVersion(db, account, { agentId: agent.id, name: 'v1', prompt: 'You are a helpful assistant.' });
    await addDidNumber(db, account, '+14155550100');
    return { accountId: account.id, apiKey, agentId: agent.id, versionId: version.id };
  }

  const viaProxy = (method: string, p: string, key: string, body?: unknown) =>
    fetch(`${proxy.url}${p}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  beforeAll(async () => {
    net = createTestNetwork(['api-a', 'api-b', 'worker-a', 'worker-b']);
    pg = await createPgDatabase(TEST_DATABASE_URL!);
    // The local PostgreSQL listens on loopback only: the hosts reach it through a forwarder on the bridge.
    const target = new URL(TEST_DATABASE_URL!);
    const forwarder = net.track(
      spawn(
        process.execPath,
        ['--import', 'tsx', path.join(root, 'test/helpers/tcp-forwarder.ts'), net.gateway, '0', target.hostname, target.port || '5432'],
        {
          cwd: root,
          stdio: ['pipe', 'pipe', 'inherit'],
        },
      ),
    );
    const forwardedPort = await new Promise<string>((resolve, reject) => {
      let out = '';
      forwarder.stdout!.on('data', (d) => {
        out += d;
        const m = /listening (\d+)/.exec(out);
        if (m) resolve(m[1]!);
      });
      forwarder.once('exit', (code) => reject(new Error(`tcp forwarder exited (${code})`)));
    });
    const hostsDbUrl = new URL(pg.url);
    hostsDbUrl.hostname = net.gateway;
    hostsDbUrl.port = forwardedPort;

    rx = await startReceiver(() => ({ status: 200 }), { host: net.gateway });
    proxy = await startRoundRobinProxy(
      net.gateway,
      ['api-a', 'api-b'].map((name) => ({ name, host: net.hosts[name]!.address, port: API_PORT })),
    );

    // What every process of the deployment shares; MIGRATE_ON_START stays on (the default) for all
    // four, so they race to migrate the empty database.
    // DEFAULT_COMPLIANCE_PROFILES none: the hosts dial US numbers at whatever hour the suite runs.
    const shared = {
      DATABASE_URL: hostsDbUrl.toString(),
      APP_SECRET,
      WEBHOOK_ALLOW_PRIVATE: 'true',
      SEED_DEMO: 'false',
      DEFAULT_COMPLIANCE_PROFILES: 'none',
    };
    const api = {
      ...shared,
      ADMIN_TOKEN,
      RUN_WORKER: 'false',
      PORT: String(API_PORT),
      TRUST_PROXY: 'true',
      PUBLIC_URL: proxy.url,
      DB_POOL_SIZE: '5',
    };
    const worker = {
      ...shared,
      WORKER_PORT: String(WORKER_PORT),
      PUBLIC_URL: proxy.url,
      SIM_CALL_MS: String(SIM_CALL_MS),
      WORKER_POLL_MS: '50',
      LEASE_MS: String(LEASE_MS),
      WEBHOOK_POLL_MS: '50',
      WEBHOOK_CONCURRENCY: '32',
      // A delivery lease is at least the timeout + 10 s: the dead worker's deliveries go again after 15 s.
      WEBHOOK_TIMEOUT_MS: '5000',
      WEBHOOK_LEASE_MS: '15000',
      WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1,1',
    };
    procs['api-a'] = start('api-a', 'src/main.ts', api, API_PORT);
    procs['api-b'] = start('api-b', 'src/main.ts', api, API_PORT);
    procs['worker-a'] = start('worker-a', 'src/worker.ts', { ...worker, WORKER_ID: 'worker-a' }, WORKER_PORT);
    procs['worker-b'] = start('worker-b', 'src/worker.ts', { ...worker, WORKER_ID: 'worker-b' }, WORKER_PORT);
    const names = Object.keys(procs);
    await waitFor(
      async () => {
        const ready = await Promise.all(
          names.map((n) =>
            fetch(`${procs[n]!.url}/readyz`).then(
              (r) => r.ok,
              () => false,
            ),
          ),
        );
        return ready.every(Boolean);
      },
      { timeoutMs: 90_000, intervalMs: 200, what: 'all four processes ready', abortIf: abortIfDied(...names) },
    );
    db = await openDatabase({ databaseUrl: pg.url, poolSize: 4 });
  }, 150_000);

  afterAll(async () => {
    await Promise.allSettled(clients.map((c) => c.dispose()));
    net?.teardown();
    await proxy?.close();
    await rx?.close();
    await db?.close();
    await pg?.drop();
  }, 60_000);

  it('runs a 5,000-call batch through a killed API and a killed worker: each call ends once, dialled once; subscribers, rate limits and webhooks hold', async () => {
    // Four processes migrated one empty database at once: each migration applied exactly once.
    const applied = await db.prisma.$queryRaw<{ migration_name: string; n: number }[]>`
      SELECT migration_name, count(*)::int AS n FROM "_prisma_migrations" GROUP BY 1 ORDER BY 1`;
    expect(applied).toEqual(listMigrations().map((m) => ({ migration_name: m.name, n: 1 })));

    // --- Rate limits: one budget per account over both APIs. Ten a minute, requests alternating
    // between the APIs: a per-process budget would let 20 through.
    const minute = () => Math.floor(Date.now() / 60_000);
    for (let round = 0; ; round++) {
      const limited = await seed(`Limited ${round}`, { rateLimitPerMinute: 10 });
      const before = minute();
      const sequential: { status: number; remaining: string | null; upstream: string | null }[] = [];
      for (let i = 0; i < 12; i++) {
        const r = await viaProxy('GET', '/api/v1/public/me', limited.apiKey);
        await r.arrayBuffer();
        sequential.push({ status: r.status, remaining: r.headers.get('ratelimit-remaining'), upstream: r.headers.get('x-upstream') });
      }
      const burstAccount = await seed(`Burst ${round}`, { rateLimitPerMinute: 10 });
      const burst = await Promise.all(
        Array.from({ length: 30 }, async () => {
          const r = await viaProxy('GET', '/api/v1/public/me', burstAccount.apiKey);
          await r.arrayBuffer();
          return { status: r.status, upstream: r.headers.get('x-upstream') };
        }),
      );
      // A fixed window turned over mid-way: both budgets were partly spent in another window; again.
      if (minute() !== before && round < 2) continue;
      expect(sequential.map((r) => r.status)).toEqual([...Array(10).fill(200), 429, 429]);
      expect(sequential.map((r) => r.remaining)).toEqual(['9', '8', '7', '6', '5', '4', '3', '2', '1', '0', '0', '0']);
      expect(new Set(sequential.slice(0, 10).map((r) => r.upstream))).toEqual(new Set(['api-a', 'api-b']));
      expect(burst.filter((r) => r.status === 200)).toHaveLength(10);
      expect(burst.filter((r) => r.status === 429)).toHaveLength(20);
      expect(new Set(burst.map((r) => r.upstream))).toEqual(new Set(['api-a', 'api-b']));
      break;
    }

    // --- The batch, created and started through the proxy, watched on each API directly.
    const owner = await seed('Owner', { maxConcurrentCalls: CONCURRENCY });
    const secretRes = await viaProxy('POST', '/graphql', owner.apiKey, { query: '{ webhookSecret { secret } }' });
    const secret: string = ((await secretRes.json()) as any).data.webhookSecret.secret;
    const created = await viaProxy('PUT', CALL_BATCHES, owner.apiKey, {
      idempotency_key: 'multi-host-batch',
      agent_id: owner.agentId,
      version_id: owner.versionId,
      interruption: true,
      use_alternate_number: false,
      start_mode: 'manual',
      schedule_date: '2030-01-15',
      schedule_time: '09:30',
      schedule_timezone: 'America/New_York',
      concurrency: CONCURRENCY,
      callback_url: rx.url,
      contacts: makeContacts(CALLS),
    });
    const createdBody = (await created.json()) as any;
    expect(created.status, JSON.stringify(createdBody).slice(0, 500)).toBe(201);
    const batchId: string = createdBody.data.batch_id;
    expect(createdBody.data.accepted_contacts).toBe(CALLS);

    const watch = (name: string) => {
      const client = wsClient(procs[name]!.url, `Bearer ${owner.apiKey}`);
      clients.push(client);
      return wsStream<{ batchProgress: any }>(client, PROGRESS, { id: batchId });
    };
    const watchers: Record<string, Stream<{ batchProgress: any }>[]> = {
      'api-a': [watch('api-a'), watch('api-a')],
      'api-b': [watch('api-b'), watch('api-b')],
    };
    for (const s of Object.values(watchers).flat()) await s.until(() => true, 30_000);

    const startedAt = Date.now();
    const started = await viaProxy('POST', `${CALL_BATCHES}/${batchId}/start`, owner.apiKey);
    expect(started.status).toBe(200);

    // --- Mid-batch: a third of the calls ended, worker-a holding answered calls, both APIs'
    // subscribers moving. Then one API and one worker die.
    const batchRow = () => db.prisma.batch.findUniqueOrThrow({ where: { id: batchId } });
    const heldBy = (worker: string, statuses: string[]) =>
      db.prisma.call.count({ where: { batchId, status: { in: statuses }, leaseOwner: { startsWith: `${worker}#` } } });
    await waitFor(
      async () => {
        const b = await batchRow();
        return b.completed + b.failed >= CALLS / 3 && (await heldBy('worker-a', ['answered', 'in_progress'])) > 0;
      },
      {
        timeoutMs: 60_000,
        intervalMs: 20,
        what: 'a third of the calls ended and worker-a in the middle of answered calls',
        abortIf: abortIfDied(...Object.keys(procs)),
      },
    );
    for (const s of Object.values(watchers).flat()) await s.until((v) => v.batchProgress.completed + v.batchProgress.failed > 0, 30_000);
    const killed = [procs['api-a']!, procs['worker-a']!];
    for (const p of killed) p.child.kill('SIGKILL');
    await Promise.all(killed.map((p) => p.exited));
    const killedAt = Date.now();

    // What the dead worker left: calls it was on (a claim marks a call dialled before the dial, so
    // these are never dialled again) and deliveries it was sending.
    const lostIds = (
      await db.prisma.call.findMany({ where: { batchId, status: { in: IN_FLIGHT }, leaseOwner: { startsWith: 'worker-a#' } }, select: { id: true } })
    ).map((c) => c.id);
    const sendingIds = new Set(
      (
        await db.prisma.webhookDelivery.findMany({
          where: { batchId, status: 'pending', leaseOwner: { startsWith: 'worker-a:' } },
          select: { id: true },
        })
      ).map((d) => d.id),
    );
    expect(lostIds.length).toBeGreaterThan(0);

    // The proxy keeps answering (it skips the dead API) until the survivor has finished the batch.
    const reads: number[] = [];
    await waitFor(
      async () => {
        const r = await viaProxy('GET', `${CALL_BATCHES}/${batchId}`, owner.apiKey);
        const body = (await r.json()) as any;
        reads.push(r.status);
        return r.status === 200 && body.data.status === 'completed';
      },
      { timeoutMs: 90_000, intervalMs: 250, what: 'the batch completed', abortIf: abortIfDied('api-b', 'worker-b') },
    );
    const completedAt = Date.now();
    expect(reads.filter((s) => s !== 200)).toEqual([]);
    expect(proxy.served.get('api-b')).toBeGreaterThan(0);

    // --- Every call ended exactly once and was dialled exactly once (no retry policy, no alternate).
    const { batch, calls, events } = await expectConsistentBatch({ db } as unknown as AppDeps, batchId);
    expect(batch.status).toBe('completed');
    expect(calls).toHaveLength(CALLS);
    const perCall = new Map<string, { endings: number; dials: number }>();
    for (const e of events) {
      const c = perCall.get(e.call_id) ?? { endings: 0, dials: 0 };
      if (TERMINAL.includes(e.to_status) && !TERMINAL.includes(e.from_status ?? '')) c.endings += 1;
      if (e.detail?.event === 'dial') c.dials += 1;
      perCall.set(e.call_id, c);
    }
    const offenders = calls.filter((c) => {
      const p = perCall.get(c.id);
      return !TERMINAL.includes(c.status) || c.status === 'cancelled' || c.attempts !== 1 || p?.endings !== 1 || p?.dials !== 1;
    });
    expect(offenders.map((c) => `${c.id} ${c.status} attempts ${c.attempts} ${JSON.stringify(perCall.get(c.id))}`)).toEqual([]);
    // Both workers dialled; the dead one's calls in flight ended as lost (failed by the survivor).
    const dialled = events.filter((e) => e.detail?.event === 'dial').map((e) => String(e.detail!.number));
    expect(new Set(dialled).size).toBe(CALLS);
    expect(dialled).toHaveLength(CALLS);
    const dialledBy = new Set(events.filter((e) => e.detail?.event === 'dial').map((e) => String(e.detail!.worker).split('#')[0]));
    expect(dialledBy).toEqual(new Set(['worker-a', 'worker-b']));
    const byId = new Map(calls.map((c) => [c.id, c]));
    expect(lostIds.map((id) => byId.get(id)!.disconnectReason)).toEqual(lostIds.map(() => 'dispatcher_lost'));
    expect(
      calls
        .filter((c) => c.disconnectReason === 'dispatcher_lost')
        .map((c) => c.id)
        .sort(),
    ).toEqual([...lostIds].sort());

    // --- Webhooks: every event of the outbox delivered; each under one webhook-id (the body's id),
    // signed with the account's secret; one terminal event per call (and call.analyzed per answered
    // call); an event received twice only when the dead worker was sending it.
    // A call's analysis runs after it ends, so some are still running when the batch completes (the
    // dead worker's only once their lease has expired and the survivor takes them over); their
    // call.analyzed events are written when they finish.
    const analysing = () => db.prisma.call.count({ where: { batchId, transcriptStatus: { in: ['pending', 'processing'] } } });
    await waitFor(async () => (await analysing()) === 0, {
      timeoutMs: 90_000,
      intervalMs: 250,
      what: 'every analysis settled',
      abortIf: abortIfDied('worker-b'),
    });
    await waitFor(async () => (await db.prisma.webhookDelivery.count({ where: { batchId, status: { not: 'delivered' } } })) === 0, {
      timeoutMs: 60_000,
      intervalMs: 100,
      what: 'every webhook delivered',
      abortIf: abortIfDied('worker-b'),
    });
    const deliveredAt = Date.now();
    const outbox = await db.prisma.webhookDelivery.findMany({
      where: { batchId },
      select: { id: true, eventType: true, attempts: true, payload: true },
    });
    const answered = calls.filter((c) => c.transcriptStatus !== null).length;
    expect(outbox.length).toBe(CALLS + answered + 2);
    const expectedTypes = new Map<string, string[]>();
    for (const c of calls)
      expectedTypes.set(
        c.id,
        [c.status === 'completed' ? 'call.completed' : 'call.failed', ...(c.transcriptStatus === null ? [] : ['call.analyzed'])].sort(),
      );
    const queuedTypes = new Map<string, string[]>();
    for (const d of outbox) {
      const key = (d.payload as any).data.call_id ?? 'batch';
      queuedTypes.set(key, [...(queuedTypes.get(key) ?? []), d.eventType].sort());
    }
    expect(queuedTypes.get('batch')).toEqual(['batch.completed', 'batch.started']);
    queuedTypes.delete('batch');
    expect(queuedTypes).toEqual(expectedTypes);

    const receipts = new Map<string, number>();
    const verifier = new Webhook(secret);
    for (const r of rx.received) {
      const body = JSON.parse(r.body);
      expect(r.headers['webhook-id']).toBe(body.id);
      verifier.verify(r.body, r.headers as Record<string, string>);
      receipts.set(body.id, (receipts.get(body.id) ?? 0) + 1);
    }
    expect(new Set(receipts.keys())).toEqual(new Set(outbox.map((d) => d.id)));
    const attempts = new Map(outbox.map((d) => [d.id, d.attempts]));
    const repeated = [...receipts].filter(([, n]) => n > 1).map(([id]) => id);
    expect(repeated.filter((id) => !sendingIds.has(id))).toEqual([]);
    expect([...receipts].filter(([id, n]) => n > attempts.get(id)!)).toEqual([]);
    expect((await batchRow()).callbacks).toBe(outbox.length);

    // --- The subscribers of the surviving API saw the final call counters, the stream ending with them;
    // those of the killed one were cut off. `callbacks` counts webhook deliveries, which go on after
    // the last call ends (the batch.completed event's own, retries): the stream may end before them.
    const final = await batchRow();
    for (const s of watchers['api-b']!) {
      const last = await s.until(
        (v) => v.batchProgress.status === 'completed' && v.batchProgress.completed === final.completed && v.batchProgress.failed === final.failed,
        30_000,
      );
      expect(last.batchProgress).toMatchObject({ queued: 0, inProgress: 0, cancelled: 0, acceptedContacts: CALLS });
      expect(last.batchProgress.callbacks).toBeLessThanOrEqual(final.callbacks);
      expect(s.values().every((v) => sumRuleHolds(v.batchProgress))).toBe(true);
    }
    for (const s of watchers['api-a']!) {
      await s.done;
      expect(s.values().some((v) => v.batchProgress.status === 'completed')).toBe(false);
    }

    // A recording link signed by a worker plays through the proxy from the surviving API: shared APP_SECRET and PUBLIC_URL.
    const withRecording = rx.bodies().find((e) => e.type === 'call.completed' && e.data.recording_url);
    const recording = await fetch(withRecording!.data.recording_url);
    expect(recording.status).toBe(200);
    expect(recording.headers.get('content-type')).toBe('audio/wav');

    // --- The survivors stop cleanly on SIGTERM.
    const survivors = [procs['api-b']!, procs['worker-b']!];
    for (const p of survivors) p.child.kill('SIGTERM');
    expect(await Promise.all(survivors.map((p) => p.exited))).toEqual([0, 0]);
    const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
    console.log(
      `multi-host: killed at ${secs(killedAt - startedAt)}, batch completed at ${secs(completedAt - startedAt)}, every event delivered at ${secs(deliveredAt - startedAt)}; ` +
        `${calls.length} calls, ${lostIds.length} lost with worker-a; ` +
        `${outbox.length} events, ${rx.received.length} deliveries received (${repeated.length} again after the kill, ${sendingIds.size} in flight at it); ` +
        `proxy: ${JSON.stringify(Object.fromEntries(proxy.served))} served, failovers ${JSON.stringify(Object.fromEntries(proxy.failovers))}`,
    );
  }, 180_000);
});
