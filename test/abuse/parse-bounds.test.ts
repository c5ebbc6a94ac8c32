// Bound before you allocate: what the GraphQL parser and JSON.parse would build for hostile input
// is refused before they build it. A document's text (comments included) has a byte limit and a
// comment limit; Yoga's parse cache holds a bounded heap; a JSON body with an object of too many
// keys, too many objects and arrays, or too deep a nesting is refused by one pass over its bytes;
// error bodies never grow with the input. Each answer is a quick 4xx, the process stays healthy
// and its heap stays bounded.
import v8 from 'node:v8';
import vm from 'node:vm';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { gqlSend, send } from '../helpers/abuse.ts';
import { batchBody, CALL_BATCHES, makeContacts } from '../helpers/batch-requests.ts';
import { wsClient, wsOnce } from '../helpers/ws-client.ts';
import { JSON_BYTES_PER_CONTAINER, jsonShapeFault, jsonShapeLimits, jsonShapeProblem, MAX_JSON_OBJECT_KEYS } from '../../src/http/json-shape.ts';
import { MAX_JSON_NESTING } from '../../src/http/body.ts';
import { boundedText, MAX_ERROR_DETAILS_CHARS, MAX_ERROR_MESSAGE_CHARS } from '../../src/errors.ts';
import { MAX_ERRORS_CHARS } from '../../src/graphql/plugins/bounded-errors.ts';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
/** Live heap after two full collections. */
function heapUsed(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

const MiB = 1024 * 1024;
const MAX_DOCUMENT_BYTES = 1024 * 1024; // GRAPHQL_MAX_DOCUMENT_BYTES's default
// Generous for a busy 2-core machine: each refusal below measured 2-60 ms of work beside reading the body.
const REFUSED_WITHIN_MS = 3_000;

let t: TestApp;
let a: SeededAccount;
// The parse cache may hold 16 MiB here: what it keeps is measured.
let small: TestApp;
let s: SeededAccount;

beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount({ limits: { rateLimitPerMinute: 1_000_000 } });
  small = await createTestApp({ config: { GRAPHQL_PARSE_CACHE_BYTES: String(16 * MiB) } });
  s = await small.seedAccount({ limits: { rateLimitPerMinute: 1_000_000 } });
});
afterAll(async () => {
  await t?.close();
  await small?.close();
});

/** An ordinary request still answers (the process is healthy). */
async function stillAnswers(app: TestApp = t, acc: SeededAccount = a) {
  const r = await gqlSend(app.app, '{ me { id } }', {}, { key: acc.apiKey });
  expect(r.body).toEqual({ data: { me: { id: acc.account.id } } });
}

async function timed<T>(request: () => Promise<T>): Promise<{ res: T; ms: number }> {
  const started = performance.now();
  const res = await request();
  return { res, ms: performance.now() - started };
}

const postJson = (app: TestApp, acc: SeededAccount, path: string, raw: string, method = 'POST') =>
  send(app.app, method, path, { key: acc.apiKey, raw, headers: { 'content-type': 'application/json' } });

