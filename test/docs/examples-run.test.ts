// Every shell and GraphQL example of the README and docs/api.md runs against a real `npm start`
// (fresh data directory, demo account, worker, simulator with short calls) and does what the docs
// say it does. The webhook examples run in webhook-receiver.test.ts.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.ts';
import { sseStream } from '../helpers/subscriptions.ts';
import { waitFor } from '../helpers/wait.ts';
import { jsonDocuments } from '../helpers/json-documents.ts';
import { exampleOperations, graphqlWithKey } from '../helpers/doc-examples.ts';
import { parseCsv } from '../../src/csv/csv.ts';
import { tempDataDir } from '../helpers/data-dir.ts';

const root = path.resolve(import.meta.dirname, '../..');
const dataDir = tempDataDir('cbs-doc-examples-');
let server: ServerProcess;
let key = '';
let base = '';

beforeAll(async () => {
  server = await startServerProcess({ DATA_DIR: dataDir, DATABASE_URL: '', RUN_WORKER: 'true', SIM_CALL_MS: '300' });
  await waitFor(() => /sk_[A-Za-z0-9_-]{43}/.test(server.stdout()), { what: 'the demo key' });
  key = /(sk_[A-Za-z0-9_-]{43})/.exec(server.stdout())![1];
  base = `${server.url}/api/v1/public`;
}, 90_000);

