// Property-based: generated hostile create bodies for POST and PUT /api/v1/public/call-batches
// (wrong JSON types at every field, huge and odd strings, deep and prototype-polluting metadata,
// damaged wire encodings). For every case: no 5xx; an error is one of the contract's forms with a
// status that fits it; an error stores nothing; a success stores exactly the batch and its
// accepted calls (nothing for an idempotent repeat).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { contractErrorForm, send, storedCounts } from '../helpers/abuse.ts';
import { createBody, encode, hostileString, wire } from '../helpers/hostile-arbitraries.ts';
import { CALL_BATCHES } from '../helpers/batch-requests.ts';

const RUNS = Number(process.env.ABUSE_RUNS ?? 1000);

let t: TestApp;
let a: SeededAccount;

beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount({ limits: { rateLimitPerMinute: 10_000_000 } });
});
afterAll(() => t.close());

/** Which error forms each status may take on the create endpoints. */
const ALLOWED: Record<number, { detail?: true; envelope?: string[] }> = {
  404: { detail: true },
  413: { envelope: ['PAYLOAD_TOO_LARGE'] },
  415: { envelope: ['UNSUPPORTED_MEDIA_TYPE'] },
  422: { detail: true, envelope: ['MISSING_PARAMETER'] },
};

interface Outcome {
  status: number;
  created: boolean;
}

async function check(
  method: 'POST' | 'PUT',
  body: unknown,
  w: Parameters<typeof encode>[1],
  expected: { batches: number; calls: number },
): Promise<Outcome> {
  const { raw, type } = encode(body, w);
  const res = await send(t.app, method, CALL_BATCHES, { key: a.apiKey, raw, headers: type === null ? {} : { 'content-type': type } });
  const context = () => `${method} → ${res.status} ${JSON.stringify(res.body)?.slice(0, 400)}`;
  if (res.status >= 500) throw new Error(`server error: ${context()}`);

  if (res.status === 200 || res.status === 201) {
    expect(res.body, context()).toMatchObject({ status_code: res.status, error: null });
    const data = res.body.data;
    expect(data.batch_id, context()).toMatch(/^sched_/);
    expect(data.accepted_contacts + data.rejected_contacts, context()).toBe(data.total_contacts);
    expect(data.validation_errors, context()).toHaveLength(data.rejected_contacts);
    if (res.status === 201) {
      expect(data.idempotent).toBe(false);
      expect(data.accepted_contacts).toBeGreaterThanOrEqual(1);
      expected.batches += 1;
      expected.calls += data.accepted_contacts;
    } else {
      expect(method).toBe('PUT');
      expect(data.idempotent).toBe(true);
    }
  } else {
    const form = contractErrorForm(res.status, res.body);
    const allowed = ALLOWED[res.status];
    if (!allowed) throw new Error(`unexpected status: ${context()}`);
    if (form === 'detail') expect(allowed.detail, context()).toBe(true);
    else expect(allowed.envelope, context()).toContain(res.body.error.code);
    if (res.status === 422 && form === 'envelope') {
      expect(res.body.message).toBe('Missing required parameter');
      expect(res.body.error.details.length, context()).toBeGreaterThan(0);
      for (const d of res.body.error.details) expect(d, context()).toMatch(/^[\s\S]+?: [\s\S]+$/);
    }
  }
  // Errors store nothing; successes exactly what they report (no half-batch either way).
  expect(await storedCounts(t.deps), context()).toEqual(expected);
  return { status: res.status, created: res.status === 201 };
}

function runSuite(method: 'POST' | 'PUT', idempotencyKeys: fc.Arbitrary<unknown>) {
  it(`${method}: ${RUNS} generated bodies — no 5xx, contract error forms, nothing stored on error`, async () => {
    const expected = await storedCounts(t.deps);
    const statuses = new Map<number, number>();
    // Once a 500: a JSON null body could not reach the operation's JSON! variable.
    const examples: [unknown, Parameters<typeof encode>[1]][] = [[null, { kind: 'json' }]];
    await fc.assert(
      fc.asyncProperty(createBody(a, { idempotencyKeys }), wire, async (body, w) => {
        const { status } = await check(method, body, w, expected);
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
    // The generator must reach both sides, or the properties prove little.
    const count = (s: number) => statuses.get(s) ?? 0;
    expect(count(201), JSON.stringify([...statuses])).toBeGreaterThan(RUNS / 20);
    expect(count(422), JSON.stringify([...statuses])).toBeGreaterThan(RUNS / 10);
    expect([...statuses.values()].reduce((x, y) => x + y, 0)).toBe(RUNS + examples.length);
  }, 900_000);
}

describe('create endpoints under generated hostile bodies', () => {
  runSuite('POST', fc.oneof({ weight: 20, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: hostileString }));
  runSuite(
    'PUT',
    fc.oneof(
      { weight: 10, arbitrary: fc.constantFrom('k-1', 'k-2', 'k-3', 'k'.repeat(128)) },
      { weight: 6, arbitrary: fc.uuid() },
      { weight: 1, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: fc.constantFrom('', 'k'.repeat(129), 'key\u0000', 'key\ud800', 42, null, ['k-1'], { k: 1 }) },
      { weight: 1, arbitrary: hostileString },
    ),
  );
});
