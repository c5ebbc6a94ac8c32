// A document's cost is measured in time linear in its size, before graphql-js validates it: nested
// fragments that each spread the next one twice (2^levels fields once expanded) are refused at
// once, with no key, on every transport that takes a document; random documents with fragments,
// aliases, cycles and nesting are each answered in bounded time and the API keeps answering.
import fc from 'fast-check';
import { getNamedType, isObjectType, type GraphQLObjectType } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { gqlSend, send } from '../helpers/abuse.ts';
import { wsClient, wsOnce } from '../helpers/ws-client.ts';
import { schema } from '../../src/graphql/schema.ts';

let t: TestApp;
let a: SeededAccount;
let baseUrl: string;

beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount({ limits: { rateLimitPerMinute: 100_000 } });
  baseUrl = await t.app.listen();
});
afterAll(() => t.close());

/** `levels` fragments on Query, each spreading the next twice: 2^levels fields once expanded. */
function fragmentBomb(levels: number, leaf = '__typename'): string {
  let doc = 'query Bomb { ...F0 }\n';
  for (let i = 0; i < levels; i++) doc += `fragment F${i} on Query { ...F${i + 1} ...F${i + 1} }\n`;
  return doc + `fragment F${levels} on Query { ${leaf} }\n`;
}

/** Wall time of `fn`, with its result. */
async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; result: T }> {
  const start = performance.now();
  const result = await fn();
  return { ms: performance.now() - start, result };
}

// Generous for a loaded 2-core CI machine; the exponential walk this replaces took minutes at 30 levels.
const ANSWER_DEADLINE_MS = 2_000;

async function expectMeAnswers(): Promise<void> {
  const me = await t.request('GET', '/api/v1/public/me', { key: a.apiKey });
  expect(me.status).toBe(200);
}

