// A create's contact list is counted against the account's max_batch_size (and the ceiling)
// before any contact is read: 5,000,000 junk contacts on REST and 8,000,000 in GraphQL's
// contactList ran the process out of heap (~12 s), and 1,000,000 answered a 500 (a spread of a
// million problems as call arguments). A list the account allows still lists its problems capped.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { send, storedCounts } from '../helpers/abuse.ts';
import { batchBody, CALL_BATCHES, makeContacts, typedInput } from '../helpers/batch-requests.ts';
import { MAX_LISTED_ISSUES } from '../../src/domain/capped-issues.ts';

// Generous for a busy 2-core machine: measured 0.1-2.9 s beside other suites; before the count
// came first, 5,000,000 contacts ran out of heap after ~12 s.
const ANSWER_WITHIN_MS = 8_000;
// The body (up to 32 MB of text) and its parsed list are alive while the request runs.
const HEAP_GROWTH_BYTES = 400 * 1024 * 1024;
const MUTATION = 'mutation($input: CreateCallBatchInput!) { createCallBatch(input: $input) { batchId totalContacts } }';

let t: TestApp;
let a: SeededAccount;
let small: SeededAccount;
let big: SeededAccount;

beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount({ limits: { rateLimitPerMinute: 1_000_000 } });
  small = await t.seedAccount({ limits: { rateLimitPerMinute: 1_000_000, maxBatchSize: 5 } });
  big = await t.seedAccount({ limits: { rateLimitPerMinute: 1_000_000, maxBatchSize: 1_000_000 } });
});
afterAll(() => t.close());

/** `n` copies of one JSON item as a JSON array's text, built without a JavaScript array of n. */
const jsonList = (n: number, item = '"x"') => `[${`${item},`.repeat(n - 1)}${item}]`;
const tooMany = (n: number, max: number) => `Too many contacts: ${n} submitted, the account's max_batch_size is ${max}`;

function restBody(acc: SeededAccount, contacts: string): string {
  return JSON.stringify(batchBody(acc, { contacts: '<contacts>', idempotency_key: `k-${Math.random()}` })).replace('"<contacts>"', contacts);
}

function gqlBody(acc: SeededAccount, field: 'contacts' | 'contactList', list: string): string {
  const { contacts: _c, ...input } = typedInput(acc);
  return JSON.stringify({ query: MUTATION, variables: { input: { ...input, [field]: '<list>' } } }).replace('"<list>"', list);
}

const post = (acc: SeededAccount, path: string, raw: string, method = 'POST') =>
  send(t.app, method, path, { key: acc.apiKey, raw, headers: { 'content-type': 'application/json' } });

/** The answer with how long it took and how much the heap grew meanwhile. */
async function measured(request: () => ReturnType<typeof post>) {
  const heapBefore = process.memoryUsage().heapUsed;
  const started = performance.now();
  const res = await request();
  return { res, ms: performance.now() - started, heapGrowth: process.memoryUsage().heapUsed - heapBefore };
}

async function stillCreates() {
  const res = await send(t.app, 'POST', CALL_BATCHES, { key: a.apiKey, body: batchBody(a) });
  expect(res.status).toBe(201);
}

describe('a contact list longer than the account allows is refused before any contact is read', () => {
  it('REST: 5,000,000 junk contacts (19 MB) → the contract 422 quickly, nothing stored, the process still creates', async () => {
    const before = await storedCounts(t.deps);
    const body = restBody(a, jsonList(5_000_000));
    const { res, ms, heapGrowth } = await measured(() => post(a, CALL_BATCHES, body, 'PUT'));
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ detail: tooMany(5_000_000, 10_000) });
    expect(ms).toBeLessThan(ANSWER_WITHIN_MS);
    expect(heapGrowth).toBeLessThan(HEAP_GROWTH_BYTES);
    expect(await storedCounts(t.deps)).toEqual(before);
    await stillCreates();
  });

  it('GraphQL: 8,000,000 junk items in contactList (30 MB) → the same refusal, UNPROCESSABLE, before the list is read', async () => {
    const body = gqlBody(a, 'contactList', jsonList(8_000_000));
    const { res, ms, heapGrowth } = await measured(() => post(a, '/graphql', body));
    expect(res.status).toBeLessThan(500);
    expect(res.body.errors).toEqual([expect.objectContaining({ message: tooMany(8_000_000, 10_000), extensions: { code: 'UNPROCESSABLE' } })]);
    expect(ms).toBeLessThan(ANSWER_WITHIN_MS);
    expect(heapGrowth).toBeLessThan(HEAP_GROWTH_BYTES);
    await stillCreates();
  });

  it('GraphQL: 1,000,000 input objects in contacts → refused before graphql-js copies and coerces them', async () => {
    const body = gqlBody(a, 'contacts', jsonList(1_000_000, '{"contactId":"","phoneNumber":""}'));
    const { res, ms } = await measured(() => post(a, '/graphql', body));
    expect(res.body.errors).toEqual([expect.objectContaining({ message: tooMany(1_000_000, 10_000), extensions: { code: 'UNPROCESSABLE' } })]);
    expect(ms).toBeLessThan(ANSWER_WITHIN_MS);
    await stillCreates();
  });

  it('REST: 1,000,000 junk contacts → 422, never 500', async () => {
    const { res, ms } = await measured(() => post(a, CALL_BATCHES, restBody(a, jsonList(1_000_000))));
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ detail: tooMany(1_000_000, 10_000) });
    expect(ms).toBeLessThan(ANSWER_WITHIN_MS);
  });
});

