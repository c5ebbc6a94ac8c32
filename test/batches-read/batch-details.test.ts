import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { callInState, insertBatch, moveCall } from '../helpers/fixtures.ts';
import { COUNTER_BUCKETS, counterBucket, type CallStatus } from '../../src/domain/call-state.ts';
import { createSimulatorProvider } from '../../src/dispatch/voice/simulator.ts';
import { batchDetailsByIds } from '../../src/services/batches/get-batch.ts';
import { expectConsistentBatch, phoneEndingIn, registryOf, testWorker } from '../helpers/dispatch.ts';
import { BATCH_OPTION_NAMES, BATCH_OPTION_REST_NAMES } from '../../src/domain/batch-options.ts';

/** Every batch option, by its REST name, as a batch created without options shows it. */
const NO_OPTIONS = Object.fromEntries(BATCH_OPTION_REST_NAMES.map((name) => [name, null]));

let t: TestApp;
let a: SeededAccount;
let b: SeededAccount;

beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount();
  b = await t.seedAccount();
});
afterAll(() => t.close());

const details = (id: string, key: string | null = a.apiKey) => t.request('GET', `/api/v1/public/call-batches/${id}`, { key });

describe('GET /call-batches/{batch_id}', () => {
  it('returns every field of the batch details in the envelope', async () => {
    const createdAt = new Date('2026-03-01T09:15:30.123Z');
    const { batch } = await insertBatch(t.deps, a, {
      contacts: 7,
      status: 'running',
      startMode: 'scheduled',
      createdAt,
      batch: {
        scheduledAt: new Date('2026-03-02T14:00:00.000Z'),
        timezone: 'Europe/Berlin',
        concurrency: 3,
        rejectedContacts: 2,
        callbacks: 4,
        startedAt: new Date('2026-03-02T14:00:01.500Z'),
      },
      callOverrides: (i) =>
        callInState((['completed', 'failed', 'ringing', 'queued', 'cancelled', 'no_answer', 'pending'] as const)[i], i, createdAt),
    });
    const res = await details(batch.id);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status_code: 200,
      message: 'Call batch fetched successfully',
      error: null,
      data: {
        batch_id: batch.id,
        agent_id: a.agent.id,
        version_id: a.version.id,
        status: 'running',
        start_mode: 'scheduled',
        scheduled_at: '2026-03-02T14:00:00.000Z',
        timezone: 'Europe/Berlin',
        concurrency: 3,
        total_contacts: 9,
        accepted_contacts: 7,
        rejected_contacts: 2,
        callbacks: 4,
        queued: 2,
        in_progress: 1,
        completed: 1,
        failed: 2,
        cancelled: 1,
        created_at: '2026-03-01T09:15:30.123Z',
        started_at: '2026-03-02T14:00:01.500Z',
        completed_at: null,
        retry: null,
        expires_at: null,
        calling_window: null,
        enforced_calling_window: null,
        ...NO_OPTIONS,
      },
    });
    // Key order is part of what legacy clients see; the options (none given: null) follow.
    expect(Object.keys(res.body.data)).toEqual([
      'batch_id',
      'agent_id',
      'version_id',
      'status',
      'start_mode',
      'scheduled_at',
      'timezone',
      'concurrency',
      'total_contacts',
      'accepted_contacts',
      'rejected_contacts',
      'callbacks',
      'queued',
      'in_progress',
      'completed',
      'failed',
      'cancelled',
      'created_at',
      'started_at',
      'completed_at',
      'retry',
      'expires_at',
      'calling_window',
      'enforced_calling_window',
      ...BATCH_OPTION_REST_NAMES,
    ]);
  });

  it('reports each stored status as is', async () => {
    for (const status of ['pending', 'paused', 'queued', 'dispatching', 'running', 'completed', 'cancelled'] as const) {
      const { batch } = await insertBatch(t.deps, a, { contacts: 1, status });
      expect((await details(batch.id)).body.data.status).toBe(status);
    }
  });

  it('shows the plain zone name even if a labelled one was stored', async () => {
    const { batch } = await insertBatch(t.deps, a, { contacts: 1, batch: { timezone: 'America/New_York (EST, UTC-05:00)' } });
    expect((await details(batch.id)).body.data.timezone).toBe('America/New_York');
  });

  it('completed batch carries completed_at', async () => {
    const at = new Date('2026-04-01T00:00:00.000Z');
    const { batch } = await insertBatch(t.deps, a, {
      contacts: 2,
      status: 'completed',
      createdAt: at,
      callOverrides: (i) => callInState('completed', i, at),
    });
    const data = (await details(batch.id)).body.data;
    expect(data.completed_at).toBe('2026-04-01T01:00:00.000Z');
    expect(data.started_at).toBe('2026-04-01T00:00:00.000Z');
    expect(data.completed).toBe(2);
  });

  it('404 detail for an absent batch, a malformed id and another account’s batch', async () => {
    const { batch: foreign } = await insertBatch(t.deps, b, { contacts: 1 });
    for (const id of ['sched_0000000000000000000000000000000', 'nope', foreign.id]) {
      const res = await details(id);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ detail: 'Call batch not found' });
    }
    // The owner still sees it.
    expect((await details(foreign.id, b.apiKey)).status).toBe(200);
  });

  it('401 detail without a valid key', async () => {
    const { batch } = await insertBatch(t.deps, a, { contacts: 1 });
    for (const key of [null, 'sk_wrongwrongwrongwrongwrongwrongwrongwrong']) {
      const res = await details(batch.id, key);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ detail: 'Invalid API key' });
    }
  });

  it('GraphQL batch(id) returns the same batch, and NOT_FOUND for a foreign one', async () => {
    const { batch } = await insertBatch(t.deps, a, { contacts: 3, status: 'paused', startMode: 'manual' });
    const q = `query($id: ID!) { batch(id: $id) { id status startMode timezone acceptedContacts queued inProgress completed failed cancelled agent { id } promptVersion { name } } }`;
    const ok = await t.gql(q, { id: batch.id }, a.apiKey);
    expect(ok.body.data.batch).toEqual({
      id: batch.id,
      status: 'paused',
      startMode: 'manual',
      timezone: 'America/New_York',
      acceptedContacts: 3,
      queued: 3,
      inProgress: 0,
      completed: 0,
      failed: 0,
      cancelled: 0,
      agent: { id: a.agent.id },
      promptVersion: { name: 'v1' },
    });
    const foreign = await t.gql(q, { id: batch.id }, b.apiKey);
    expect(foreign.body.data).toBeNull();
    expect(foreign.body.errors?.[0]).toMatchObject({ message: 'Call batch not found', extensions: { code: 'NOT_FOUND' } });
  });
});

