// Request bodies in memory are bounded twice: anonymous GraphQL bodies are small (a larger one is
// read only after its key authenticates), and the bodies a process holds at once have a budget
// (MAX_BODY_BYTES_IN_FLIGHT), past which a body gets 503 + Retry-After instead of the heap; one
// account's bodies hold at most its share of it (429). Over real sockets: body-shares.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { send } from '../helpers/abuse.ts';
import { CALL_BATCHES } from '../helpers/batch-requests.ts';
import { ANONYMOUS_GRAPHQL_BODY_BYTES } from '../../src/http/front-door.ts';

let t: TestApp;
let a: SeededAccount;
let b: SeededAccount;
let c: SeededAccount;
const MAX_BODY = 200_000;
const IN_FLIGHT = 300_000;

beforeAll(async () => {
  // Held bodies wait on the test, not on the client: no pace to keep here.
  t = await createTestApp({
    config: { MAX_BODY_BYTES: String(MAX_BODY), MAX_BODY_BYTES_IN_FLIGHT: String(IN_FLIGHT), BODY_PACE_WINDOW_MS: '600000' },
  });
  a = await t.seedAccount({ limits: { rateLimitPerMinute: 100_000 } });
  b = await t.seedAccount({ limits: { rateLimitPerMinute: 100_000 } });
  c = await t.seedAccount({ limits: { rateLimitPerMinute: 100_000 } });
});
afterAll(() => t.close());

/** A body that sends `first` bytes of a JSON string, then waits for `finish()` to send the rest. */
function heldBody(first: number) {
  let resume!: () => void;
  const resumed = new Promise<void>((r) => (resume = r));
  // waiting: the reader took the first chunk and asked for more (the server is reading it).
  const state = { pulled: 0, waiting: false };
  let step = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      step++;
      if (step === 1) {
        state.pulled += first;
        controller.enqueue(new TextEncoder().encode('{"pad":"' + 'p'.repeat(first - 8)));
      } else if (step === 2) {
        state.waiting = true;
        await resumed;
        controller.enqueue(new TextEncoder().encode('"}'));
      } else controller.close();
    },
  });
  return { body, state, finish: resume };
}

const queryBody = (padding: number) => JSON.stringify({ query: '{ __typename }', variables: { pad: 'p'.repeat(padding) } });

describe('anonymous GraphQL bodies', () => {
  it(`are read up to ${ANONYMOUS_GRAPHQL_BODY_BYTES} bytes; larger ones need a key that authenticates`, async () => {
    const small = await send(t.app, 'POST', '/graphql', { raw: queryBody(1_000), headers: { 'content-type': 'application/json' } });
    expect(small.body).toEqual({ data: { __typename: 'Query' } });
    const big = await send(t.app, 'POST', '/graphql', { raw: queryBody(100_000), headers: { 'content-type': 'application/json' } });
    expect(big.status).toBe(413);
    expect(big.body.errors[0]).toMatchObject({
      message: `Request body exceeds ${ANONYMOUS_GRAPHQL_BODY_BYTES} bytes`,
      extensions: { code: 'PAYLOAD_TOO_LARGE' },
    });
    const keyed = await send(t.app, 'POST', '/graphql', { key: a.apiKey, raw: queryBody(100_000), headers: { 'content-type': 'application/json' } });
    expect(keyed.body).toEqual({ data: { __typename: 'Query' } });
  });

  it('a wrong key with a large body gets its 401 before the body is read', async () => {
    const held = heldBody(100_000);
    const r = await send(t.app, 'POST', '/graphql', { key: 'sk_' + 'n'.repeat(43), raw: held.body, headers: { 'content-type': 'application/json' } });
    expect(r.status).toBe(401);
    expect(r.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    // At most the stream's first chunk was buffered by the transport; nothing waited for the rest.
    expect(held.state.pulled).toBeLessThanOrEqual(100_000);
    held.finish();
  });
});

describe(`bodies held at once (MAX_BODY_BYTES_IN_FLIGHT ${IN_FLIGHT})`, () => {
  it("a body past the budget gets 503 + Retry-After while others are held, and goes through after; one past its account's share gets 429", async () => {
    const first = heldBody(180_000);
    const pending = send(t.app, 'POST', CALL_BATCHES, { key: a.apiKey, raw: first.body, headers: { 'content-type': 'application/json' } });
    // Wait until the server has read the first body's first chunk (and counted it).
    await expect.poll(() => first.state.waiting).toBe(true);
    // Another account's body: within its own share (MAX_BODY_BYTES), past the process's budget.
    const second = heldBody(150_000);
    second.finish();
    const refusedRest = await send(t.app, 'POST', CALL_BATCHES, { key: b.apiKey, raw: second.body, headers: { 'content-type': 'application/json' } });
    expect(refusedRest.status).toBe(503);
    expect(refusedRest.headers.get('retry-after')).toBe('1');
    expect(refusedRest.body).toMatchObject({ status_code: 503, error: { code: 'SERVICE_UNAVAILABLE' }, data: null });
    const third = heldBody(150_000);
    third.finish();
    const refusedGql = await send(t.app, 'POST', '/graphql', { key: c.apiKey, raw: third.body, headers: { 'content-type': 'application/json' } });
    expect(refusedGql.status).toBe(503);
    expect(refusedGql.body.errors[0].extensions.code).toBe('UNAVAILABLE');
    // The first body's own account past its share: its own 429, whatever the budget has left.
    const sameAccount = await send(t.app, 'POST', '/graphql', {
      key: a.apiKey,
      raw: queryBody(30_000),
      headers: { 'content-type': 'application/json' },
    });
    expect(sameAccount.status).toBe(429);
    expect(sameAccount.headers.get('retry-after')).toBe('1');
    expect(sameAccount.body.errors[0].extensions.code).toBe('RATE_LIMITED');

    first.finish();
    expect((await pending).status).toBe(422); // read and validated: the budget was released after it
    const after = await send(t.app, 'POST', '/graphql', { key: a.apiKey, raw: queryBody(150_000), headers: { 'content-type': 'application/json' } });
    expect(after.body).toEqual({ data: { __typename: 'Query' } });
  });
});
