// The worker that changes calls and the API process holding the subscriber are different
// processes: counters travel through PostgreSQL LISTEN/NOTIFY only. PostgreSQL only (an embedded
// PGlite database belongs to one process).
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { TEST_DATABASE_URL } from '../helpers/database.ts';
import { wsClient } from '../helpers/ws-client.ts';
import { sumRuleHolds, wsStream } from '../helpers/subscriptions.ts';
import { batchBody, CALL_BATCHES, makeContacts } from '../helpers/batch-requests.ts';

const root = path.resolve(import.meta.dirname, '../..');

describe.skipIf(!TEST_DATABASE_URL)('a worker in another process', () => {
  let t: TestApp;
  let a: SeededAccount;
  let url: string;
  let child: ChildProcess | undefined;
  let childErr = '';

  beforeAll(async () => {
    t = await createTestApp({ config: { RUN_WORKER: 'false' } });
    a = await t.seedAccount();
    url = await t.app.listen();
    child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'src/worker.ts')], {
      cwd: root,
      env: {
        ...process.env,
        DATABASE_URL: t.testDb.url!,
        MIGRATE_ON_START: 'false',
        SIM_CALL_MS: '20',
        WORKER_POLL_MS: '20',
        WORKER_ID: 'xproc',
        LOG_LEVEL: 'warn',
        APP_SECRET: 'test-app-secret-0123456789abcdef0123456789',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child.stderr!.on('data', (d) => (childErr += d));
  });

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child!.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    await t?.close();
  });

  it('moves the counters the API process streams, to the end', async () => {
    const client = wsClient(url, `Bearer ${a.apiKey}`);
    const res = await t.request('POST', CALL_BATCHES, {
      key: a.apiKey,
      body: batchBody(a, { start_mode: 'manual', concurrency: 5, contacts: makeContacts(15) }),
    });
    expect(res.status).toBe(201);
    const id = res.body.data.batch_id;
    const s = wsStream<{ batchProgress: any }>(
      client,
      `subscription($id: ID!) { batchProgress(batchId: $id) { status queued inProgress completed failed cancelled acceptedContacts } }`,
      { id },
    );
    await s.until(() => true);
    const started = await t.gql('mutation($id: ID!) { startBatch(id: $id) { status } }', { id }, a.apiKey);
    expect(started.body.errors).toBeUndefined();

    const last = await s
      .until((v) => v.batchProgress.status === 'completed', 30_000)
      .catch((e) => {
        throw new Error(`${e.message}\nworker stderr: ${childErr}`);
      });
    expect(last.batchProgress).toMatchObject({ queued: 0, inProgress: 0, acceptedContacts: 15 });
    expect(last.batchProgress.completed + last.batchProgress.failed).toBe(15);
    expect(s.values().every((v) => sumRuleHolds(v.batchProgress))).toBe(true);
    expect(s.values().length).toBeGreaterThan(2);

    // The calls were dialled by the child process, not by anything in this one.
    const dials = await t.deps.db.prisma.$queryRaw<{ worker: string }[]>`
      SELECT DISTINCT e.detail->>'worker' AS worker FROM call_events e JOIN calls c ON c.id = e.call_id
       WHERE c.batch_id = ${id} AND e.detail->>'event' = 'dial'`;
    expect(dials.length).toBe(1);
    expect(dials[0].worker).toMatch(/^xproc/);
    s.close();
    await client.dispose();
  });
});
