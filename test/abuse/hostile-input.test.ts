// Hostile transport-level input: oversized, streamed, mis-typed, undecodable and pathologically
// nested bodies, and strings PostgreSQL can't store, on REST and GraphQL. Every case is a clear
// 4xx in the contract's forms; nothing is stored and no body is read before authentication.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { gqlSend, send } from '../helpers/abuse.ts';
import { batchBody, CALL_BATCHES, typedInput } from '../helpers/batch-requests.ts';

const MAX = 8192;
let t: TestApp;
let a: SeededAccount;

beforeAll(async () => {
  t = await createTestApp({ config: { MAX_BODY_BYTES: String(MAX) } });
  a = await t.seedAccount({ limits: { rateLimitPerMinute: 100_000 } });
});
afterAll(() => t.close());

async function stored() {
  return { batches: await t.deps.db.prisma.batch.count(), calls: await t.deps.db.prisma.call.count() };
}

const envelope422 = (details: string[]) => ({
  status_code: 422,
  message: 'Missing required parameter',
  error: { code: 'MISSING_PARAMETER', details },
  data: null,
});

/** A body stream of `total` bytes in 1 KiB chunks, without Content-Length; records whether it was read. */
function stream(total: number) {
  const state = { pulled: 0 };
  const chunk = new TextEncoder().encode('x'.repeat(1024));
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (state.pulled >= total) return controller.close();
      state.pulled += chunk.byteLength;
      controller.enqueue(chunk);
    },
  });
  return { body, state };
}

describe('body size cap (MAX_BODY_BYTES)', () => {
  it('REST: 413 envelope for a declared or streamed oversized body, nothing stored', async () => {
    const before = await stored();
    const big = JSON.stringify(batchBody(a, { metadata: { pad: 'p'.repeat(MAX) } }));
    const declared = await send(t.app, 'POST', CALL_BATCHES, { key: a.apiKey, raw: big, headers: { 'content-type': 'application/json' } });
    expect(declared.status).toBe(413);
    expect(declared.body).toMatchObject({ status_code: 413, error: { code: 'PAYLOAD_TOO_LARGE' }, data: null });
    const { body, state } = stream(10 * MAX);
    const streamed = await send(t.app, 'PUT', CALL_BATCHES, { key: a.apiKey, raw: body, headers: { 'content-type': 'application/json' } });
    expect(streamed.status).toBe(413);
    // Reading stopped at the cap instead of buffering the whole stream.
    expect(state.pulled).toBeLessThanOrEqual(MAX + 4096);
    expect(await stored()).toEqual(before);
  });

  it('REST: an unauthenticated client gets its 401 without the body being read', async () => {
    const { body, state } = stream(10 * MAX);
    const r = await send(t.app, 'POST', CALL_BATCHES, { key: 'sk_' + 'n'.repeat(43), raw: body, headers: { 'content-type': 'application/json' } });
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ detail: 'Invalid API key' });
    expect(state.pulled).toBeLessThanOrEqual(2048);
  });

  it('GraphQL: 413 in GraphQL form, declared or streamed', async () => {
    const query = `mutation($b: CreateCallBatchInput!) { createCallBatch(input: $b) { batchId } }`;
    const big = await gqlSend(t.app, query, { b: typedInput(a, { metadata: { pad: 'p'.repeat(MAX) } }) }, { key: a.apiKey });
    expect(big.status).toBe(413);
    expect(big.body.errors![0].extensions.code).toBe('PAYLOAD_TOO_LARGE');
    const { body } = stream(10 * MAX);
    const streamed = await send(t.app, 'POST', '/graphql', { key: a.apiKey, raw: body, headers: { 'content-type': 'application/json' } });
    expect(streamed.status).toBe(413);
    expect(streamed.body.errors[0].extensions.code).toBe('PAYLOAD_TOO_LARGE');
    expect((await stored()).batches).toBe(0);
  });
});

