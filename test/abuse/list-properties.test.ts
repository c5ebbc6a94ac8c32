// Property-based: generated query strings (plausible, boundary, hostile, broken escapes) and
// batch ids for the list endpoints. For every case: no 5xx; an error is one of the contract's
// forms with a fitting status; a success is a well-formed page of the caller's own data only;
// reads change nothing.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { contractErrorForm, send, storedCounts } from '../helpers/abuse.ts';
import { queryString } from '../helpers/hostile-arbitraries.ts';
import { callInState, insertBatch } from '../helpers/fixtures.ts';
import type { CallStatus } from '../../src/domain/call-state.ts';

const RUNS = Number(process.env.ABUSE_RUNS ?? 1000);
const BASE = '/api/v1/public';
const STATUSES: CallStatus[] = ['pending', 'queued', 'in_progress', 'completed', 'failed', 'no_answer', 'cancelled'];

let t: TestApp;
let a: SeededAccount;
const own: string[] = [];
let foreign: string;
let counts: { batches: number; calls: number };

beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount({ limits: { rateLimitPerMinute: 10_000_000 } });
  const b = await t.seedAccount({ agentName: 'Other' });
  const now = t.deps.clock.now();
  for (const [i, status] of (['running', 'completed', 'paused'] as const).entries()) {
    const { batch } = await insertBatch(t.deps, a, {
      contacts: 12,
      status,
      createdAt: new Date(now.getTime() - i * 86_400_000),
      callOverrides: (j) => callInState(STATUSES[(i + j) % STATUSES.length], j, now),
    });
    own.push(batch.id);
  }
  foreign = (await insertBatch(t.deps, b, { contacts: 3 })).batch.id;
  counts = await storedCounts(t.deps);
});
afterAll(() => t.close());

const batchId = () =>
  fc.oneof(
    { weight: 12, arbitrary: fc.constantFrom(...own) },
    { weight: 1, arbitrary: fc.constant(foreign) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        'sched_missing',
        'sched_',
        '%00',
        'sched_%00',
        '%ED%A0%80',
        'SCHED_X',
        '..',
        '%2e%2e',
        'x'.repeat(3000),
        own[0].toUpperCase(),
      ),
    },
    {
      weight: 1,
      arbitrary: fc
        .string({ maxLength: 20 })
        .map(encodeURIComponent)
        .filter((s) => s.length > 0 && s !== '.' && s !== '..'),
    },
  );

/** call-records requires start_date and end_date: usually present and valid, so filters get exercised. */
const recordsQuery = fc.oneof(
  { weight: 3, arbitrary: queryString.map((qs) => `start_date=2000-01-01&end_date=2100-12-31${qs ? `&${qs}` : ''}`) },
  { weight: 1, arbitrary: queryString },
);

interface Endpoint {
  name: string;
  /** Query strings that once produced a 500: always run first. */
  regressions?: string[];
  path: (id: string) => string;
  message: string;
  /** Route-level 404 for batches that are missing or not the caller's. */
  batchScoped: boolean;
  /** 422 in `detail` form is part of this endpoint's contract. */
  detail422: boolean;
}

const ENDPOINTS: Endpoint[] = [
  {
    name: 'GET /call-batches',
    path: () => `${BASE}/call-batches`,
    message: 'Call batches fetched successfully',
    batchScoped: false,
    detail422: false,
    // Years PostgreSQL / Prisma can't take (year 0, year 10000 after the offset).
    regressions: ['created_at_to=0000-01-01', 'created_at_from=9999-12-31T23:59:59-14:00'],
  },
  {
    name: 'GET /call-batches/{id}/calls',
    path: (id) => `${BASE}/call-batches/${id}/calls`,
    message: 'Batch calls fetched successfully',
    batchScoped: true,
    detail422: false,
  },
  {
    name: 'GET /call-batches/{id}/results',
    path: (id) => `${BASE}/call-batches/${id}/results`,
    message: 'Batch results fetched successfully',
    batchScoped: true,
    detail422: false,
  },
  {
    name: 'GET /call-records',
    path: () => `${BASE}/call-records`,
    message: 'Call records fetched successfully',
    batchScoped: false,
    detail422: true,
    regressions: ['start_date=2000-01-01&end_date=9999-12-31', 'start_date=0000-01-01&end_date=2000-01-01'],
  },
];