afterAll(async () => {
  server?.child.kill('SIGTERM');
  await server?.waitForExit();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** Runs an example as a reader would paste it: bash, with BASE, KEY (and BATCH) set. */
async function run(file: string, batch = '', cwd = os.tmpdir()): Promise<string> {
  const { stdout } = await promisify(execFile)('bash', [path.join(root, 'docs/examples', file)], {
    cwd,
    env: { ...process.env, BASE: base, KEY: key, BATCH: batch },
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout;
}

async function rest(method: string, p: string, body?: unknown): Promise<any> {
  const res = await fetch(`${base}${p}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return res.json();
}

const graphql = (query: string, variables: Record<string, unknown>) => graphqlWithKey(server.url, key, query, variables);

function subscribe(query: string, variables: Record<string, unknown>) {
  return sseStream((req) => fetch(req), server.url, query, variables, key);
}

describe('the examples in the docs run', () => {
  let firstBatch = '';

  it('me.sh and me.graphql read the account', async () => {
    const me = JSON.parse(await run('me.sh'));
    expect([me.status_code, me.data.name]).toEqual([200, 'Demo Account']);
    const [query] = exampleOperations('me.graphql').values();
    const body = await graphql(query, {});
    expect(body.data.me).toMatchObject({ name: 'Demo Account', limits: { maxBatchSize: expect.any(Number) } });
  });

  it("the README's first batch: created manual and waiting, started by start-batch.sh, then it runs to the end", async () => {
    const out = (await run('first-batch.sh')).trimEnd().split('\n');
    const created = JSON.parse(out[0]);
    expect(created).toMatchObject({
      status_code: 201,
      data: { status: 'pending', start_mode: 'manual', accepted_contacts: 20, rejected_contacts: 0, concurrency: 2 },
    });
    firstBatch = created.data.batch_id;
    expect(out[1]).toBe(`BATCH=${firstBatch}`);
    // Pasted again: the same batch, not a second one.
    const again = JSON.parse((await run('first-batch.sh')).split('\n')[0]);
    expect([again.status_code, again.data.idempotent, again.data.batch_id]).toEqual([200, true, firstBatch]);
    // A manual batch waits, so a newcomer has time to open the dashboard.
    expect((await rest('GET', `/call-batches/${firstBatch}`)).data).toMatchObject({ status: 'paused', queued: 20, started_at: null });

    const progress = subscribe(exampleOperations('progress.graphql').get('BatchProgress')!, { batchId: firstBatch });
    try {
      await progress.until((v) => v.batchProgress.status === 'paused');
      const started = JSON.parse(await run('start-batch.sh', firstBatch));
      expect([started.status_code, started.data.status]).toEqual([200, 'queued']);
      const done = await progress.until((v) => v.batchProgress.status === 'completed', 60_000);
      expect(done.batchProgress.completed + done.batchProgress.failed).toBe(20);
      // The simulator: digits 0, 1, 2 end as no answer, busy, failed (twice each in 10–29).
      expect(done.batchProgress.failed).toBe(6);
    } finally {
      progress.close();
    }
  }, 90_000);

  it('read-batch.sh reads the batch, the lists, calls, results and call records', async () => {
    expect(firstBatch).not.toBe('');
    const [details, active, calls, results, records] = jsonDocuments(await run('read-batch.sh', firstBatch));
    expect(details.data).toMatchObject({ batch_id: firstBatch, status: 'completed', completed: 14, failed: 6 });
    expect([active.status_code, Array.isArray(active.data.items)]).toEqual([200, true]);
    expect(calls.data.items.length).toBe(14);
    expect(calls.data.items.every((c: any) => c.status === 'completed' && c.batch_id === firstBatch)).toBe(true);
    expect(results.status_code).toBe(200);
    expect(results.data.items.length).toBeGreaterThan(0);
    expect(results.data.items.every((c: any) => Object.values(c.outcomes ?? {}).includes('interested'))).toBe(true);
    expect(records.data.pagination.total).toBeGreaterThanOrEqual(20);
  });

  it('replay-batch.sh: a repeated PUT with another body returns the first create result unchanged; GET has the current status', async () => {
    expect(firstBatch).not.toBe('');
    const [replay, details] = jsonDocuments(await run('replay-batch.sh', firstBatch));
    expect([replay.status_code, replay.message]).toEqual([200, 'Call batch already exists for this idempotency key']);
    expect(replay.data).toMatchObject({
      batch_id: firstBatch,
      idempotent: true,
      status: 'pending',
      start_mode: 'manual',
      total_contacts: 20,
      accepted_contacts: 20,
    });
    expect(details.data).toMatchObject({ batch_id: firstBatch, status: 'completed', total_contacts: 20 });
    expect((await rest('GET', '/call-batches?limit=100')).data.items.filter((b: any) => b.total_contacts === 1)).toEqual([]);
  });

  it("campaigns.md's toll-free example: rejected under a recipient window (it has no zone; in every season)", async () => {
    const create = (end: string) =>
      rest('POST', '/call-batches', {
        agent_name: 'Demo Agent',
        version_name: 'v1',
        start_mode: 'manual',
        interruption: true,
        use_alternate_number: false,
        schedule_date: '2026-11-24',
        schedule_time: '09:00',
        schedule_timezone: 'UTC',
        calling_window: { start: '09:00', end, timezone: 'recipient' },
        contacts: [
          { contact_id: 'tf', phone_number: '+18002345678' },
          { contact_id: 'ny', phone_number: '+12125550123' },
        ],
      });
    const short = await create('17:00');
    expect(short.data).toMatchObject({
      accepted_contacts: 1,
      rejected_contacts: 1,
      validation_errors: [{ external_id: 'tf', field: 'phone_number' }],
    });
    // The New York number alone is accepted under any window of a few hours.
    expect((await create('12:00')).data).toMatchObject({ accepted_contacts: 1, rejected_contacts: 1 });
  });

  it('export-results.sh downloads the CSV: a header and one line per call', async () => {
    expect(firstBatch).not.toBe('');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cbs-export-example-'));
    try {
      expect(await run('export-results.sh', firstBatch, dir)).toMatch(/^call_id,batch_id,/);
      const rows = parseCsv(fs.readFileSync(path.join(dir, 'results.csv'), 'utf8'));
      expect(rows.length).toBe(21);
      expect(rows.slice(1).every((r) => r.cells[1] === firstBatch)).toBe(true);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('retry-batch.sh creates a batch with a retry policy and an expiry: the busy call waits for its retry, in queued', async () => {
    const created = JSON.parse(await run('retry-batch.sh'));
    expect(created).toMatchObject({ status_code: 201, data: { accepted_contacts: 2 } });
    const batch = created.data.batch_id;
    const details = (await rest('GET', `/call-batches/${batch}`)).data;
    expect(details.retry).toEqual({ max_attempts: 3, on: ['no_answer', 'busy', 'voicemail'], delay_seconds: 60 });
    expect(Date.parse(details.expires_at) - Date.now()).toBeGreaterThan(23 * 3600_000);
    let items: any[] = [];
    await waitFor(
      async () => {
        items = (await rest('GET', `/call-batches/${batch}/calls`)).data.items;
        return items.every((c) => c.status === 'queued' && c.attempts === 1);
      },
      { what: 'both calls waiting for their second attempt' },
    );
    for (const c of items) expect(Date.parse(c.next_attempt_at) - Date.parse(c.completed_at ?? c.timestamp)).toBeGreaterThanOrEqual(59_000);
    expect((await rest('GET', `/call-batches/${batch}`)).data).toMatchObject({ status: 'running', queued: 2, in_progress: 0 });
  });

  it('nodes.graphql finds the batch, a call and its agent by their ids', async () => {
    expect(firstBatch).not.toBe('');
    const ops = exampleOperations('nodes.graphql');
    const batch = await graphql(ops.get('BatchNode')!, { batch: firstBatch });
    expect(batch.data.node).toEqual({ __typename: 'CallBatch', status: 'completed', totalContacts: 20 });
    const call = (await rest('GET', `/call-batches/${firstBatch}/calls?limit=1`)).data.items[0];
    const nodes = await graphql(ops.get('Nodes')!, { ids: [call.call_id, call.agent_id, 'sched_unknown'] });
    expect(nodes.data.nodes).toEqual([
      { __typename: 'Call', id: call.call_id, status: call.status, agent: { name: 'Demo Agent' } },
      { __typename: 'Agent', id: call.agent_id, name: 'Demo Agent' },
      null,
    ]);
  });

  it('the progress subscriptions: callUpdated replays the recent calls; accountBatches and batch-operations.sh pause, resume, cancel', async () => {
    expect(firstBatch).not.toBe('');
    const ops = exampleOperations('progress.graphql');
    const calls = subscribe(ops.get('CallUpdated')!, { batchId: firstBatch });
    const account = subscribe(ops.get('AccountBatches')!, {});
    try {
      await calls.until((v) => v.callUpdated.status === 'completed' && typeof v.callUpdated.summary === 'string');

      // One call at a time for 20 calls: the operations land while it runs.
      const slow = await rest('POST', '/call-batches', {
        agent_name: 'Demo Agent',
        version_name: 'v1',
        start_mode: 'manual',
        concurrency: 1,
        interruption: true,
        use_alternate_number: false,
        schedule_date: '2026-11-24',
        schedule_time: '09:00',
        schedule_timezone: 'UTC',
        contacts: Array.from({ length: 20 }, (_, i) => ({ contact_id: `op-${i}`, phone_number: `+1415555014${i % 10}` })),
      });
      const batch = slow.data.batch_id;
      expect(JSON.parse(await run('start-batch.sh', batch)).data.status).toBe('queued');
      const [paused, resumed, cancelled] = jsonDocuments(await run('batch-operations.sh', batch));
      expect([paused.status_code, paused.data.status]).toEqual([200, 'paused']);
      expect([resumed.status_code, resumed.data.status]).toEqual([200, 'queued']);
      expect([cancelled.status_code, cancelled.data.status]).toEqual([200, 'cancelled']);
      expect(cancelled.data.cancelled).toBeGreaterThan(0);
      await account.until((v) => v.accountBatches.batchId === batch && v.accountBatches.status === 'cancelled');
    } finally {
      calls.close();
      account.close();
    }
  }, 60_000);
});