describe('malformed bodies (REST)', () => {
  const post = (raw: string | Uint8Array, type = 'application/json') =>
    send(t.app, 'POST', CALL_BATCHES, { key: a.apiKey, raw, headers: { 'content-type': type } });

  it('wrong content type → 415 envelope', async () => {
    for (const type of ['text/plain', 'multipart/form-data; boundary=x', 'application/x-www-form-urlencoded', 'application/jsonp']) {
      const r = await post('{}', type);
      expect(r.status, type).toBe(415);
      expect(r.body).toMatchObject({ status_code: 415, error: { code: 'UNSUPPORTED_MEDIA_TYPE' }, data: null });
    }
    // JSON with parameters or a structured suffix is fine (and then fails validation, not the type check).
    expect((await post('{}', 'application/json; charset=utf-8')).status).toBe(422);
    expect((await post('{}', 'application/json;charset="UTF-8"')).status).toBe(422);
    expect((await post('{}', 'application/vnd.api+json')).status).toBe(422);
    // Another charset, or a body with no type at all (bytes: fetch adds text/plain to strings), is refused too.
    const latin1 = await post('{}', 'application/json; charset=latin1');
    expect(latin1.status).toBe(415);
    expect(latin1.body.error.details ?? []).toEqual([]);
    const untyped = await send(t.app, 'POST', CALL_BATCHES, { key: a.apiKey, raw: new TextEncoder().encode(JSON.stringify(batchBody(a))) });
    expect(untyped.status).toBe(415);
    expect((await stored()).batches).toBe(0);
  });

  it('GraphQL takes JSON posts only → 415 in the GraphQL error form', async () => {
    const query = JSON.stringify({ query: '{ me { id } }' });
    for (const [type, raw] of [
      ['text/plain', query],
      ['application/x-www-form-urlencoded', 'query=%7B%20me%20%7B%20id%20%7D%20%7D'],
      ['application/json; charset=iso-8859-1', query],
      [null, new TextEncoder().encode(query)],
    ] as const) {
      const r = await send(t.app, 'POST', '/graphql', { key: a.apiKey, raw, headers: type ? { 'content-type': type } : {} });
      expect({ type, status: r.status, code: r.body.errors?.[0]?.extensions?.code }).toEqual({ type, status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' });
    }
    const ok = await send(t.app, 'POST', '/graphql', { key: a.apiKey, raw: query, headers: { 'content-type': 'application/json; charset=utf-8' } });
    expect(ok.body).toEqual({ data: { me: { id: a.account.id } } });
  });

  it('invalid JSON, invalid UTF-8 and empty bodies → 422 envelope', async () => {
    expect((await post('{"agent_id": "x",')).body).toEqual(envelope422(['body: JSON decode error']));
    expect((await post('NaN')).body).toEqual(envelope422(['body: JSON decode error']));
    expect((await post(new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]))).body).toEqual(envelope422(['body: JSON decode error']));
    expect((await post('')).body).toEqual(envelope422(['body: Field required']));
    expect((await post('   \n')).body).toEqual(envelope422(['body: Field required']));
  });

  it('pathological nesting → 422 before parsing', async () => {
    const deep = '['.repeat(MAX - 10);
    expect((await post(deep)).body).toEqual(envelope422(['body: JSON is nested too deeply (max depth 64)']));
    const inString = JSON.stringify({ ...batchBody(a), metadata: { note: '[[[['.repeat(100) } });
    expect((await post(inString)).status).toBe(201);
    // Escaped quotes and backslashes do not end a string early (the brackets stay inside it)...
    const escapes = JSON.stringify({ ...batchBody(a), metadata: { note: '\\"\\\\'.repeat(20) + '['.repeat(100) } });
    expect((await post(escapes)).status).toBe(201);
    // ...and a string ending in an escaped backslash does end there.
    const afterBackslash = JSON.stringify({ ...batchBody(a), metadata: { note: 'x\\' } }).replace(
      /}$/,
      `,"deep":${'['.repeat(70)}${']'.repeat(70)}}`,
    );
    expect((await post(afterBackslash)).body).toEqual(envelope422(['body: JSON is nested too deeply (max depth 64)']));
  });

  it('strings the database cannot store and prototype keys → 422 envelope naming each field', async () => {
    const before = await stored();
    const r = await post(
      JSON.stringify({
        ...batchBody(a),
        voice: 'al\u0000loy',
        metadata: { ['__proto__']: { polluted: true }, ok: 1, nested: { constructor: 'x' } },
        contacts: [{ contact_id: 'c\ud800', phone_number: '+14155550111' }],
      }).replace('"metadata":{', '"metadata":{"__proto__":{"polluted":true},'),
    );
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe('MISSING_PARAMETER');
    expect(r.body.error.details).toEqual(
      expect.arrayContaining([
        'voice: String should not contain NUL characters (\\u0000)',
        'metadata.__proto__: Key is not allowed',
        'metadata.nested.constructor: Key is not allowed',
        'contacts.0.contact_id: String should be valid Unicode (lone surrogate)',
      ]),
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(await stored()).toEqual(before);
  });

  it('forbidden keys and NUL spelled with \\u escapes are caught too', async () => {
    const before = await stored();
    const r = await post(
      JSON.stringify({ ...batchBody(a), metadata: { ok: 1 }, contacts: [{ contact_id: 'c1', phone_number: '+14155550111' }] }).replace(
        '"metadata":{',
        '"metadata":{"\\u005f_pro\\u0074o__":{"polluted":true},"n":"a\\u0000b",',
      ),
    );
    expect(r.status).toBe(422);
    expect(r.body.error.details).toEqual(
      expect.arrayContaining(['metadata.__proto__: Key is not allowed', 'metadata.n: String should not contain NUL characters (\\u0000)']),
    );
    expect(await stored()).toEqual(before);
  });
});