async function check(e: Endpoint, id: string, qs: string): Promise<number> {
  const path = `${e.path(id)}${qs ? `?${qs}` : ''}`;
  const res = await send(t.app, 'GET', path, { key: a.apiKey });
  // Built once: a page of 200 items checks each, and stringifying the body per item cost seconds a run.
  let described: string | undefined;
  const context = () => (described ??= `${path.slice(0, 300)} → ${res.status} ${JSON.stringify(res.body)?.slice(0, 400)}`);
  if (res.status >= 500) throw new Error(`server error: ${context()}`);
  if (res.status === 200) {
    expect(res.body, context()).toMatchObject({ status_code: 200, message: e.message, error: null });
    const { items, pagination } = res.body.data;
    expect(Array.isArray(items), context()).toBe(true);
    expect(pagination, context()).toEqual({
      page: expect.any(Number),
      limit: expect.any(Number),
      total: expect.any(Number),
      has_more: expect.any(Boolean),
    });
    expect(pagination.page, context()).toBeGreaterThanOrEqual(1);
    expect(pagination.limit, context()).toBeGreaterThanOrEqual(1);
    expect(pagination.limit, context()).toBeLessThanOrEqual(200);
    expect(items.length, context()).toBeLessThanOrEqual(pagination.limit);
    // Only the caller's data, whatever the filters say.
    for (const item of items) expect(own, context()).toContain(item.batch_id);
    if (e.batchScoped) expect(own, context()).toContain(id);
  } else {
    const form = contractErrorForm(res.status, res.body);
    if (res.status === 404) {
      expect(e.batchScoped, context()).toBe(true);
      // A dot-segment id makes the URL resolve to another (unknown) path before routing.
      const dotSegment = ['..', '%2e%2e'].includes(id);
      expect(res.body, context()).toEqual({ detail: dotSegment ? 'Not Found' : 'Call batch not found' });
    } else if (res.status === 422) {
      if (form === 'envelope') {
        expect(res.body.error.code, context()).toBe('MISSING_PARAMETER');
        expect(res.body.error.details.length, context()).toBeGreaterThan(0);
      } else expect(e.detail422, context()).toBe(true);
    } else throw new Error(`unexpected status: ${context()}`);
  }
  return res.status;
}

describe('list endpoints under generated query strings', () => {
  for (const e of ENDPOINTS) {
    it(`${e.name}: ${RUNS} generated queries — no 5xx, contract forms, own data only, no writes`, async () => {
      const statuses = new Map<number, number>();
      const examples = (e.regressions ?? []).map((qs): [string, string] => [own[0], qs]);
      await fc.assert(
        fc.asyncProperty(batchId(), e.name.endsWith('call-records') ? recordsQuery : queryString, async (id, qs) => {
          const status = await check(e, id, qs);
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
        }),
        {
          // fast-check counts the examples inside numRuns: RUNS generated cases come on top of them.
          numRuns: RUNS + examples.length,
          examples,
          seed: Number(process.env.ABUSE_SEED ?? Date.now() % 2 ** 31),
          endOnFailure: process.env.ABUSE_SHRINK !== '1',
        },
      );
      expect(await storedCounts(t.deps)).toEqual(counts);
      const seen = JSON.stringify([...statuses]);
      expect(
        [...statuses.values()].reduce((x, y) => x + y, 0),
        seen,
      ).toBe(RUNS + examples.length);
      expect(statuses.get(200) ?? 0, seen).toBeGreaterThan(RUNS / 10);
      expect(statuses.get(422) ?? 0, seen).toBeGreaterThan(RUNS / 20);
    }, 900_000);
  }
});
