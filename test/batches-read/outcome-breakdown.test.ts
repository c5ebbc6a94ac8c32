// CallBatch.outcomeBreakdown: how many calls hold each outcome value, most common first, counted
// at most once per batch every 10 s, and too costly to ask for a page of batches at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { callInState, insertBatch, type InsertedBatch } from '../helpers/fixtures.ts';
import { createOutcomeBreakdowns, MAX_OUTCOME_PAIRS, MAX_RUNNING_COUNTS, OUTCOME_TTL_MS } from '../../src/services/batches/outcome-breakdown.ts';
import { sseStream } from '../helpers/subscriptions.ts';

let t: TestApp;
let a: SeededAccount;
let other: SeededAccount;
let batch: InsertedBatch;
const AT = new Date('2026-09-01T00:00:00.000Z');
const OUTCOMES: (Record<string, string> | string | null)[] = [
  { interested: 'yes', plan: 'gold' },
  { interested: 'yes', plan: 'gold' },
  { interested: 'yes', plan: 'silver' },
  { interested: 'no' },
  { interested: 'yes' },
  null,
  // Not an object: stored by an odd provider answer, counted as nothing.
  'unparsed',
];

const breakdown = async (id: string, key = a.apiKey) =>
  (await t.gql(`query($id: ID!) { batch(id: $id) { outcomeBreakdown { key value calls } } }`, { id }, key)).body;

beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount();
  other = await t.seedAccount();
  batch = await insertBatch(t.deps, a, {
    contacts: OUTCOMES.length,
    status: 'completed',
    createdAt: AT,
    callOverrides: (i) => ({ ...callInState('completed', i, AT), outcomes: OUTCOMES[i] as never }),
  });
});
afterAll(() => t.close());

describe('outcome breakdown', () => {
  it('counts each key/value pair over the batch, most common first, ties by key and value', async () => {
    expect((await breakdown(batch.batch.id)).data.batch.outcomeBreakdown).toEqual([
      { key: 'interested', value: 'yes', calls: 4 },
      { key: 'plan', value: 'gold', calls: 2 },
      { key: 'interested', value: 'no', calls: 1 },
      { key: 'plan', value: 'silver', calls: 1 },
    ]);
  });

  it('is read at most once per batch per 10 s: a change shows after that', async () => {
    const id = batch.batch.id;
    const before = (await breakdown(id)).data.batch.outcomeBreakdown;
    await t.deps.db.prisma.call.updateMany({ where: { batchId: id, status: 'completed' }, data: { outcomes: { interested: 'later' } } });
    expect((await breakdown(id)).data.batch.outcomeBreakdown).toEqual(before);
    t.clock.advance(OUTCOME_TTL_MS);
    expect((await breakdown(id)).data.batch.outcomeBreakdown).toEqual([{ key: 'interested', value: 'later', calls: OUTCOMES.length }]);
  });

  it(`returns at most ${MAX_OUTCOME_PAIRS} pairs`, async () => {
    const wide = await insertBatch(t.deps, a, {
      contacts: MAX_OUTCOME_PAIRS + 10,
      status: 'completed',
      createdAt: AT,
      callOverrides: (i) => ({ ...callInState('completed', i, AT), outcomes: { note: `value ${String(i).padStart(3, '0')}` } }),
    });
    const pairs = (await breakdown(wide.batch.id)).data.batch.outcomeBreakdown;
    expect(pairs).toHaveLength(MAX_OUTCOME_PAIRS);
    expect(pairs[0]).toEqual({ key: 'note', value: 'value 000', calls: 1 });
  });

  it("another account's batch is NOT_FOUND, as every batch read", async () => {
    const body = await breakdown(batch.batch.id, other.apiKey);
    expect(body.errors[0].extensions.code).toBe('NOT_FOUND');
  });

  it('costs enough that a page of batches, or three aliases, cannot ask for it at once', async () => {
    const page = await t.gql('{ batches(limit: 3) { items { outcomeBreakdown { key } } } }', {}, a.apiKey);
    expect(page.body.errors[0].extensions.code).toBe('QUERY_TOO_COMPLEX');
    const id = batch.batch.id;
    const aliases = await t.gql(
      `query($id: ID!) { x: batch(id: $id) { outcomeBreakdown { key } } y: batch(id: $id) { outcomeBreakdown { key } } z: batch(id: $id) { outcomeBreakdown { key } } }`,
      { id },
      a.apiKey,
    );
    expect(aliases.body.errors[0].extensions.code).toBe('QUERY_TOO_COMPLEX');
    const two = await t.gql(
      `query($id: ID!) { x: batch(id: $id) { outcomeBreakdown { key } } y: batch(id: $id) { outcomeBreakdown { key } } }`,
      { id },
      a.apiKey,
    );
    expect(two.body.errors).toBeUndefined();
  });

  it('is refused inside a subscription, which would count on every event while paying once', async () => {
    const stream = sseStream(
      (r) => t.app.fetch(r),
      'http://test.local',
      'subscription($id: ID!) { batchProgress(batchId: $id) { status batch { outcomeBreakdown { key } } } }',
      { id: batch.batch.id },
      a.apiKey,
    );
    try {
      const [error] = await stream.firstError();
      expect(error.message).toBe('outcomeBreakdown is not available in subscriptions; query it instead');
    } finally {
      stream.close();
    }
  });

  it(`runs at most ${MAX_RUNNING_COUNTS} counts at once; callers of a running count share it`, async () => {
    const counts = createOutcomeBreakdowns(t.deps);
    const others = await Promise.all(
      Array.from({ length: MAX_RUNNING_COUNTS }, () => insertBatch(t.deps, a, { contacts: 1, status: 'completed', createdAt: AT })),
    );
    const running = others.map((b) => counts.of(b.batch.id));
    // The same batch again joins its running count instead of starting one.
    const joined = counts.of(others[0].batch.id);
    await expect(counts.of(batch.batch.id)).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    await Promise.all([...running, joined]);
    await expect(counts.of(batch.batch.id)).resolves.toBeInstanceOf(Array);
  });
});