describe('GraphQL batch(id): the plain-column fast path and the Prisma path agree', () => {
  it('every scalar field reads the same with and without a relation in the selection', async () => {
    const { batch } = await insertBatch(t.deps, a, {
      contacts: 2,
      status: 'completed',
      batch: { metadata: { campaign: 'spring', tags: ['a', 'b'], n: 3 }, callbackUrl: 'https://example.com/hook', idempotencyKey: 'k-1' },
    });
    const scalars = `id agentId versionId status startMode scheduledAt timezone concurrency voice interruption useAlternateNumber
      recordingEnabled maxDurationSeconds deduplicateByPhone callbackUrl metadata idempotencyKey totalContacts acceptedContacts
      rejectedContacts queued inProgress completed failed cancelled callbacks createdAt startedAt completedAt`;
    const plain = await t.gql(`query($id: ID!) { batch(id: $id) { ${scalars} } }`, { id: batch.id }, a.apiKey);
    const withRelation = await t.gql(`query($id: ID!) { batch(id: $id) { ${scalars} agent { name } } }`, { id: batch.id }, a.apiKey);
    expect(plain.body.errors).toBeUndefined();
    const { agent, ...rest } = withRelation.body.data.batch;
    expect(agent).toEqual({ name: 'Sales Agent' });
    expect(plain.body.data.batch).toEqual(rest);
    expect(plain.body.data.batch).toMatchObject({
      metadata: { campaign: 'spring', tags: ['a', 'b'], n: 3 },
      callbackUrl: 'https://example.com/hook',
      interruption: true,
      completedAt: batch.completedAt!.toISOString(),
      createdAt: batch.createdAt.toISOString(),
    });
  });
});