describe('GraphQL document text', () => {
  const refusal = { message: `Document is larger than ${MAX_DOCUMENT_BYTES} bytes. Parsing aborted.`, extensions: { code: 'GRAPHQL_PARSE_FAILED' } };

  it('a document past GRAPHQL_MAX_DOCUMENT_BYTES, comments included, is a quick 400 before parsing; one within it runs', async () => {
    const selections = fc.constantFrom('__typename', 'me { id }', 'me { id name }', 'a: __typename b: __typename');
    // Comment bytes around the limit, in characters of 1, 2 and 4 UTF-8 bytes: the limit counts bytes.
    const comment = fc.tuple(fc.integer({ min: 0, max: 2 * MAX_DOCUMENT_BYTES }), fc.constantFrom('c', '\u00e9', '\ud83d\ude00'));
    const place = fc.constantFrom('before', 'inside', 'after', 'lines');
    await fc.assert(
      fc.asyncProperty(selections, comment, place, async (selection, [bytes, char], where) => {
        const text = char.repeat(Math.ceil(bytes / Buffer.byteLength(char)));
        // 'lines': many short comments (fewer than the 5,000 allowed).
        const line = `#${char.repeat(20)}\n`;
        const document =
          where === 'before'
            ? `#${text}\n{ ${selection} }`
            : where === 'inside'
              ? `{\n#${text}\n${selection} }`
              : where === 'after'
                ? `{ ${selection} } #${text}`
                : `${line.repeat(Math.ceil(bytes / Buffer.byteLength(line)) % 5_000)}{ ${selection} }`;
        const { res, ms } = await timed(() => gqlSend(t.app, document, {}, { key: a.apiKey }));
        if (Buffer.byteLength(document) > MAX_DOCUMENT_BYTES) {
          expect(res.status).toBe(400);
          expect(res.body).toEqual({ errors: [refusal] });
          expect(ms).toBeLessThan(REFUSED_WITHIN_MS);
        } else {
          expect(res.status).toBe(200);
          expect(res.body.errors).toBeUndefined();
        }
      }),
      { numRuns: 25 },
    );
    await stillAnswers();
  });

  it('more comments than GRAPHQL_MAX_TOKENS (5000) are refused like too many tokens: graphql-js counts none of them, yet keeps each', async () => {
    const many = await gqlSend(t.app, `${'#\n'.repeat(5_001)}{ __typename }`, {}, { key: a.apiKey });
    expect(many.status).toBeLessThan(500);
    expect(many.body).toEqual({
      errors: [
        expect.objectContaining({
          message: 'Syntax Error: Document contains more than 5000 comments. Parsing aborted.',
          extensions: { code: 'GRAPHQL_PARSE_FAILED' },
        }),
      ],
    });
    // In a string, a # is no comment.
    const inStrings = await gqlSend(t.app, `{ __type(name: "${'#'.repeat(6_000)}") { name } }`, {}, { key: a.apiKey });
    expect(inStrings.body).toEqual({ data: { __type: null } });
    const fits = await gqlSend(t.app, `${'# why\n'.repeat(5_000)}{ __typename }`, {}, { key: a.apiKey });
    expect(fits.body).toEqual({ data: { __typename: 'Query' } });
  });

  it('40 documents of a 2 MB comment: each a quick 400, and the heap does not keep them', async () => {
    await stillAnswers();
    const before = heapUsed();
    for (let i = 0; i < 40; i++) {
      const { res, ms } = await timed(() => gqlSend(t.app, `#${i}${'c'.repeat(2 * MiB)}\n{ __typename }`, {}, { key: a.apiKey }));
      expect(res.status).toBe(400);
      expect(ms).toBeLessThan(REFUSED_WITHIN_MS);
    }
    // Parsed and cached as before, they held ~80 MiB; refused, the last body may linger (V8 keeps a
    // regular expression's last subject): one text, 2 MiB.
    expect(heapUsed() - before).toBeLessThan(16 * MiB);
    await stillAnswers();
  });
});

describe("Yoga's parse cache is bounded by bytes (GRAPHQL_PARSE_CACHE_BYTES)", () => {
  it('80 parsed documents of a 0.5 MB comment and 80 failing ones of 0.1 MB leave at most about the 16 MiB budget behind', async () => {
    await stillAnswers(small, s);
    const before = heapUsed();
    for (let i = 0; i < 80; i++) {
      const ok = await gqlSend(small.app, `#${i}${'c'.repeat(MiB / 2)}\n{ __typename }`, {}, { key: s.apiKey });
      expect(ok.body).toEqual({ data: { __typename: 'Query' } });
      const failing = await gqlSend(small.app, `#${i}${'c'.repeat(MiB / 10)}\n{ __typename `, {}, { key: s.apiKey });
      expect(failing.body.errors?.[0].extensions.code).toBe('GRAPHQL_PARSE_FAILED');
    }
    // Yoga's default cache (1,024 texts) kept all 160: ~48 MiB. Under the budget each text is
    // counted 2 bytes a character (these take 1), so the cache itself holds ≤ 8 MiB; the rest is
    // one lingering body and noise.
    expect(heapUsed() - before).toBeLessThan(24 * MiB);
    await stillAnswers(small, s);
  });
});

/** What JSON.parse built: the deepest nesting, the most keys of one object, the objects and arrays. */
function shapeOf(value: unknown): { depth: number; objectKeys: number; containers: number } {
  const shape = { depth: 0, objectKeys: 0, containers: 0 };
  const pending: Array<[unknown, number]> = [[value, 1]];
  while (pending.length) {
    const [v, d] = pending.pop()!;
    if (v === null || typeof v !== 'object') continue;
    shape.containers++;
    shape.depth = Math.max(shape.depth, d);
    const children = Object.values(v);
    if (!Array.isArray(v)) shape.objectKeys = Math.max(shape.objectKeys, children.length);
    for (const child of children) pending.push([child, d + 1]);
  }
  return shape;
}

