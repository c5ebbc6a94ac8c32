// Benchmark (not a test): webhook outbox and delivery throughput against a local receiver on
// 127.0.0.1, on PGlite and (when 127.0.0.1:5432 answers) PostgreSQL. Prints
//   - enqueue: events/s written to the outbox by enqueueCallWebhooks, one statement per group of
//     200 (what the dispatch worker does per flush), with full call records;
//   - deliver: events/s sent, signed and recorded by one delivery worker loop (WEBHOOK_CONCURRENCY
//     32), next to the bound of bare signed POSTs to the same receiver, and their ratio.
//
//   npx tsx bench/webhooks.ts [--events 2000] [--db pglite,postgres]
//   BENCH_PG_URL=postgresql://user@host:5432/postgres selects another PostgreSQL server.
import { openThrowawayDatabase } from './throwaway-database.ts';
import { createMetrics } from '../src/metrics.ts';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/client.ts';
import { migrate } from '../src/db/migrate.ts';
import { systemClock, type AppDeps } from '../src/deps.ts';
import { newId } from '../src/domain/ids.ts';
import { createLogger } from '../src/logger.ts';
import { createAccount } from '../src/services/accounts/accounts.ts';
import { addDidNumber, createAgent, createPromptVersion } from '../src/services/accounts/catalog.ts';
import { withSqlTransaction } from '../src/db/sql-transaction.ts';
import { startWebhookDeliveryWorker } from '../src/services/webhooks/delivery-worker.ts';
import { postWebhook } from '../src/services/webhooks/http-post.ts';
import { enqueueCallWebhooks } from '../src/services/webhooks/outbox.ts';
import { generateSecret, signedHeaders } from '../src/services/webhooks/signing.ts';

const { values } = parseArgs({ options: { events: { type: 'string', default: '2000' }, db: { type: 'string', default: 'pglite,postgres' } } });
const N = Number(values.events);
const PG_URL = process.env.BENCH_PG_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

async function receiver() {
  let count = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      count += 1;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return { url, count: () => count, close: () => new Promise<void>((r) => server.close(() => r())) };
}

async function run(kind: 'pglite' | 'postgres') {
  const opened =
    kind === 'pglite'
      ? { db: await openDatabase({ inMemory: true }), drop: async () => {} }
      : await openThrowawayDatabase(PG_URL, 'cbs_bench_wh', 10);
  if (!opened) return console.log(`${kind}: not reachable, skipped`);
  const { db } = opened;
  if (kind === 'pglite') opened.drop = () => db.close();
  await migrate(db);
  const rx = await receiver();
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_CONCURRENCY: '32',
    APP_SECRET: 'bench-app-secret-0123456789abcdef0123456789',
  });
  const deps: AppDeps = { config, db, logger: createLogger('silent'), clock: systemClock, appSecret: config.APP_SECRET!, metrics: createMetrics(db) };
  try {
    const { account } = await createAccount(db, { name: 'Bench', email: 'bench@example.com' });
    const agent = await createAgent(db, account, { name: 'Agent', voice: 'alloy', outcomeKeys: ['interested'] });
    const version = await createPromptVersion(db, account, { agentId: agent.id, name: 'v1', prompt: 'Hello' });
    await addDidNumber(db, account, '+14155550100');
    const batchId = newId('batch');
    const now = new Date();
    await db.prisma.batch.create({
      data: {
        id: batchId,
        accountId: account.id,
        agentId: agent.id,
        promptVersionId: version.id,
        status: 'running',
        startMode: 'immediate',
        scheduledAt: now,
        timezone: 'UTC',
        concurrency: 5,
        voice: 'alloy',
        interruption: true,
        useAlternateNumber: false,
        recordingEnabled: true,
        maxDurationSeconds: 300,
        deduplicateByPhone: false,
        callbackUrl: rx.url,
        totalContacts: N,
        acceptedContacts: N,
        rejectedContacts: 0,
        completed: N,
        createdAt: now,
      },
    });
    const callIds = Array.from({ length: N }, () => newId('call'));
    await db.prisma.call.createMany({
      data: callIds.map((id, i) => ({
        id,
        accountId: account.id,
        batchId,
        agentId: agent.id,
        promptVersionId: version.id,
        seq: i + 1,
        externalId: `c${i}`,
        phoneNumber: `+1415555${String(i % 10000).padStart(4, '0')}`,
        status: 'completed',
        createdAt: now,
        completedAt: now,
        hangupBy: 'agent',
        disconnectReason: 'agent_hangup',
        durationSeconds: 60,
        answerDurationSeconds: 50,
        summary: 'A short summary of the call.',
        outcomes: { interested: 'yes' },
        transcriptStatus: 'ready',
        llmTranscript: 'Agent: hi\nUser: hello',
      })),
    });

    let t0 = performance.now();
    for (let i = 0; i < N; i += 200) {
      await withSqlTransaction(db, (tx) =>
        enqueueCallWebhooks(
          tx,
          deps,
          callIds.slice(i, i + 200).map((callId) => ({ type: 'call.completed' as const, callId })),
          new Date(),
        ),
      );
    }
    const enqueueRate = N / ((performance.now() - t0) / 1000);

    t0 = performance.now();
    const worker = startWebhookDeliveryWorker(deps);
    while ((await db.prisma.batch.findUniqueOrThrow({ where: { id: batchId }, select: { callbacks: true } })).callbacks < N) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const deliverRate = N / ((performance.now() - t0) / 1000);
    await worker.stop();

    // Bound: the same number of signed POSTs of the same size, 32 at a time, no database.
    const body = JSON.stringify((await db.prisma.webhookDelivery.findFirstOrThrow()).payload);
    const secret = generateSecret();
    const before = rx.count();
    t0 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < N) {
          next += 1;
          await postWebhook({
            url: rx.url,
            headers: { ...signedHeaders([secret], 'msg_x', new Date(), body) },
            body,
            timeoutMs: 5000,
            allowPrivate: true,
          });
        }
      }),
    );
    const boundRate = (rx.count() - before) / ((performance.now() - t0) / 1000);
    console.log(
      `${kind.padEnd(8)} events=${N}  enqueue ${enqueueRate.toFixed(0)}/s  deliver ${deliverRate.toFixed(0)}/s  bare POST ${boundRate.toFixed(0)}/s  ratio ${(deliverRate / boundRate).toFixed(2)}`,
    );
  } finally {
    await rx.close();
    await opened.drop();
  }
}

for (const kind of values.db!.split(',') as ('pglite' | 'postgres')[]) await run(kind);