describe('GraphQL: the detail fields of a batch read alike wherever the batch comes from', () => {
  // Batch details reads their columns with the row; a list asking for them reads them with its
  // page; a call's batch relation loads them through the request's batch loader.
  const DETAIL = `startMode scheduledAt timezone concurrency acceptedContacts rejectedContacts callbacks startedAt completedAt
    retry { maxAttempts on delaySeconds } expiresAt callingWindow { start end days timezone }`;

  it('batch(id), a batches page and call.batch give the same values', async () => {
    const { batch, calls } = await insertBatch(t.deps, a, {
      contacts: 2,
      status: 'running',
      startMode: 'scheduled',
      batch: {
        scheduledAt: new Date('2026-04-02T14:00:00.000Z'),
        timezone: 'Europe/Berlin',
        concurrency: 4,
        rejectedContacts: 1,
        callbacks: 2,
        startedAt: new Date('2026-04-02T14:00:01.500Z'),
        retryMaxAttempts: 3,
        retryOn: ['no_answer', 'busy'],
        retryDelaySeconds: 900,
        expiresAt: new Date('2026-05-01T00:00:00.000Z'),
        callingWindow: { start: '09:00', end: '17:30', days: ['mon', 'tue'], timezone: 'Europe/Berlin' },
      },
    });
    const expected = {
      startMode: 'scheduled',
      scheduledAt: '2026-04-02T14:00:00.000Z',
      timezone: 'Europe/Berlin',
      concurrency: 4,
      acceptedContacts: 2,
      rejectedContacts: 1,
      callbacks: 2,
      startedAt: '2026-04-02T14:00:01.500Z',
      completedAt: null,
      retry: { maxAttempts: 3, on: ['no_answer', 'busy'], delaySeconds: 900 },
      expiresAt: '2026-05-01T00:00:00.000Z',
      callingWindow: { start: '09:00', end: '17:30', days: ['mon', 'tue'], timezone: 'Europe/Berlin' },
    };
    const one = await t.gql(`query($id: ID!) { batch(id: $id) { ${DETAIL} } }`, { id: batch.id }, a.apiKey);
    expect(one.body).toEqual({ data: { batch: expected } });
    const page = await t.gql(`{ batches(limit: 200) { items { id ${DETAIL} } } }`, {}, a.apiKey);
    expect(page.body.errors).toBeUndefined();
    expect(page.body.data.batches.items.find((i: { id: string }) => i.id === batch.id)).toEqual({ id: batch.id, ...expected });
    const viaCall = await t.gql(`query($id: ID!) { call(id: $id) { batch { ${DETAIL} } } }`, { id: calls[0].id }, a.apiKey);
    expect(viaCall.body).toEqual({ data: { call: { batch: expected } } });
  });

  it("a batch read without them loads its detail columns alone (not its validation errors), the account's only", async () => {
    const { batch } = await insertBatch(t.deps, a, { contacts: 1, batch: { validationErrors: [{ index: 2, reason: 'x'.repeat(1000) }] } });
    const { batch: foreign } = await insertBatch(t.deps, b, { contacts: 1 });
    const [own, absent, theirs] = await batchDetailsByIds(t.deps.db, a.account.id, [batch.id, 'sched_missing', foreign.id]);
    expect(Object.keys(own!).sort()).toEqual(
      [
        'id',
        'startMode',
        'scheduledAt',
        'timezone',
        'concurrency',
        'acceptedContacts',
        'rejectedContacts',
        'callbacks',
        'startedAt',
        'completedAt',
        'retryMaxAttempts',
        'retryOn',
        'retryDelaySeconds',
        'expiresAt',
        'callingWindow',
        'enforcedWindow',
        ...BATCH_OPTION_NAMES,
      ].sort(),
    );
    expect(own!.id).toBe(batch.id);
    expect([absent, theirs]).toEqual([null, null]);
  });
});