/** `n` members `"<prefix><i>":0` as the inside of a JSON object, built as one string. */
const members = (n: number, prefix = 'k') => Array.from({ length: n }, (_, i) => `"${prefix}${i}":0`).join(',');

describe('JSON bodies: refused by their shape before JSON.parse builds them', () => {
  it('2,000,000 unused GraphQL variables (24 MB, within the 64 MiB body cap) → a quick 422 (was 20-30 s)', async () => {
    const body = `{"query":"{ __typename }","variables":{${members(2_000_000, 'v')}}}`;
    const { res, ms } = await timed(() => postJson(t, a, '/graphql', body));
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      errors: [{ message: `Request body has an object with more than ${MAX_JSON_OBJECT_KEYS} keys`, extensions: { code: 'MISSING_PARAMETER' } }],
    });
    expect(ms).toBeLessThan(REFUSED_WITHIN_MS);
    await stillAnswers();
  });

  it('2,000,000 unknown keys in a REST create (24 MB) → the contract 422 envelope, quickly (was 4-10 s)', async () => {
    const body = JSON.stringify(batchBody(a)).replace(/}$/, `,${members(2_000_000)}}`);
    const { res, ms } = await timed(() => postJson(t, a, CALL_BATCHES, body));
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      status_code: 422,
      message: 'Missing required parameter',
      error: { code: 'MISSING_PARAMETER', details: [`body: JSON has an object with more than ${MAX_JSON_OBJECT_KEYS} keys`] },
      data: null,
    });
    expect(ms).toBeLessThan(REFUSED_WITHIN_MS);
    await stillAnswers();
  });

  it('random many-key, many-object and deep bodies on REST and GraphQL: refused exactly past a limit, always a 4xx', async () => {
    type Shape = { kind: 'keys'; n: number } | { kind: 'containers'; n: number; pad: number } | { kind: 'depth'; n: number };
    const shape: fc.Arbitrary<Shape> = fc.oneof(
      fc.integer({ min: MAX_JSON_OBJECT_KEYS - 3, max: MAX_JSON_OBJECT_KEYS + 3 }).map((n) => ({ kind: 'keys' as const, n })),
      fc.integer({ min: 20_000, max: 400_000 }).map((n) => ({ kind: 'keys' as const, n })),
      fc
        .tuple(fc.integer({ min: 1_000, max: 200_000 }), fc.integer({ min: 0, max: 40 }))
        .map(([n, pad]) => ({ kind: 'containers' as const, n, pad })),
      fc.integer({ min: MAX_JSON_NESTING - 2, max: MAX_JSON_NESTING + 2 }).map((n) => ({ kind: 'depth' as const, n })),
    );
    const surface = fc.constantFrom('rest', 'graphql');
    await fc.assert(
      fc.asyncProperty(shape, surface, fc.boolean(), async (sh, where, asArray) => {
        // The hostile part sits in a field no operation reads (REST: an unknown key; GraphQL: an unused variable).
        const inner =
          sh.kind === 'keys'
            ? `{${members(sh.n)}}`
            : sh.kind === 'containers'
              ? `[${Array.from({ length: sh.n }, () => (asArray ? `[${' '.repeat(sh.pad)}]` : `{"p":"${'x'.repeat(sh.pad)}"}`)).join(',')}]`
              : `${'['.repeat(sh.n - 2)}${']'.repeat(sh.n - 2)}`;
        const body =
          where === 'rest'
            ? JSON.stringify(batchBody(a)).replace(/}$/, `,"junk":${inner}}`)
            : `{"query":"{ me { id } }","variables":{"junk":${inner}}}`;
        const bytes = Buffer.from(body);
        const limits = jsonShapeLimits(bytes.byteLength, MAX_JSON_NESTING);
        const expected = jsonShapeFault(bytes, MAX_JSON_NESTING);
        // The scan agrees with the body's real shape.
        const real = shapeOf(JSON.parse(body));
        expect(expected !== null).toBe(real.depth > limits.depth || real.objectKeys > limits.objectKeys || real.containers > limits.containers);
        const { res, ms } = await timed(() => postJson(t, a, where === 'rest' ? CALL_BATCHES : '/graphql', body));
        expect(res.status).toBeGreaterThanOrEqual(200);
        expect(res.status).toBeLessThan(500);
        if (expected) {
          expect(ms).toBeLessThan(REFUSED_WITHIN_MS);
          expect(res.status).toBe(422);
          if (where === 'rest') expect(res.body.error.details).toEqual([`body: JSON ${expected}`]);
          else expect(res.body.errors).toEqual([{ message: `Request body ${expected}`, extensions: { code: 'MISSING_PARAMETER' } }]);
        } else if (where === 'graphql') {
          expect(res.body).toEqual({ data: { me: { id: a.account.id } } });
        } else {
          expect(res.status).toBe(201); // an unknown key is ignored
        }
      }),
      { numRuns: 30 },
    );
    await stillAnswers();
  });

  it('the scan measures what JSON.parse would build: its largest object, its objects and arrays, its depth', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
        const bytes = Buffer.from(JSON.stringify(value));
        const exact = shapeOf(value);
        const { depth, objectKeys: keys, containers } = exact;
        expect(jsonShapeProblem(bytes, exact)).toBeNull();
        if (depth > 0) expect(jsonShapeProblem(bytes, { ...exact, depth: depth - 1 })).toBe('depth');
        if (keys > 0) expect(jsonShapeProblem(bytes, { ...exact, objectKeys: keys - 1 })).toBe('objectKeys');
        if (containers > 0 && depth > 0) expect(jsonShapeProblem(bytes, { ...exact, containers: containers - 1 })).toBe('containers');
      }),
      { numRuns: 500 },
    );
  });

  it('the largest legitimate creates pass: 100,000 contacts with metadata, and metadata objects as full as their limits allow', async () => {
    // 100,000 contacts (the body cap's design size) each with the 50 top-level metadata keys allowed.
    const metadata = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, i]));
    const contact = JSON.stringify({ contact_id: 'c000000', phone_number: '+14155550100', name: 'Jane Doe', timezone: 'America/New_York', metadata });
    const bytes = Buffer.from(
      JSON.stringify(batchBody(a, { contacts: [] })).replace('"contacts":[]', `"contacts":[${Array(100_000).fill(contact).join(',')}]`),
    );
    expect(bytes.byteLength).toBeLessThan(64 * MiB);
    expect(jsonShapeFault(bytes, MAX_JSON_NESTING)).toBeNull();
    // A nested batch metadata object of 2-character keys fills its 16 KiB at ~2,300 keys, far under 10,000.
    const chars = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
    const nested = Object.fromEntries(Array.from({ length: 2_300 }, (_, i) => [chars[Math.floor(i / 62)] + chars[i % 62], 0]));
    const full = await send(t.app, 'POST', CALL_BATCHES, {
      key: a.apiKey,
      body: batchBody(a, { metadata: { n: nested }, contacts: makeContacts(200) }),
    });
    expect(full.status).toBe(201);
    // The smallest contact is far over the bytes an object or array may take on average.
    expect(JSON.stringify(makeContacts(1)[0]).length).toBeGreaterThan(2 * JSON_BYTES_PER_CONTAINER);
  });

  it('over WebSocket: a message past a shape limit closes the socket with 4400 before it is parsed; a new socket works', async () => {
    const url = await t.app.listen();
    const client = wsClient(url, `Bearer ${a.apiKey}`);
    try {
      const variables = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`v${i}`, 0]));
      await expect(wsOnce(client, '{ me { id } }', variables)).rejects.toMatchObject({ code: 4400 });
    } finally {
      await client.dispose();
    }
    const next = wsClient(url, `Bearer ${a.apiKey}`);
    try {
      expect(await wsOnce(next, '{ me { id } }')).toEqual({ data: { me: { id: a.account.id } } });
    } finally {
      await next.dispose();
    }
  });

  it('the Retell webhook (open to anyone) refuses 1 MB of empty objects before parsing them', async () => {
    const raw = `[${Array(330_000).fill('{}').join(',')}]`;
    const { res, ms } = await timed(() =>
      send(t.app, 'POST', '/providers/retell/webhook', { raw, headers: { 'content-type': 'application/json', 'x-retell-signature': 'v=1,d=x' } }),
    );
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/^JSON has more than \d+ objects and arrays/);
    expect(ms).toBeLessThan(REFUSED_WITHIN_MS);
  });
});