describe('query strings (REST list endpoints)', () => {
  it('NUL anywhere in the query string → 422 envelope, not a database error', async () => {
    for (const path of [
      `${CALL_BATCHES}?agent_id=agt-%00`,
      `${CALL_BATCHES}/sched_x/calls?external_id=%00`,
      `${CALL_BATCHES}/sched_x/results?outcome=a%00b`,
      '/api/v1/public/call-records?start_date=2030-01-01&end_date=2030-01-02&agent_id=%00',
      `${CALL_BATCHES}?x%00y=1`,
    ]) {
      const r = await send(t.app, 'GET', path, { key: a.apiKey });
      expect(r.status, path).toBe(422);
      expect(r.body.error.code).toBe('MISSING_PARAMETER');
      expect(r.body.error.details[0]).toMatch(/^query\..*: String should not contain NUL characters/);
    }
  });

  it('NUL and odd bytes in path segments are a 404, never a 500', async () => {
    for (const id of ['%00', 'sched_%00', '%ED%A0%80', '..%2F..%2Fetc', 'x'.repeat(5000)]) {
      const r = await send(t.app, 'GET', `${CALL_BATCHES}/${id}`, { key: a.apiKey });
      expect(r.status, id).toBe(404);
      expect(r.body).toEqual({ detail: 'Call batch not found' });
    }
  });
});

describe('GraphQL inputs', () => {
  it('NUL, lone surrogates and prototype keys in variables or literals are refused before execution', async () => {
    const before = await stored();
    const create = `mutation($b: CreateCallBatchInput!) { createCallBatch(input: $b) { batchId } }`;
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      [create, { b: typedInput(a, { voice: 'x\u0000' }) }, /^variables\.b\.voice: String should not contain NUL/],
      [create, { b: typedInput(a, { metadata: { k: '\udc00' } }) }, /^variables\.b\.metadata\.k: String should be valid Unicode/],
      [
        create,
        { b: JSON.parse(JSON.stringify(typedInput(a)).replace('{', '{"__proto__":{"x":1},')) },
        /^variables\.b\.__proto__: Key is not allowed/,
      ],
      ['mutation { createAgent(input: { name: "a\\u0000b", voice: "alloy" }) { id } }', {}, /^query \(line 1\): String should not contain NUL/],
    ];
    // The literal case twice: the second meets the document already checked.
    for (const [query, variables, detail] of [...cases, cases[3]]) {
      const r = await gqlSend(t.app, query, variables, { key: a.apiKey });
      expect(r.body.errors).toHaveLength(1);
      expect(r.body.errors![0].extensions.code).toBe('MISSING_PARAMETER');
      expect(r.body.errors![0].extensions.details[0]).toMatch(detail);
    }
    expect(await stored()).toEqual(before);
    expect(await t.deps.db.prisma.agent.count({ where: { name: { contains: 'a' }, accountId: a.account.id } })).toBe(1);
  });

  it('an invalid JSON body is a 400 that does not quote the body back', async () => {
    const secret = 'sk_live_' + 'q'.repeat(40);
    for (const key of [a.apiKey, null]) {
      const r = await send(t.app, 'POST', '/graphql', {
        key,
        raw: `{"query": "{ me { id } }", "note": "${secret}" oops`,
        headers: { 'content-type': 'application/json' },
      });
      expect(r.status).toBe(400);
      expect(r.body.errors).toEqual([{ message: 'POST body sent invalid JSON.', extensions: { code: 'BAD_REQUEST' } }]);
      expect(JSON.stringify(r.body)).not.toContain(secret);
    }
  });

  it('malformed GraphQL bodies are 4xx', async () => {
    const post = (raw: string, type = 'application/json') =>
      send(t.app, 'POST', '/graphql', { key: a.apiKey, raw, headers: { 'content-type': type } });
    for (const r of [
      await post('{"query": '),
      await post('[[[[' + ']]]]'),
      await post('{"query": 5}'),
      await post('"just a string"'),
      await post('['.repeat(1000)),
    ]) {
      expect(r.status).toBeGreaterThanOrEqual(400);
      expect(r.status).toBeLessThan(500);
      expect(r.body.errors?.length).toBeGreaterThan(0);
    }
  });
});