describe('counters while the batch changes state', () => {
  // Paths a call can take through the worker, one step at a time.
  const PATHS: CallStatus[][] = [
    ['queued', 'ringing', 'answered', 'in_progress', 'completed'],
    ['queued', 'ringing', 'no_answer'],
    ['queued', 'ringing', 'busy'],
    ['queued', 'ringing', 'answered', 'failed'],
    ['queued', 'failed'],
    ['cancelled'],
  ];

  function rng(seed: number) {
    return () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  }

  async function expectConsistent(batchId: string) {
    const [rest, gql, results, rows] = await Promise.all([
      details(batchId),
      t.gql(`query($id: ID!) { batch(id: $id) { acceptedContacts queued inProgress completed failed cancelled } }`, { id: batchId }, a.apiKey),
      t.request('GET', `/api/v1/public/call-batches/${batchId}/results?limit=1`, { key: a.apiKey }),
      t.deps.db.prisma.call.findMany({ where: { batchId }, select: { status: true } }),
    ]);
    const d = rest.body.data;
    expect(d.queued + d.in_progress + d.completed + d.failed + d.cancelled).toBe(d.accepted_contacts);
    const g = gql.body.data.batch;
    expect(g.queued + g.inProgress + g.completed + g.failed + g.cancelled).toBe(g.acceptedContacts);
    // And the counters are the calls' real buckets, not just a consistent sum.
    const actual = Object.fromEntries(COUNTER_BUCKETS.map((k) => [k, 0]));
    for (const r of rows) actual[counterBucket(r.status as CallStatus)] += 1;
    const readRest = { queued: d.queued, in_progress: d.in_progress, completed: d.completed, failed: d.failed, cancelled: d.cancelled };
    const sumRest = Object.values(readRest).reduce((x, y) => x + y, 0);
    expect(sumRest).toBe(rows.length);
    // Reads run concurrently with nothing here, so they must equal the rows exactly.
    expect(readRest).toEqual(actual);
    return { details: d, resultsStatus: results.body.data.status as string };
  }

  it('queued + in_progress + completed + failed + cancelled = accepted_contacts after every step', async () => {
    const n = 12;
    const { batch, calls } = await insertBatch(t.deps, a, { contacts: n, status: 'queued' });
    const random = rng(42);
    const plan = calls.map((c, i) => ({ id: c.id, path: PATHS[i % PATHS.length], at: 0 }));
    let first = await expectConsistent(batch.id);
    expect(first.resultsStatus).toBe('pending');
    await t.deps.db.prisma.batch.update({ where: { id: batch.id }, data: { status: 'running' } });

    let steps = 0;
    while (plan.some((p) => p.at < p.path.length)) {
      const open = plan.filter((p) => p.at < p.path.length);
      const p = open[Math.floor(random() * open.length)];
      await moveCall(t.deps, p.id, p.path[p.at++]);
      steps++;
      const { details: d, resultsStatus } = await expectConsistent(batch.id);
      expect(d.status).toBe('running');
      expect(resultsStatus).toBe(plan.every((x) => x.at === x.path.length) ? 'completed' : 'pending');
    }
    expect(steps).toBe(plan.reduce((s, p) => s + p.path.length, 0));
    await t.deps.db.prisma.batch.update({ where: { id: batch.id }, data: { status: 'completed', completedAt: t.clock.now() } });
    first = await expectConsistent(batch.id);
    expect(first.details).toMatchObject({ status: 'completed', queued: 0, in_progress: 0, completed: 2, failed: 8, cancelled: 2 });
    expect(first.resultsStatus).toBe('completed');
  });

  it('holds at every read while a real worker drains the batch', async () => {
    const n = 40;
    // Reads as fast as they go: more than a default per-minute budget.
    const reader = await t.seedAccount({ limits: { rateLimitPerMinute: 1_000_000 } });
    // Every simulator outcome (last digit: 0 no answer, 1 busy, 2 failed, 3/4 answered).
    const { batch } = await insertBatch(t.deps, reader, {
      contacts: n,
      status: 'queued',
      batch: { concurrency: 4, recordingEnabled: false },
      callOverrides: (i) => ({ status: 'queued', phoneNumber: phoneEndingIn(i % 5, i) }),
    });
    const worker = testWorker(t.deps, { providers: registryOf(createSimulatorProvider({ callMs: 30 })) });
    const seen = { reads: 0, midway: 0, statuses: new Set<string>() };
    worker.start();
    try {
      const deadline = Date.now() + 25_000;
      for (;;) {
        const [rest, gql] = await Promise.all([
          details(batch.id, reader.apiKey),
          t.gql(
            `query($id: ID!) { batch(id: $id) { status acceptedContacts queued inProgress completed failed cancelled } }`,
            { id: batch.id },
            reader.apiKey,
          ),
        ]);
        expect(rest.status, JSON.stringify(rest.body)).toBe(200);
        const d = rest.body.data;
        expect(d.queued + d.in_progress + d.completed + d.failed + d.cancelled, JSON.stringify(d)).toBe(n);
        expect(d.accepted_contacts).toBe(n);
        const g = gql.body.data.batch;
        expect(g.queued + g.inProgress + g.completed + g.failed + g.cancelled, JSON.stringify(g)).toBe(g.acceptedContacts);
        seen.reads += 1;
        seen.statuses.add(d.status);
        if (d.queued > 0 && d.queued < n) seen.midway += 1;
        if (d.status === 'completed') break;
        if (Date.now() > deadline) throw new Error(`batch did not complete: ${JSON.stringify(d)}`);
        await new Promise((r) => setTimeout(r, 2));
      }
    } finally {
      await worker.stop({ graceMs: 2000 });
    }
    // The reads really overlapped the drain, not just its two ends.
    expect(seen.midway, JSON.stringify({ ...seen, statuses: [...seen.statuses] })).toBeGreaterThan(2);
    const { batch: done } = await expectConsistentBatch(t.deps, batch.id);
    expect({ completed: done.completed, failed: done.failed, queued: done.queued, inProgress: done.inProgress }).toEqual({
      completed: 16,
      failed: 24,
      queued: 0,
      inProgress: 0,
    });
  });

  it('holds for reads racing concurrent call moves; a cancelled batch reports results status cancelled', async () => {
    const n = 20;
    const { batch, calls } = await insertBatch(t.deps, a, { contacts: n, status: 'running' });
    const reads: Promise<unknown>[] = [];
    const moves = calls.slice(0, 10).map(async (c, i) => {
      for (const to of PATHS[i % 5]) {
        await moveCall(t.deps, c.id, to);
        reads.push(
          details(batch.id).then((r) => {
            const d = r.body.data;
            expect(d.queued + d.in_progress + d.completed + d.failed + d.cancelled).toBe(n);
          }),
        );
      }
    });
    await Promise.all(moves);
    await Promise.all(reads);
    expect(reads.length).toBeGreaterThan(20);

    // Cancel: the untouched calls become cancelled, the batch cancelled.
    for (const c of calls.slice(10)) await moveCall(t.deps, c.id, 'cancelled');
    await t.deps.db.prisma.batch.update({ where: { id: batch.id }, data: { status: 'cancelled' } });
    const { details: d, resultsStatus } = await expectConsistent(batch.id);
    expect(d.cancelled).toBe(10);
    expect(resultsStatus).toBe('cancelled');
  });
});