describe('nested fragment bombs, no key', () => {
  for (const levels of [20, 30, 60]) {
    it(`HTTP POST, ${levels} levels: refused as too complex in bounded time`, async () => {
      const { ms, result } = await timed(() => gqlSend(t.app, fragmentBomb(levels)));
      expect(result.status).toBe(400);
      expect(result.body.errors?.[0]).toMatchObject({ extensions: { code: 'QUERY_TOO_COMPLEX' } });
      expect(result.body.errors?.[0].message).toMatch(/too many fields/);
      expect(ms).toBeLessThan(ANSWER_DEADLINE_MS);
      await expectMeAnswers();
    });
  }

  it('with real object fields and aliases at the bottom', async () => {
    const { ms, result } = await timed(() => gqlSend(t.app, fragmentBomb(30, 'a: me { name email } b: agents { id name }')));
    expect(result.status).toBe(400);
    expect(result.body.errors?.[0].extensions.code).toBe('QUERY_TOO_COMPLEX');
    expect(ms).toBeLessThan(ANSWER_DEADLINE_MS);
  });

  it('HTTP GET with the document in the query string', async () => {
    const query = encodeURIComponent(fragmentBomb(30));
    const { ms, result } = await timed(() => send(t.app, 'GET', `/graphql?query=${query}`, { headers: { accept: 'application/json' } }));
    expect(result.status).toBe(400);
    expect(result.body.errors?.[0].extensions.code).toBe('QUERY_TOO_COMPLEX');
    expect(ms).toBeLessThan(ANSWER_DEADLINE_MS);
    await expectMeAnswers();
  });

  it('SSE (text/event-stream)', async () => {
    const { ms, result } = await timed(async () => {
      const res = await fetch(`${baseUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({ query: fragmentBomb(30) }),
      });
      return { status: res.status, text: await res.text() };
    });
    expect(result.text).toContain('QUERY_TOO_COMPLEX');
    expect(ms).toBeLessThan(ANSWER_DEADLINE_MS);
    await expectMeAnswers();
  });

  it('WebSocket: an unauthenticated socket is closed before any document is read', async () => {
    const client = wsClient(baseUrl);
    try {
      const outcome = await wsOnce(client, fragmentBomb(30)).then(
        () => 'answered',
        (e: { code?: number }) => e.code,
      );
      expect(outcome).toBe(4401);
    } finally {
      await client.dispose();
    }
  });

  it('WebSocket with a key: that one operation is refused in bounded time', async () => {
    const client = wsClient(baseUrl, `Bearer ${a.apiKey}`);
    try {
      const { ms, result } = await timed(() =>
        wsOnce(client, fragmentBomb(30)).then(
          () => [],
          (e: unknown) => e as { extensions?: { code?: string } }[],
        ),
      );
      expect(result[0]).toMatchObject({ extensions: { code: 'QUERY_TOO_COMPLEX' } });
      expect(ms).toBeLessThan(ANSWER_DEADLINE_MS);
      // The socket still runs other operations.
      const me = await wsOnce(client, '{ me { name } }');
      expect(me.data).toBeTruthy();
    } finally {
      await client.dispose();
    }
  });
});

// Random documents over the real schema: fragments spreading each other (cycles included),
// aliases, inline fragments, unknown fields and nesting.
const queryType = schema.getQueryType()!;

function fieldsOf(type: GraphQLObjectType): { name: string; object?: GraphQLObjectType }[] {
  return Object.values(type.getFields())
    .filter((f) => f.args.every((arg) => !('ofType' in arg.type) || arg.type.constructor.name !== 'GraphQLNonNull'))
    .map((f) => {
      const named = getNamedType(f.type);
      return { name: f.name, object: isObjectType(named) ? named : undefined };
    });
}

function selectionArb(type: GraphQLObjectType, fragments: number, depth: number): fc.Arbitrary<string> {
  const fields = fieldsOf(type);
  const field = fc.constantFrom(...fields).chain((f) => {
    const alias = fc.option(fc.constantFrom('a', 'b', 'x1', 'dup'), { nil: undefined }).map((al) => (al ? `${al}: ` : ''));
    if (!f.object) return alias.map((al) => `${al}${f.name}`);
    if (depth <= 0) return alias.map((al) => `${al}${f.name} { __typename }`);
    return fc.tuple(alias, selectionArb(f.object, fragments, depth - 1)).map(([al, sub]) => `${al}${f.name} { ${sub} }`);
  });
  const spread = fc.nat(fragments - 1).map((i) => `...F${i}`);
  const unknown = fc.constantFrom('nope', '__typename', 'a: __typename');
  const inline = type === queryType && depth > 0 ? [selectionArb(type, fragments, depth - 1).map((s) => `... on Query { ${s} }`)] : [];
  const one = type === queryType ? fc.oneof(field, spread, spread, unknown, ...inline) : fc.oneof(field, unknown);
  return fc.array(one, { minLength: 1, maxLength: 6 }).map((parts) => parts.join(' '));
}

const documentArb = fc
  .integer({ min: 1, max: 12 })
  .chain((count) =>
    fc
      .tuple(selectionArb(queryType, count, 2), fc.array(selectionArb(queryType, count, 2), { minLength: count, maxLength: count }))
      .map(([op, frags]) => `query Q { ${op} }\n` + frags.map((body, i) => `fragment F${i} on Query { ${body} }`).join('\n')),
  );

describe('random documents with fragments, aliases and nesting', () => {
  it('each is answered, accepted or refused in bounded time, and the API still answers', async () => {
    const times: number[] = [];
    await fc.assert(
      fc.asyncProperty(documentArb, fc.boolean(), async (doc, withKey) => {
        const { ms, result } = await timed(() => gqlSend(t.app, doc, {}, { key: withKey ? a.apiKey : null }));
        times.push(ms);
        expect(result.status).toBeLessThan(500);
        expect(result.body.data !== undefined || (result.body.errors?.length ?? 0) > 0).toBe(true);
        expect(ms).toBeLessThan(ANSWER_DEADLINE_MS);
      }),
      { numRuns: 300 },
    );
    times.sort((x, y) => x - y);
    const median = times[Math.floor(times.length / 2)];
    // The figure: well under 200 ms a document (most are a few ms).
    expect(median).toBeLessThan(200);
    await expectMeAnswers();
  });
});