describe('error bodies never grow with the input', () => {
  /** Serialized size of a response body. */
  const size = (body: unknown) => Buffer.byteLength(JSON.stringify(body));

  it('REST: a 0.4 MB body of junk contacts, and a 0.4 MB key echoed in a detail, get small 422s', async () => {
    const junk = await postJson(t, a, CALL_BATCHES, JSON.stringify(batchBody(a, { contacts: Array(100_000).fill('x') })));
    expect(junk.status).toBe(422);
    expect(size(junk.body)).toBeLessThan(MAX_ERROR_DETAILS_CHARS + 4096);
    const key = 'k'.repeat(400_000);
    const echoed = await postJson(t, a, CALL_BATCHES, JSON.stringify(batchBody(a, { metadata: { [`${key}\u0000`]: 1 } })));
    expect(echoed.status).toBe(422);
    const [detail] = echoed.body.error.details as string[];
    expect(detail.length).toBeLessThanOrEqual(MAX_ERROR_MESSAGE_CHARS);
    // The path's head and the reason at its end survive the cut.
    expect(detail.startsWith('metadata.kkkk')).toBe(true);
    expect(detail).toMatch(/ … \[\d+ characters cut\] … k+.: String should not contain NUL characters \(\\u0000\)$/su);
    expect(size(echoed.body)).toBeLessThan(4096);
  });

  it('GraphQL: a 3.8 MB variable quoted back by graphql-js comes back cut, over HTTP and WebSocket', async () => {
    const query = 'query($n: Int) { batches(limit: $n) { items { id } } }';
    for (const value of [
      'x'.repeat(3_800_000),
      '"'.repeat(1_900_000),
      Object.fromEntries(Array.from({ length: 9_000 }, (_, i) => [`key${i}`, 'v'.repeat(40)])),
    ]) {
      const r = await gqlSend(t.app, query, { n: value }, { key: a.apiKey });
      expect(r.status).toBe(400);
      expect(r.body.errors).toHaveLength(1);
      expect(r.body.errors?.[0].message).toMatch(/^Variable "\$n" got invalid value .* … \[\d+ characters cut\] … /su);
      expect(r.body.errors?.[0].message.length).toBeLessThanOrEqual(MAX_ERROR_MESSAGE_CHARS);
      expect(size(r.body)).toBeLessThan(4096);
    }
    const url = await t.app.listen();
    const client = wsClient(url, `Bearer ${a.apiKey}`);
    try {
      const errors = await wsOnce(client, query, { n: 'x'.repeat(500_000) }).then(
        (r) => r.errors ?? [],
        (e: unknown) => e as { message: string }[],
      );
      expect(errors[0].message.length).toBeLessThanOrEqual(MAX_ERROR_MESSAGE_CHARS);
    } finally {
      await client.dispose();
    }
  });

  it('GraphQL: names from the document in syntax and validation errors are cut, and many errors stay under the total', async () => {
    const name = 'f'.repeat(500_000);
    const unknown = await gqlSend(t.app, `{ ${name} }`, {}, { key: a.apiKey });
    expect(unknown.body.errors?.[0].message).toMatch(/^Cannot query field "ffff.* … \[\d+ characters cut\] … f+" on type "Query"\.$/su);
    const syntax = await gqlSend(t.app, `{ __typename } ${name}`, {}, { key: a.apiKey });
    expect(syntax.body.errors?.[0].message).toMatch(/^Syntax Error: Unexpected Name "ffff.* … \[\d+ characters cut\] … /su);
    // 90 unknown fields of 10,000 characters: each cut, and the list stops at the total.
    const many = await gqlSend(t.app, `{ ${Array.from({ length: 90 }, (_, i) => `f${i}${'g'.repeat(10_000)}`).join(' ')} }`, {}, { key: a.apiKey });
    const errors = many.body.errors as { message: string }[];
    expect(errors.length).toBeLessThanOrEqual(91);
    expect(errors.reduce((n, e) => n + e.message.length, 0)).toBeLessThanOrEqual(MAX_ERRORS_CHARS + MAX_ERROR_MESSAGE_CHARS);
    expect(size(many.body)).toBeLessThan(MAX_ERRORS_CHARS + 32 * 1024);
    await stillAnswers();
  });

  it('boundedText: any text at most the limit, unchanged when it fits, its head and tail kept, no surrogate pair split', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 3_000 }), fc.integer({ min: 60, max: 1_500 }), (text, max) => {
        const out = boundedText(text, max);
        if (text.length <= max) {
          expect(out).toBe(text);
          return;
        }
        expect(out.length).toBeLessThanOrEqual(max);
        const [head, tail] = out.split(/ … \[\d+ characters cut\] … /u);
        expect(text.startsWith(head)).toBe(true);
        expect(text.endsWith(tail)).toBe(true);
        expect(/[\ud800-\udbff]$/.test(head) && /^[\udc00-\udfff]/.test(text.slice(head.length))).toBe(false);
      }),
      { numRuns: 300 },
    );
  });
});