describe('a long list the account allows lists its problems capped', () => {
  it('REST: 1,000,000 junk contacts for an account allowing them → 422 envelope, the first problems then a count', async () => {
    const { res, ms } = await measured(() => post(big, CALL_BATCHES, restBody(big, jsonList(1_000_000))));
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('MISSING_PARAMETER');
    const details: string[] = res.body.error.details;
    expect(details).toHaveLength(MAX_LISTED_ISSUES + 1);
    expect(details.slice(0, 2)).toEqual(['contacts.0: Input should be a valid dictionary', 'contacts.1: Input should be a valid dictionary']);
    expect(details.at(-1)).toBe(`... and ${(1_000_000 - MAX_LISTED_ISSUES).toLocaleString('en-US')} more problems`);
    expect(ms).toBeLessThan(ANSWER_WITHIN_MS);
    await stillCreates();
  });

  it('REST: a type problem after the contacts is still listed in the contract order, and counted', async () => {
    const body = JSON.stringify({ ...batchBody(big, { contacts: '<c>', retry: { max_attempts: 'many' } }) }).replace('"<c>"', jsonList(5_000));
    const res = await post(big, CALL_BATCHES, body);
    const details: string[] = res.body.error.details;
    expect(details).toHaveLength(MAX_LISTED_ISSUES + 1);
    expect(details.at(-2)).toBe(`contacts.${MAX_LISTED_ISSUES - 1}: Input should be a valid dictionary`);
    // 4,000 contacts left out, and the retry problem that sorts after them.
    expect(details.at(-1)).toBe('... and 4,001 more problems');
  });
});

describe('lengths around max_batch_size (property)', () => {
  type Surface = 'rest' | 'contacts' | 'contactList';
  const request = (surface: Surface, n: number, junk: boolean) => {
    if (surface === 'rest') {
      const contacts = junk ? jsonList(n) : JSON.stringify(makeContacts(n));
      return post(small, CALL_BATCHES, restBody(small, contacts), 'PUT');
    }
    const items = junk
      ? jsonList(n, surface === 'contacts' ? '{"name":"no id"}' : '"x"')
      : JSON.stringify(makeContacts(n).map((c) => ({ contactId: c.contact_id, phoneNumber: c.phone_number })));
    return post(small, '/graphql', gqlBody(small, surface, items));
  };

  it('just under is accepted when otherwise valid; just over is refused in the contract words, junk or not', async () => {
    const max = small.account.maxBatchSize;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<Surface>('rest', 'contacts', 'contactList'),
        fc.integer({ min: 1, max: 2 * max }),
        fc.boolean(),
        async (surface, n, junk) => {
          const res = await request(surface, n, junk);
          const context = `${surface} n=${n} junk=${junk}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`;
          expect(res.status, context).toBeLessThan(500);
          const refusal = surface === 'rest' ? res.body.detail : res.body.errors?.[0]?.message;
          if (n > max) {
            expect(refusal, context).toBe(tooMany(n, max));
            if (surface === 'rest') expect(res.status, context).toBe(422);
            else expect(res.body.errors[0].extensions.code, context).toBe('UNPROCESSABLE');
          } else if (junk) {
            expect(String(refusal ?? ''), context).not.toMatch(/Too many contacts/);
            expect(surface === 'rest' ? res.body.error.code : res.body.errors.length, context).toBeTruthy();
          } else if (surface === 'rest') {
            expect(res.status, context).toBe(201);
            expect(res.body.data.total_contacts, context).toBe(n);
          } else {
            expect(res.body.data?.createCallBatch.totalContacts, context).toBe(n);
          }
        },
      ),
      { numRuns: 30 },
    );
  });
});

describe("other lists a caller sizes are never spread as a call's arguments", () => {
  it('GraphQL createAgent with 200,000 too-long outcome keys → MISSING_PARAMETER with bounded details, not an internal error', async () => {
    const keys = jsonList(200_000, `"${'k'.repeat(101)}"`);
    const query = 'mutation($input: CreateAgentInput!) { createAgent(input: $input) { id } }';
    const body = JSON.stringify({ query, variables: { input: { name: 'Big', voice: 'alloy', outcomeKeys: '<keys>' } } }).replace('"<keys>"', keys);
    const res = await post(a, '/graphql', body);
    const error = res.body.errors?.[0];
    expect(error?.extensions?.code, JSON.stringify(error).slice(0, 300)).toBe('MISSING_PARAMETER');
    expect(error.extensions.details.length).toBeLessThanOrEqual(51);
    expect(error.extensions.details.at(-1)).toBe('outcomeKeys: List should have at most 50 items after validation, not 200000');
  });
});
