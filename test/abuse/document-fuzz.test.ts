// Hostile GraphQL documents, generated with fast-check: selections nested 0–40 deep, aliases
// (hundreds of one field), fragments spreading the next one 2–4 times per level up to 40 levels
// (the exponential "fragment bomb"), fragment cycles, inline fragments, @include/@skip with
// variables, arguments with nested input-object and list literals, very long names, duplicate and
// multiple operations, and garbage or truncated text. Over POST and GET, with a key, without one
// and with a wrong one, each is answered quickly with a GraphQL JSON body (data or errors): never
// a 5xx, never the masked "Unexpected error."; afterwards the API still answers.
import fc from 'fast-check';
import {
  parse,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLNamedType,
  type GraphQLObjectType,
} from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { insertBatch } from '../helpers/fixtures.ts';
import { schema } from '../../src/graphql/schema.ts';
import { measureDocument } from '../../src/graphql/plugins/document-cost.ts';

let t: TestApp;
let a: SeededAccount;
/** Ids of stored rows, written into documents where the generator put a placeholder. */
const ids: Record<string, string> = {};

// Every request comes from one address, so requests without a valid key spend that address's
// budgets (AUTH_FAILURES_PER_MINUTE, ANONYMOUS_REQUESTS_PER_MINUTE): raised out of the way, as the
// account's own rate limit is. A 429 is therefore never an acceptable answer here.
const ADDRESS = '198.51.100.23';

beforeAll(async () => {
  t = await createTestApp({ config: { AUTH_FAILURES_PER_MINUTE: '100000', ANONYMOUS_REQUESTS_PER_MINUTE: '1000000' } });
  a = await t.seedAccount({ limits: { rateLimitPerMinute: 100_000 } });
  // Rows for resolvers to read: a few batches with calls.
  const { batch } = await insertBatch(t.deps, a, { contacts: 50 });
  await insertBatch(t.deps, a, { contacts: 20, startMode: 'manual' });
  Object.assign(ids, { batch: batch.id, agent: a.agent.id, version: a.version.id, account: a.account.id });
  // Warm the JIT on each path (parse refusal, cost refusal, validation, execution) so the first
  // generated document does not pay for it.
  const warm = [
    '{ me { id } }',
    '{ nope }',
    '{{',
    fragmentBomb(30, 2, 'Query', '__typename', 'spread'),
    '{ __schema { types { name } } }',
    '{ batches { items { id } } }',
  ];
  for (const query of warm) for (let i = 0; i < 3; i++) await sendPost({ doc: { query }, key: 'valid', accept: 'application/json' });
});
afterAll(() => t.close());

// ---------------------------------------------------------------------------------------------
// Sending and timing. In-process (`t.app.fetch`), so the time measured is the server's: the front
// door, Yoga's parse / cost check / validation / execution, and reading the response body.
//
// On a loaded 2-core machine one measurement can be inflated by GC or by the scheduler: noise, not
// the document's cost. So every document is measured once and the median of those first
// measurements must stay under MEDIAN_MS; a document measured over SLOW_MS is sent again (up to
// twice) and its cheapest time must be under SLOW_MS. A document that really is slow (exponential
// validation, a resolver pulling thousands of rows) is slow every time, and fails.
// ---------------------------------------------------------------------------------------------
const SLOW_MS = 200;
const MEDIAN_MS = 50;
/** A document the cost limits accept at their full budget (thousands of rows read). */
const FULL_BUDGET_MS = 600;
const MAX_DOC_CHARS = 64 * 1024;
/** What a URL may reasonably hold (common proxy and server limits are 8 KiB). */
const MAX_URL_CHARS = 8 * 1024;

type KeyChoice = 'valid' | 'none' | 'wrong';

interface DocumentCase {
  query: string;
  variables?: Record<string, unknown>;
  operationName?: string;
}

interface RequestCase {
  doc: DocumentCase;
  key: KeyChoice;
  accept: string;
}

interface Answer {
  status: number;
  text: string;
  ms: number;
}

/** `"{{batch}}"` and the like become the stored row's id. */
const withIds = (query: string) => query.replace(/\{\{(batch|agent|version|account)\}\}/g, (_, k: string) => ids[k]);

function headersFor(c: RequestCase): Record<string, string> {
  const headers: Record<string, string> = { accept: c.accept };
  if (c.key === 'valid') headers.authorization = `Bearer ${a.apiKey}`;
  if (c.key === 'wrong') headers.authorization = `Bearer ${a.apiKey.slice(0, -4)}zzzz`;
  return headers;
}

async function timedFetch(request: Request): Promise<Answer> {
  const start = performance.now();
  const res = await t.app.fetch(request, { clientAddress: ADDRESS });
  const text = await res.text();
  return { status: res.status, text, ms: performance.now() - start };
}

function sendPost(c: RequestCase): Promise<Answer> {
  const body = JSON.stringify({ query: withIds(c.doc.query), variables: c.doc.variables, operationName: c.doc.operationName });
  return timedFetch(
    new Request('http://test.local/graphql', { method: 'POST', headers: { ...headersFor(c), 'content-type': 'application/json' }, body }),
  );
}

function getUrl(doc: DocumentCase): string {
  const params = new URLSearchParams({ query: doc.query });
  if (doc.variables !== undefined) params.set('variables', JSON.stringify(doc.variables));
  if (doc.operationName !== undefined) params.set('operationName', doc.operationName);
  return `/graphql?${params}`;
}

function sendGet(c: RequestCase): Promise<Answer> {
  const url = getUrl({ ...c.doc, query: withIds(c.doc.query) });
  return timedFetch(new Request(`http://test.local${url}`, { method: 'GET', headers: headersFor(c) }));
}

/** The first measurement, and the cheapest of up to three when the first was over SLOW_MS. */
async function measure(send: () => Promise<Answer>): Promise<{ first: Answer; cheapestMs: number }> {
  const first = await send();
  let cheapestMs = first.ms;
  for (let i = 0; i < 2 && cheapestMs >= SLOW_MS; i++) cheapestMs = Math.min(cheapestMs, (await send()).ms);
  return { first, cheapestMs };
}

const mentions = (query: string, word: 'mutation' | 'subscription') => new RegExp(`(^|[^_0-9A-Za-z])${word}([^_0-9A-Za-z]|$)`).test(query);

/** The response contract for any document, whatever it is. */
function expectGraphqlAnswer(c: RequestCase, r: Answer, method: 'GET' | 'POST'): void {
  const where = `${method} ${JSON.stringify(c.doc).slice(0, 400)} → ${r.status} ${r.text.slice(0, 300)}`;
  const allowed = [200, 400, 401, 403, 413, 422];
  // GraphQL over HTTP: a mutation is refused over GET (405); a subscription asked for as plain
  // JSON rather than as a stream is not acceptable (406, empty body).
  if (method === 'GET' && mentions(c.doc.query, 'mutation')) allowed.push(405);
  if (mentions(c.doc.query, 'subscription')) allowed.push(406);
  expect(allowed, where).toContain(r.status);
  if (r.status === 406) return;
  let body: unknown;
  expect(() => (body = JSON.parse(r.text)), where).not.toThrow();
  expect(typeof body === 'object' && body !== null && !Array.isArray(body), where).toBe(true);
  const b = body as { data?: unknown; errors?: unknown };
  expect('data' in b || (Array.isArray(b.errors) && b.errors.length > 0), where).toBe(true);
  if (b.errors !== undefined) {
    expect(Array.isArray(b.errors), where).toBe(true);
    for (const e of b.errors as { message?: unknown; extensions?: { code?: unknown } }[]) {
      expect(typeof e.message, where).toBe('string');
      expect(e.message, where).not.toBe('Unexpected error.');
      expect(e.extensions?.code, where).not.toBe('INTERNAL_SERVER_ERROR');
    }
  }
}

async function expectMeAnswers(): Promise<void> {
  const r = await sendPost({ doc: { query: '{ me { id } }' }, key: 'valid', accept: 'application/json' });
  expect(r.status).toBe(200);
  expect(JSON.parse(r.text)).toEqual({ data: { me: { id: a.account.id } } });
}

// ---------------------------------------------------------------------------------------------
// Names: the real schema's, unknown ones and very long ones.
// ---------------------------------------------------------------------------------------------
const queryType = schema.getQueryType()!;
const mutationType = schema.getMutationType()!;
const subscriptionType = schema.getSubscriptionType()!;
const objectTypes = Object.values(schema.getTypeMap()).filter((x): x is GraphQLObjectType => isObjectType(x) && !x.name.startsWith('__'));
const REAL_FIELD_NAMES = [...new Set(objectTypes.flatMap((x) => Object.keys(x.getFields())))].sort();
const TYPE_NAMES = objectTypes.map((x) => x.name).sort();
const UNKNOWN_NAMES = [
  'nope',
  'password',
  'apiKeyHash',
  'constructor',
  'toString',
  'hasOwnProperty',
  'valueOf',
  'prototype',
  '__proto__',
  '__typename',
  '__schema',
  '__type',
  '__nope',
  'Me',
  'ME',
  'me_',
  'batch_',
  'id2',
  '_',
  'on',
  'fragment',
  'query',
  'null',
  'true',
];
const IDENT = /^[_A-Za-z][_0-9A-Za-z]{0,15}$/;

type Field = GraphQLField<unknown, unknown>;

function fieldsOf(type: GraphQLNamedType | undefined): Field[] {
  return type && (isObjectType(type) || isInterfaceType(type)) ? Object.values(type.getFields()) : [];
}

const longName = fc
  .tuple(fc.integer({ min: 200, max: 16_000 }), fc.constantFrom('a', 'Z', '_', 'me', 'x9'))
  .map(([n, s]) => `x${s.repeat(Math.ceil(n / s.length))}`.slice(0, n));

const anyName = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...REAL_FIELD_NAMES) },
  { weight: 3, arbitrary: fc.constantFrom(...UNKNOWN_NAMES) },
  { weight: 1, arbitrary: fc.stringMatching(IDENT) },
  { weight: 1, arbitrary: longName },
);

// Documents come in two moods: `clean` ones a client could send (they mostly validate and run,
// so resolvers and the cost limits are reached), and `noisy` ones where any part may be wrong.
type Mode = 'clean' | 'noisy';

/** Clean aliases are numbered once the document is whole (uniqueAliases), so they never conflict. */
const ALIAS_PLACEHOLDER = 'al_';
const CLEAN_ALIAS = `${ALIAS_PLACEHOLDER}: `;
const uniqueAliases = (doc: string) => {
  let i = 0;
  return doc.replace(/\bal_:/g, () => `al${i++}:`);
};
const aliasArb: Record<Mode, fc.Arbitrary<string>> = {
  clean: fc.oneof({ weight: 6, arbitrary: fc.constant('') }, { weight: 1, arbitrary: fc.constant(CLEAN_ALIAS) }),
  noisy: fc.oneof(
    { weight: 10, arbitrary: fc.constant('') },
    { weight: 3, arbitrary: fc.constantFrom('a', 'b', 'dup', 'me', 'id', '__typename', 'constructor').map((n) => `${n}: `) },
    { weight: 1, arbitrary: anyName.map((n) => `${n}: `) },
  ),
};

// ---------------------------------------------------------------------------------------------
// Values: literals of every kind, the right ones for an argument's type, and hostile ones.
// ---------------------------------------------------------------------------------------------
const INT_LITERALS = [
  '0',
  '1',
  '-1',
  '2',
  '50',
  '100',
  '200',
  '201',
  '100000',
  '2147483647',
  '2147483648',
  '-2147483649',
  '99999999999999999999999',
  '-0',
];
const FLOAT_LITERALS = ['1.5', '1e3', '1e400', '-1e-400', '0.0', '2.5E+2'];
const ODD_STRINGS = [
  '',
  'x',
  'active',
  '2000-01-01',
  '2100-01-01',
  '2030-02-30',
  '{{batch}}',
  '{{agent}}',
  '\u0000',
  '😀',
  '"',
  '\\',
  '\n',
  '\u2028',
  '\ufeff',
  'a'.repeat(300),
  '<script>',
  '${x}',
  '__proto__',
  "'; DROP TABLE batches; --",
];
/** Strings the lexer refuses (lone surrogates, bad escapes, unterminated), and odd valid ones. */
const RAW_STRINGS = [
  '"\\ud800"',
  '"x\\udfff"',
  '"""block"""',
  '"""a\\"""b"""',
  '"""\n  indented\n"""',
  '"\\u{1F600}"',
  '"\\uD83D\\uDE00"',
  '"\\x"',
  '"\\u12"',
  '"unterminated',
  '"""unterminated',
  '"line\nbreak"',
];
const ENUM_WORDS = ['active', 'pending', 'completed', 'cancelled', 'queued', 'ready', 'delivered', 'NOPE', 'ASC', 'true', 'null'];
const VAR_NAMES = ['b', 'n', 's', 'id', 'f', 'r', 'j', 'l', 'x', 'i'];
const varRef = fc
  .oneof({ weight: 4, arbitrary: fc.constantFrom(...VAR_NAMES) }, { weight: 1, arbitrary: fc.constantFrom('undeclared', 'b2') })
  .map((n) => `$${n}`);

const stringLiteral = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...ODD_STRINGS).map((s) => JSON.stringify(s)) },
  { weight: 3, arbitrary: fc.string({ maxLength: 20 }).map((s) => JSON.stringify(s)) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 10 }).map((s) => JSON.stringify(s)) },
  { weight: 1, arbitrary: fc.constantFrom(...RAW_STRINGS) },
);

const scalarLiteral = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...INT_LITERALS) },
  { weight: 1, arbitrary: fc.constantFrom(...FLOAT_LITERALS) },
  { weight: 3, arbitrary: stringLiteral },
  { weight: 2, arbitrary: fc.constantFrom('true', 'false', 'null', ...ENUM_WORDS) },
  { weight: 1, arbitrary: varRef },
);

const objectKey = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      'status',
      'agentId',
      'startDate',
      'endDate',
      'agentIds',
      'contacts',
      'phoneNumber',
      'contactId',
      'metadata',
      'name',
      'a',
      'b',
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString') },
  { weight: 1, arbitrary: fc.stringMatching(IDENT) },
);

/** Any literal: scalars, lists and input objects nested a few levels (duplicated keys included). */
const { literal } = fc.letrec<{ literal: string }>((tie) => ({
  literal: fc.oneof(
    { maxDepth: 4, depthIdentifier: 'literal' },
    { weight: 4, arbitrary: scalarLiteral },
    { weight: 1, arbitrary: fc.array(tie('literal'), { maxLength: 4 }).map((xs) => `[${xs.join(', ')}]`) },
    {
      weight: 1,
      arbitrary: fc.array(fc.tuple(objectKey, tie('literal')), { maxLength: 4 }).map((kvs) => `{ ${kvs.map(([k, v]) => `${k}: ${v}`).join(', ')} }`),
    },
  ),
}));

/** Lists or objects nested 2–120 deep (past the parser's 64-bracket cap), very wide ones, very long strings. */
const hugeLiteral = fc.oneof(
  fc
    .tuple(fc.integer({ min: 2, max: 120 }), fc.constantFrom('[', '{ a: ', '{ __proto__: ', '[{ agentIds: ', '{ contacts: ['), scalarLiteral)
    .map(([n, open, leaf]) => {
      const close = [...open]
        .filter((ch) => ch === '[' || ch === '{')
        .reverse()
        .map((ch) => (ch === '[' ? ']' : ' }'))
        .join('');
      return open.repeat(n) + leaf + close.repeat(n);
    }),
  fc
    .tuple(fc.integer({ min: 10, max: 6_000 }), fc.constantFrom('1', '"x"', 'null', '{}', '[]', '$n'))
    .map(([n, item]) => `[${Array(n).fill(item).join(', ')}]`),
  fc.integer({ min: 10, max: 3_000 }).map((n) => `{ ${Array.from({ length: n }, (_, i) => `k${i % 50}: ${i}`).join(', ')} }`),
  fc.integer({ min: 1_000, max: 60_000 }).map((n) => JSON.stringify('s'.repeat(n))),
);

/** Values a client would send, per scalar (ids of stored rows included). */
const CLEAN_SCALARS: Record<string, string[]> = {
  Int: ['1', '2', '10', '50', '200', '0'],
  Float: ['1.5', '1'],
  Boolean: ['true', 'false', '$b'],
  String: ['"x"', '"2000-01-01"', '"2100-01-01"', '"{{batch}}"', '"{{agent}}"', '"contact-1"'],
  ID: ['"{{batch}}"', '"{{agent}}"', '"{{version}}"', '"x"', '"batch_missing"'],
  DateTime: ['"2000-01-01T00:00:00Z"', '"2100-01-01T00:00:00.000Z"'],
  JSON: ['{ a: 1 }', '[1, "x"]', '"x"', '{ contact_id: "c1", phone_number: "+14155550111" }'],
};

const NOISY_SCALARS: Record<string, fc.Arbitrary<string>> = {
  Int: fc.constantFrom(...INT_LITERALS),
  Float: fc.constantFrom(...FLOAT_LITERALS, ...INT_LITERALS),
  Boolean: fc.constantFrom('true', 'false'),
  String: stringLiteral,
  ID: stringLiteral,
  DateTime: fc.constantFrom('"2030-01-01T00:00:00Z"', '"2030-13-01T00:00:00Z"', '"yesterday"', '"2030-01-01"', '0'),
  JSON: literal,
};

const valueCache = new Map<string, fc.Arbitrary<string>>();

/** A literal for an input type. Clean: of that type. Noisy: sometimes a variable, any literal or a huge one. */
function valueFor(type: GraphQLInputType, depth: number, mode: Mode): fc.Arbitrary<string> {
  const cacheKey = `${String(type)}|${depth}|${mode}`;
  const cached = valueCache.get(cacheKey);
  if (cached) return cached;
  const inner = isNonNullType(type) ? type.ofType : type;
  let right: fc.Arbitrary<string>;
  if (depth <= 0) {
    right = mode === 'clean' ? fc.constant('null') : scalarLiteral;
  } else if (isListType(inner)) {
    const item = valueFor(inner.ofType, depth - 1, mode);
    right = fc.oneof(
      item,
      fc.array(item, { maxLength: 3 }).map((xs) => `[${xs.join(', ')}]`),
    );
  } else if (isInputObjectType(inner)) {
    const fields = Object.values(inner.getFields());
    const extra =
      mode === 'clean'
        ? fc.constant(null)
        : fc.option(
            fc.tuple(objectKey, literal).map(([k, v]) => `${k}: ${v}`),
            { freq: 6, nil: null },
          );
    right = fc
      .tuple(
        ...fields.map((f) => {
          const given = valueFor(f.type, depth - 1, mode).map((v): string | null => `${f.name}: ${v}`);
          return isNonNullType(f.type) && mode === 'clean' ? given : fc.option(given, { freq: isNonNullType(f.type) ? 12 : 2, nil: null });
        }),
        extra,
      )
      .map((parts) => `{ ${parts.filter((p) => p !== null).join(', ')} }`);
  } else if (isEnumType(inner)) {
    const values = fc.constantFrom(...inner.getValues().map((v) => v.name));
    right = mode === 'clean' ? values : fc.oneof({ weight: 4, arbitrary: values }, { weight: 1, arbitrary: fc.constantFrom(...ENUM_WORDS) });
  } else if (mode === 'clean') {
    right = fc.constantFrom(...(CLEAN_SCALARS[inner.name] ?? ['"x"']));
  } else {
    right = NOISY_SCALARS[inner.name] ?? literal;
  }
  const arb =
    mode === 'clean'
      ? right
      : fc.oneof(
          { weight: 8, arbitrary: right },
          { weight: 1, arbitrary: varRef },
          { weight: 1, arbitrary: literal },
          { weight: depth >= 3 ? 1 : 0, arbitrary: hugeLiteral },
        );
  valueCache.set(cacheKey, arb);
  return arb;
}

/** Arguments nobody declared (or declared elsewhere), with any literal. */
const genericArgs = fc
  .array(
    fc.tuple(fc.constantFrom('limit', 'first', 'last', 'page', 'pageSize', 'id', 'batchId', 'filter', 'input', 'after', 'x', '__proto__'), literal),
    {
      minLength: 1,
      maxLength: 3,
    },
  )
  .map((kvs) => `(${kvs.map(([k, v]) => `${k}: ${v}`).join(', ')})`);

function argsFor(args: readonly GraphQLArgument[], mode: Mode): fc.Arbitrary<string> {
  if (args.length === 0)
    return mode === 'clean' ? fc.constant('') : fc.oneof({ weight: 12, arbitrary: fc.constant('') }, { weight: 1, arbitrary: genericArgs });
  const required = (arg: GraphQLArgument) => isNonNullType(arg.type) && arg.defaultValue === undefined;
  // Clean: no cursors (the generator has none to give) and no `last` (not with `first`).
  if (mode === 'clean') args = args.filter((arg) => required(arg) || !['after', 'before', 'last'].includes(arg.name));
  if (args.length === 0) return fc.constant('');
  const extra =
    mode === 'clean'
      ? fc.constant(null)
      : fc.option(fc.constantFrom('limit: 1', 'x: 1', 'first: 200', `${args[0].name}: null`), { freq: 8, nil: null });
  return fc
    .tuple(
      ...args.map((arg) => {
        const given = valueFor(arg.type, 4, mode).map((v): string | null => `${arg.name}: ${v}`);
        return required(arg) && mode === 'clean' ? given : fc.option(given, { freq: required(arg) ? 10 : 3, nil: null });
      }),
      extra,
    )
    .map((parts) => {
      const given = parts.filter((p) => p !== null);
      return given.length ? `(${given.join(', ')})` : '';
    });
}

const NOISY_DIRECTIVES = [
  '@include(if: $b)',
  '@skip(if: $b)',
  '@include(if: true)',
  '@skip(if: false)',
  '@skip(if: true)',
  '@include(if: "yes")',
  '@include',
  '@skip(if: $undeclared)',
  '@include(if: $n)',
  '@deprecated',
  '@nope(x: 1)',
  '@specifiedBy(url: "x")',
  '@oneOf',
  '@include(if: $b) @include(if: $b)',
];
const directivesArb: Record<Mode, fc.Arbitrary<string>> = {
  clean: fc.oneof(
    { weight: 8, arbitrary: fc.constant('') },
    { weight: 1, arbitrary: fc.constantFrom(' @include(if: $b)', ' @skip(if: $b)', ' @skip(if: false)', ' @include(if: true)') },
  ),
  noisy: fc.oneof(
    { weight: 6, arbitrary: fc.constant('') },
    { weight: 2, arbitrary: fc.array(fc.constantFrom(...NOISY_DIRECTIVES), { minLength: 1, maxLength: 2 }).map((ds) => ` ${ds.join(' ')}`) },
  ),
};

// ---------------------------------------------------------------------------------------------
// Selection sets over the real schema (noisy: with unknown fields, stray spreads, odd type conditions).
// ---------------------------------------------------------------------------------------------
const INTROSPECTION = [
  '__schema { queryType { name } }',
  '__schema { types { name fields { name } } }',
  '__type(name: "Query") { fields { name type { name } } }',
  '__schema { types { fields { type { fields { name } } } } }',
  '__type(name: "CallBatch") { fields { args { type { name } } } }',
];

const selectionCache = new Map<string, fc.Arbitrary<string>>();

function leafSelection(type: GraphQLNamedType): fc.Arbitrary<string> {
  const leaves = fieldsOf(type)
    .filter((f) => isLeafType(getNamedType(f.type)) && f.args.length === 0)
    .map((f) => f.name);
  return fc.constantFrom('__typename', ...leaves);
}

function subselectionFor(field: Field, depth: number, fragments: number, mode: Mode): fc.Arbitrary<string> {
  const named = getNamedType(field.type);
  if (!isObjectType(named))
    return mode === 'clean'
      ? fc.constant('')
      : fc.oneof({ weight: 12, arbitrary: fc.constant('') }, { weight: 1, arbitrary: fc.constant(' { id }') });
  const inner = depth > 0 ? selectionSet(named, depth - 1, fragments, mode) : leafSelection(named);
  const wrapped = inner.map((s) => ` { ${s} }`);
  return mode === 'clean' ? wrapped : fc.oneof({ weight: 12, arbitrary: wrapped }, { weight: 1, arbitrary: fc.constant('') });
}

/**
 * Selections for `type` (undefined: a type the schema doesn't have), nested at most `depth` more
 * levels. Spreads name F{spreadFrom}…F{fragments-1}; clean documents spread only on Query (where
 * their fragments are) and only forward, so they have no cycles.
 */
function selectionSet(type: GraphQLNamedType | undefined, depth: number, fragments: number, mode: Mode, spreadFrom = 0): fc.Arbitrary<string> {
  const cacheKey = `${type?.name ?? '?'}|${depth}|${fragments}|${mode}|${spreadFrom}`;
  const cached = selectionCache.get(cacheKey);
  if (cached) return cached;
  const alias = aliasArb[mode];
  const directives = directivesArb[mode];
  // Clean documents leave the operator's `admin*` fields to noisy ones (with a tenant key they are all FORBIDDEN).
  const fields = fieldsOf(type).filter((f) => mode === 'noisy' || !f.name.startsWith('admin'));
  const known = fields.length
    ? fc
        .constantFrom(...fields)
        .chain((f) =>
          fc
            .tuple(
              mode === 'clean' && f.args.length ? fc.constant(CLEAN_ALIAS) : alias,
              argsFor(f.args, mode),
              directives,
              subselectionFor(f, depth, fragments, mode),
            )
            .map(([al, args, ds, sub]) => `${al}${f.name}${args}${ds}${sub}`),
        )
    : fc.constant('__typename');
  const spreadable = mode === 'clean' ? (type === queryType ? fragments - spreadFrom : 0) : fragments;
  const spread =
    spreadable > 0
      ? fc
          .tuple(
            mode === 'clean'
              ? fc.integer({ min: spreadFrom, max: fragments - 1 }).map((i) => `F${i}`)
              : fc.oneof(
                  { weight: 8, arbitrary: fc.nat(fragments - 1).map((i) => `F${i}`) },
                  { weight: 1, arbitrary: fc.constantFrom('Missing', 'on') },
                ),
            directives,
          )
          .map(([n, ds]) => `...${n}${ds}`)
      : fc.constant('__typename');
  const conditions = mode === 'clean' ? ['', type?.name ?? ''] : ['', type?.name ?? 'Query', 'Query', 'Account', 'Nope', ...TYPE_NAMES.slice(0, 4)];
  const inline =
    depth > 0
      ? fc
          .tuple(fc.constantFrom(...conditions), directives)
          .chain(([cond, ds]) =>
            selectionSet(cond === '' ? type : (schema.getType(cond) ?? undefined), depth - 1, fragments, mode, spreadFrom).map(
              (s) => `...${cond ? ` on ${cond}` : ''}${ds} { ${s} }`,
            ),
          )
      : fc.constant('__typename');
  const items: fc.WeightedArbitrary<string>[] = [
    { weight: 8, arbitrary: known },
    { weight: spreadable > 0 ? 4 : 0, arbitrary: spread },
    { weight: 2, arbitrary: inline },
    { weight: 1, arbitrary: alias.map((al) => `${al}__typename`) },
  ];
  if (mode === 'noisy') {
    const unknown = fc
      .tuple(
        alias,
        anyName,
        fc.option(genericArgs, { freq: 3, nil: '' }),
        directives,
        depth > 0
          ? fc.option(
              selectionSet(undefined, depth - 1, fragments, mode).map((s) => ` { ${s} }`),
              { nil: '' },
            )
          : fc.constant(''),
      )
      .map(([al, name, args, ds, sub]) => `${al}${name}${args}${ds}${sub}`);
    items.push({ weight: 2, arbitrary: unknown }, { weight: 1, arbitrary: fc.constant('...Missing') });
  }
  if (type === queryType)
    items.push({ weight: 1, arbitrary: fc.constantFrom(...INTROSPECTION).map((s) => (mode === 'clean' ? CLEAN_ALIAS + s : s)) });
  const list = fc.array(fc.oneof(...items), { minLength: 1, maxLength: depth >= 2 ? 3 : 5 }).map((xs) => xs.join(' '));
  // An empty selection set is a syntax error.
  const arb = mode === 'clean' ? list : fc.oneof({ weight: 30, arbitrary: list }, { weight: 1, arbitrary: fc.constant('') });
  selectionCache.set(cacheKey, arb);
  return arb;
}

// ---------------------------------------------------------------------------------------------
// Operations, variables and documents.
// ---------------------------------------------------------------------------------------------
const NOISY_VAR_DEFS = [
  '$b: Boolean!',
  '$b: Boolean = true',
  '$n: Int',
  '$n: Int = 500',
  '$s: String',
  '$id: ID!',
  '$f: CallBatchFilter',
  '$r: CallRecordFilter!',
  '$j: JSON',
  '$l: [[Int!]!]',
  '$x: Nope',
  '$x: Query',
  '$i: CreateCallBatchInput',
  '$b: String',
  '$s: String = 1',
];
const noisyVarDefs = fc.oneof(
  { weight: 2, arbitrary: fc.constant('') },
  { weight: 3, arbitrary: fc.array(fc.constantFrom(...NOISY_VAR_DEFS), { minLength: 1, maxLength: 5 }).map((ds) => `(${ds.join(', ')})`) },
);
/** Clean operations declare the variables they use, filled in once the document is whole. */
const VARS_PLACEHOLDER = '<<VARS>>';
/** Each operation (one a line, fragments the other lines) declares `$b` and `$n` if it or a fragment uses them. */
function declareVariables(operations: string[], fragments: string[]): string {
  const inFragments = fragments.join('\n');
  const declared = operations.map((op) => {
    const uses = (v: string) => op.includes(v) || (op.includes('...F') && inFragments.includes(v));
    const used = [uses('$b') && '$b: Boolean = true', uses('$n') && '$n: Int = 10'].filter(Boolean);
    return op.replaceAll(VARS_PLACEHOLDER, used.length ? `(${used.join(', ')})` : '');
  });
  return uniqueAliases([...declared, ...fragments].join('\n'));
}

const variableValue = fc.oneof(
  fc.constantFrom<unknown>(true, false, null, 0, 1, 200, 2 ** 31, -1, 1.5, 'x', '', '\u0000', 'active', [], {}, [[1, 2], [3]]),
  fc.constantFrom<unknown>(
    { status: 'active' },
    { startDate: '2000-01-01', endDate: '2100-01-01' },
    { status: 'nope', agentId: 1 },
    { contacts: [] },
  ),
  fc.jsonValue({ maxDepth: 3 }),
);
const variablesArb = fc.option(fc.dictionary(fc.constantFrom(...VAR_NAMES, 'zz'), variableValue, { maxKeys: 5 }), { freq: 4, nil: undefined });

const OP_NAMES = ['Q', 'Q', 'A', 'B', 'Bomb', ''];
const opKind = fc.constantFrom('query', 'query', 'query', 'query', 'query', 'mutation', 'subscription', '');

function rootOf(kind: string): GraphQLObjectType {
  return kind === 'mutation' ? mutationType : kind === 'subscription' ? subscriptionType : queryType;
}

/**
 * An operation. Clean ones declare the variables they use (VARS_PLACEHOLDER, see declareVariables),
 * have no operation directives and, when there are fragments, spread F0 (fragment i spreads F{i+1}),
 * so every fragment is used.
 */
function operation(fragments: number, depth: number, mode: Mode, names: readonly string[] = OP_NAMES): fc.Arbitrary<string> {
  const vars = mode === 'clean' ? fc.constant(VARS_PLACEHOLDER) : noisyVarDefs;
  const ds = mode === 'clean' ? fc.constant('') : directivesArb.noisy;
  return fc.tuple(opKind, fc.constantFrom(...names), vars, ds).chain(([kind, name, vs, d]) => {
    // `{ … }` (shorthand) only when nothing else is said.
    const shorthand = kind === '' && name === '' && vs === '' && d === '';
    const head = shorthand ? '' : `${kind || 'query'} ${name}${vs}${d} `;
    const root = rootOf(kind);
    const tail = mode === 'clean' && fragments > 0 && root === queryType ? ' ...F0' : '';
    return selectionSet(root, depth, fragments, mode).map((s) => `${head}{ ${s}${tail} }`);
  });
}

function fragmentDefinition(index: number, fragments: number, depth: number, mode: Mode): fc.Arbitrary<string> {
  if (mode === 'clean') {
    const next = index + 1 < fragments ? ` ...F${index + 1}` : '';
    return selectionSet(queryType, depth, fragments, mode, index + 1).map((s) => `fragment F${index} on Query { ${s}${next} }`);
  }
  return fc
    .tuple(fc.constantFrom('Query', 'Query', 'Query', 'Account', 'Agent', 'CallBatch', 'Nope', 'String'), directivesArb[mode])
    .chain(([on, ds]) =>
      selectionSet(schema.getType(on) ?? undefined, depth, fragments, mode).map((s) => `fragment F${index} on ${on}${ds} { ${s} }`),
    );
}

/** Operations and fragments over the real schema, clean or noisy (noisy fragments spread each other at random, cycles included). */
const realisticDocument: fc.Arbitrary<string> = fc
  .tuple(
    fc.constantFrom<Mode>('clean', 'clean', 'noisy'),
    fc.integer({ min: 0, max: 6 }),
    fc.constantFrom(1, 1, 1, 2, 3),
    fc.integer({ min: 1, max: 3 }),
  )
  .chain(([mode, fragments, operations, depth]) =>
    fc
      .tuple(
        fc.tuple(...Array.from({ length: operations }, (_, i) => operation(fragments, depth, mode, mode === 'clean' ? [`Op${i}`] : OP_NAMES))),
        fc.tuple(...Array.from({ length: fragments }, (_, i) => fragmentDefinition(i, fragments, Math.min(depth, 2), mode))),
      )
      .map(([ops, frags]) => declareVariables(ops, frags)),
  );

/** One plausible literal for an input type (required input fields only), so a chain through a field can validate. */
function plainLiteral(type: GraphQLInputType, name = ''): string {
  const inner = isNonNullType(type) ? type.ofType : type;
  if (isListType(inner)) return `[${plainLiteral(inner.ofType, name)}]`;
  if (isInputObjectType(inner)) {
    const required = Object.values(inner.getFields()).filter((f) => isNonNullType(f.type) && f.defaultValue === undefined);
    return `{ ${required.map((f) => `${f.name}: ${plainLiteral(f.type, f.name)}`).join(', ')} }`;
  }
  if (isEnumType(inner)) return inner.getValues()[0].name;
  if (name === 'startDate') return '"2000-01-01"';
  if (name === 'endDate') return '"2100-01-01"';
  return { Int: '1', Float: '1.5', Boolean: 'true', DateTime: '"2000-01-01T00:00:00Z"', JSON: '{ a: 1 }' }[inner.name] ?? '"{{batch}}"';
}

function requiredArgs(f: Field): string[] {
  return f.args
    .filter((arg) => isNonNullType(arg.type) && arg.defaultValue === undefined)
    .map((arg) => `${arg.name}: ${plainLiteral(arg.type, arg.name)}`);
}

/** Object types a selection can nest under without end (Agent ⇄ PromptVersion, CallBatch → calls → Call → batch …). */
const ENDLESS_TYPES: ReadonlySet<string> = (() => {
  let set = new Set(objectTypes.map((x) => x.name));
  for (;;) {
    const next = new Set([...set].filter((name) => fieldsOf(schema.getType(name)!).some((f) => set.has(getNamedType(f.type).name))));
    if (next.size === set.size) return next;
    set = next;
  }
})();

const PAGE_ARGS = ['first: 1', 'first: 200', 'last: 5', 'limit: 2', 'limit: 200', 'page: 2', 'pageSize: 200', 'first: $n'];

/** One selection nested 0–40 levels deep, following the schema's object fields (now and then through an unknown one). */
const deepChain: fc.Arbitrary<string> = fc.integer({ min: 0, max: 40 }).chain((depth) =>
  fc
    .record({
      levels: fc.array(
        fc.record({
          pick: fc.nat(),
          alias: aliasArb.clean,
          page: fc.oneof({ weight: 2, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.constantFrom(...PAGE_ARGS) }),
          ds: directivesArb.clean,
          siblings: fc.array(fc.constantFrom('__typename', 'b: __typename', '... { __typename }'), { maxLength: 2 }),
        }),
        { minLength: depth, maxLength: depth },
      ),
      unknownAt: fc.oneof({ weight: 3, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.nat(39) }),
      leaf: fc.oneof(
        { weight: 6, arbitrary: fc.constantFrom('__typename', 'a: __typename b: __typename') },
        { weight: 1, arbitrary: fc.constant('...F0') },
      ),
      kind: fc.constantFrom('query Deep', 'query Deep', 'mutation M', 'subscription S', ''),
      fragment: fc.oneof(
        { weight: 6, arbitrary: fc.constant('') },
        { weight: 1, arbitrary: fc.constantFrom('fragment F0 on Query { __typename }', 'fragment F0 on Agent { id }') },
      ),
    })
    .map(({ levels, unknownAt, leaf, kind, fragment }) => {
      let type: GraphQLNamedType | undefined = kind.startsWith('mutation')
        ? mutationType
        : kind.startsWith('subscription')
          ? subscriptionType
          : queryType;
      let open = '';
      levels.forEach((l, i) => {
        const objects: Field[] = fieldsOf(type).filter((f) => isObjectType(getNamedType(f.type)));
        const endless = objects.filter((f) => ENDLESS_TYPES.has(getNamedType(f.type).name));
        const objectFields = endless.length ? endless : objects;
        let name: string;
        let args: string[] = [];
        if (i === unknownAt || objectFields.length === 0) {
          name = UNKNOWN_NAMES[l.pick % UNKNOWN_NAMES.length];
          type = undefined;
        } else {
          const f: Field = objectFields[l.pick % objectFields.length];
          name = f.name;
          type = getNamedType(f.type);
          args = requiredArgs(f);
          if (l.page && f.args.some((arg) => arg.name === l.page!.split(':')[0])) args.push(l.page);
        }
        open += `${l.siblings.join(' ')} ${args.length ? CLEAN_ALIAS : l.alias}${name}${args.length ? `(${args.join(', ')})` : ''}${l.ds} { `;
      });
      const operation = `${kind}${kind ? VARS_PLACEHOLDER : ''} { ${open}${leaf}${' }'.repeat(levels.length)} }`;
      // A shorthand operation can't declare variables: literals instead.
      return declareVariables([kind ? operation : operation.replaceAll('$b', 'true').replaceAll('$n', '3')], fragment ? [fragment] : []);
    }),
);

/** Up to ~1,200 copies of one field: distinct aliases, one alias, a few, or none. */
const ALIASED_FIELDS = [
  'me { id }',
  '__typename',
  'me { limits { maxBatchSize } }',
  'batches(limit: 200) { items { id } }',
  'agents { id promptVersions { id } }',
  'nope',
  'me',
  'webhookSecret { secret }',
  'batch(id: "{{batch}}") { id }',
  'agent(id: "agt-missing") { id }',
  'calls(batchId: "{{batch}}", limit: 200) { items { id } }',
  'callRecordsConnection(filter: { startDate: "2000-01-01", endDate: "2100-01-01" }, first: 200) { edges { node { id llmTranscript } } }',
  '__schema { types { name } }',
  '__type(name: "Query") { name }',
  'nope(x: 1)',
  'me(x: 1) { id }',
  'batches(limit: 1) { items { id } }',
  'results(batchId: "{{batch}}", limit: 1) { status }',
  'callRecords(filter: { startDate: "2000-01-01", endDate: "2100-01-01" }, pageSize: 1) { items { id } }',
];
const aliasFlood: fc.Arbitrary<string> = fc
  .record({
    count: fc.oneof(fc.integer({ min: 1, max: 60 }), fc.integer({ min: 1, max: 1_200 })),
    field: fc.constantFrom(...ALIASED_FIELDS),
    naming: fc.constantFrom('distinct', 'same', 'few', 'none'),
    wrap: fc.constantFrom('op', 'fragment', 'inline', 'unused-fragment'),
  })
  .map(({ count, field, naming, wrap }) => {
    const n = Math.min(count, Math.floor(60_000 / (field.length + 8)));
    const alias = (i: number) => (naming === 'distinct' ? `a${i}: ` : naming === 'same' ? 'a: ' : naming === 'few' ? `a${i % 7}: ` : '');
    const flood = Array.from({ length: n }, (_, i) => alias(i) + field).join(' ');
    if (wrap === 'fragment') return `query Q { ...A }\nfragment A on Query { ${flood} }`;
    if (wrap === 'inline') return `{ ... on Query { ${flood} } }`;
    if (wrap === 'unused-fragment') return `query Q { me { id } }\nfragment A on Query { ${flood} }`;
    return `{ ${flood} }`;
  });

/** `levels` fragments, each spreading the next `fanout` times: fanout^levels selections once expanded. */
function fragmentBomb(levels: number, fanout: number, on: string, leaf: string, style: string): string {
  const entry =
    on === 'Account'
      ? '{ me { ...F0 } }'
      : on === 'Agent'
        ? '{ agents { ...F0 } }'
        : style === 'directive'
          ? 'query Bomb($b: Boolean = true) { ...F0 }'
          : 'query Bomb { ...F0 }';
  const spread = (next: number, j: number) => {
    switch (style) {
      case 'inline':
        return `... on ${on} { ...F${next} }`;
      case 'directive':
        return `...F${next} @include(if: ${on === 'Query' ? '$b' : 'true'})`;
      case 'mixed':
        return `a${j}: __typename ...F${next}`;
      case 'untyped-inline':
        return `... { ...F${next} }`;
      default:
        return `...F${next}`;
    }
  };
  let doc = `${entry}\n`;
  for (let i = 0; i < levels; i++) doc += `fragment F${i} on ${on} { ${Array.from({ length: fanout }, (_, j) => spread(i + 1, j)).join(' ')} }\n`;
  return doc + `fragment F${levels} on ${on} { ${leaf} }\n`;
}

const BOMB_LEAVES: Record<string, string[]> = {
  Query: ['__typename', 'me { id }', 'a: me { name email } b: agents { id name }', 'batches(limit: 200) { items { id } }', 'nope'],
  Account: ['id', 'id name limits { maxBatchSize }', 'a: id b: id', 'nope'],
  Agent: ['id', 'promptVersions { id prompt }', 'a: name', 'nope'],
};
const fragmentBombDoc: fc.Arbitrary<string> = fc
  .record({
    levels: fc.integer({ min: 1, max: 40 }),
    fanout: fc.integer({ min: 2, max: 4 }),
    on: fc.constantFrom('Query', 'Query', 'Account', 'Agent'),
    leafPick: fc.nat(),
    // The bottom spreads the top again: a cycle under the bomb.
    cycle: fc.boolean(),
    style: fc.constantFrom('spread', 'spread', 'inline', 'directive', 'mixed', 'untyped-inline'),
    // The operation doesn't spread it: the bomb sits in the document for validation only.
    unused: fc.boolean(),
  })
  .map(({ levels, fanout, on, leafPick, cycle, style, unused }) => {
    const leaves = BOMB_LEAVES[on];
    const bomb = fragmentBomb(levels, fanout, on, leaves[leafPick % leaves.length] + (cycle ? ' ...F0' : ''), style);
    return unused ? bomb.replace(/^[^\n]*\n/, 'query Q { me { id } }\n') : bomb;
  });

/** 1–12 fragments spreading each other along random edges, with a cycle forced through them. */
const fragmentCycles: fc.Arbitrary<string> = fc.integer({ min: 1, max: 12 }).chain((n) =>
  fc
    .record({
      edges: fc.array(fc.array(fc.nat(n - 1), { minLength: 1, maxLength: 4 }), { minLength: n, maxLength: n }),
      fields: fc.array(
        fc.constantFrom('', '__typename', 'me { id }', 'nope', 'a: __typename', 'agents { id }', 'me { ...F0 }', '... on Query { ...F0 }'),
        {
          minLength: n,
          maxLength: n,
        },
      ),
      entry: fc.nat(n - 1),
      chain: fc.boolean(),
    })
    .map(({ edges, fields, entry, chain }) => {
      const defs = edges.map((targets, i) => {
        const all = chain ? [...targets, (i + 1) % n] : i === n - 1 ? [...targets, 0] : targets;
        return `fragment F${i} on Query { ${fields[i]} ${all.map((j) => `...F${j}`).join(' ')} }`;
      });
      return `query Cycle { ...F${entry} }\n${defs.join('\n')}`;
    }),
);

/** 2–6 operations, names repeated or missing, of every kind. */
const multipleOperations: fc.Arbitrary<string> = fc
  .tuple(fc.constantFrom<Mode>('clean', 'clean', 'noisy'), fc.integer({ min: 2, max: 6 }))
  .chain(([mode, n]) => fc.array(operation(0, 1, mode), { minLength: n, maxLength: n }).map((ops) => declareVariables(ops, [])));

/** Very long names in every position a name can take. */
const longNames: fc.Arbitrary<string> = fc
  .tuple(
    longName,
    fc.constantFrom('field', 'alias', 'operation', 'fragment', 'variable', 'directive', 'type-condition', 'argument', 'enum', 'object-key'),
  )
  .map(([name, where]) => {
    switch (where) {
      case 'field':
        return `{ me { id } ${name} }`;
      case 'alias':
        return `{ ${name}: me { id } }`;
      case 'operation':
        return `query ${name} { me { id } }`;
      case 'fragment':
        return `{ ...${name} } fragment ${name} on Query { me { id } }`;
      case 'variable':
        return `query($${name}: Int) { batches(limit: $${name}) { items { id } } }`;
      case 'directive':
        return `{ me @${name} { id } }`;
      case 'type-condition':
        return `{ ... on ${name} { me { id } } }`;
      case 'argument':
        return `{ batches(${name}: 1) { items { id } } }`;
      case 'enum':
        return `{ batches(filter: { status: ${name} }) { items { id } } }`;
      default:
        return `{ batches(filter: { ${name}: 1 }) { items { id } } }`;
    }
  });

/** Arguments holding huge, deep or wide literals, in every argument position. */
const literalBombs: fc.Arbitrary<string> = fc
  .tuple(hugeLiteral, fc.nat(5))
  .map(
    ([lit, where]) =>
      [
        `{ batches(filter: ${lit}) { items { id } } }`,
        `{ callRecords(filter: { startDate: "2000-01-01", endDate: "2100-01-01", agentIds: ${lit} }) { items { id } } }`,
        `mutation { createCallBatch(input: { metadata: ${lit}, contacts: [], interruption: true, scheduleDate: "2030-01-01", scheduleTime: "09:00", scheduleTimezone: "UTC", startMode: manual, useAlternateNumber: false }) { batchId } }`,
        `mutation { createCallBatch(input: { contacts: ${lit}, interruption: true, scheduleDate: "2030-01-01", scheduleTime: "09:00", scheduleTimezone: "UTC", startMode: manual, useAlternateNumber: false }) { batchId } }`,
        `query($j: JSON = ${lit}) { me { id } }`,
        `{ me @include(if: ${lit}) { id } }`,
      ][where],
  );

/** Many fields, arguments, directives, variables or comments: past the parser's token cap, or under it. */
const tokenFloods: fc.Arbitrary<string> = fc
  .tuple(fc.integer({ min: 100, max: 8_000 }), fc.nat(5))
  .map(
    ([n, where]) =>
      [
        `{ ${'__typename '.repeat(n)}}`,
        `{ me(${Array.from({ length: n }, (_, i) => `a${i}: 1`).join(', ')}) { id } }`,
        `{ __typename${' @skip(if: false)'.repeat(Math.min(n, 3_500))} }`,
        `query(${Array.from({ length: n }, (_, i) => `$v${i}: Int`).join(', ')}) { me { id } }`,
        `{ ${'a: me { id } '.repeat(Math.min(n, 4_000))}}`,
        `${'# comment\n'.repeat(n)}{ me { id } }`,
      ][where],
  );

const structuredDocument = fc.oneof(
  { weight: 6, arbitrary: realisticDocument },
  { weight: 3, arbitrary: deepChain },
  { weight: 2, arbitrary: aliasFlood },
  { weight: 4, arbitrary: fragmentBombDoc },
  { weight: 2, arbitrary: fragmentCycles },
  { weight: 2, arbitrary: multipleOperations },
  { weight: 1, arbitrary: longNames },
  { weight: 1, arbitrary: literalBombs },
  { weight: 1, arbitrary: tokenFloods },
);

const TOKENS = [
  '{',
  '}',
  '(',
  ')',
  '[',
  ']',
  '...',
  '@',
  '$',
  ':',
  '=',
  '!',
  '|',
  '&',
  '"',
  '"""',
  '#',
  '\n',
  ',',
  'query',
  'mutation',
  'subscription',
  'fragment',
  'on',
  'me',
  'id',
  'batches',
  '__typename',
  'Query',
  '1',
  '1.5e',
  '0x1F',
  'true',
  'null',
  '\u0000',
  '\ufeff',
  '\u2028',
  '\\u0000',
  'F0',
];

/** Garbage, and structured documents truncated or with bytes spliced in. */
const garbage: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.array(fc.constantFrom(...TOKENS), { maxLength: 300 }).map((ts) => ts.join(' ')),
  fc.tuple(structuredDocument, fc.nat()).map(([d, at]) => d.slice(0, at % (d.length + 1))),
  fc
    .tuple(structuredDocument, fc.nat(), fc.string({ unit: 'binary', minLength: 1, maxLength: 3 }))
    .map(([d, at, junk]) => d.slice(0, at % (d.length + 1)) + junk + d.slice(at % (d.length + 1))),
  fc
    .tuple(fc.integer({ min: 1, max: 20_000 }), fc.constantFrom('{', '[', '(', '"', '#', '...', 'a ', '{a ', '"""', '\\', '}', '$'))
    .map(([n, s]) => s.repeat(n)),
);

/** Operation names in a document, to ask for one of them. */
function operationNames(query: string): string[] {
  return [...query.matchAll(/(?:^|[^_0-9A-Za-z])(?:query|mutation|subscription)\s+([_A-Za-z][_0-9A-Za-z]*)/g)].map((m) => m[1].slice(0, 100));
}

const clip = (s: string) => (s.length > MAX_DOC_CHARS ? s.slice(0, MAX_DOC_CHARS) : s);

const documentCase: fc.Arbitrary<DocumentCase> = fc
  .tuple(fc.oneof({ weight: 6, arbitrary: structuredDocument }, { weight: 1, arbitrary: garbage }).map(clip), variablesArb, fc.nat(), fc.nat(5))
  .map(([query, variables, pick, how]) => {
    const names = operationNames(query);
    // Mostly one of the document's own operations by name; sometimes none, one it doesn't have, or ''.
    const operationName = how <= 3 && names.length ? names[pick % names.length] : how === 4 ? (pick % 2 ? 'Nope' : '') : undefined;
    return { query, variables, operationName };
  });

const requestCase = (doc: fc.Arbitrary<DocumentCase>): fc.Arbitrary<RequestCase> =>
  fc.record({
    doc,
    key: fc.constantFrom<KeyChoice>('valid', 'valid', 'valid', 'valid', 'none', 'wrong'),
    // Always a JSON answer asked for: with no Accept header a valid subscription is answered as a
    // stream (text/event-stream) that stays open by design.
    accept: fc.constantFrom('application/json', 'application/graphql-response+json', 'application/graphql-response+json, application/json;q=0.9'),
  });

/** Root fields that each cost the database round trips, with as little selected under them as possible. */
const DATABASE_FIELDS = [
  'results(batchId: "{{batch}}", limit: 1) { status }',
  'callRecords(filter: { startDate: "2000-01-01", endDate: "2100-01-01" }, pageSize: 1) { items { id } }',
  'calls(batchId: "{{batch}}", limit: 1) { items { id } }',
  'batches(limit: 1) { items { id } }',
  'batchesConnection(first: 1) { totalCount }',
  'callRecordsConnection(filter: { startDate: "2000-01-01", endDate: "2100-01-01" }, first: 1) { totalCount }',
  'batch(id: "{{batch}}") { callsConnection(first: 1) { totalCount } }',
  'calls(batchId: "{{batch}}", limit: 200) { items { id } }',
  'agents { id promptVersions { id } }',
  'agent(id: "{{agent}}") { id }',
  'didNumbers { id }',
  'webhookSecret { secret }',
];

/** Hand-picked worst cases, always run first. */
const EXAMPLES: RequestCase[] = [
  fragmentBomb(40, 4, 'Query', '__typename', 'spread'),
  fragmentBomb(40, 4, 'Account', 'id name ...F0', 'inline'),
  fragmentBomb(40, 3, 'Query', 'me { id } ...F0', 'directive'),
  fragmentBomb(40, 2, 'Query', 'a: me { name email } b: agents { id name }', 'untyped-inline').replace(/^[^\n]*\n/, 'query Q { me { id } }\n'),
  `query Q { me { id } }\nfragment A on Query { ${'a: me { id } '.repeat(1_000)} }`,
  `{ ${'a: __typename '.repeat(1_000)} }`,
  `query A { ${'nope(x: 1) '.repeat(800)} }\nquery B { me { id } }`,
  `{ ${Array.from({ length: 190 }, (_, i) => `a${i}: calls(batchId: "{{batch}}", limit: 200) { items { id } }`).join(' ')} }`,
  '{ me ' + '{ limits '.repeat(40) + '{ id }' + ' }'.repeat(40) + ' }',
  `{ batches(filter: ${'{ a: '.repeat(63)}1${' }'.repeat(63)}) { items { id } } }`,
  `mutation { createCallBatch(input: { metadata: ${'['.repeat(60)}1${']'.repeat(60)}, contacts: [], interruption: true, scheduleDate: "2030-01-01", scheduleTime: "09:00", scheduleTimezone: "UTC", startMode: manual, useAlternateNumber: false }) { batchId } }`,
  `query Cycle { ...F0 }\n${Array.from({ length: 12 }, (_, i) => `fragment F${i} on Query { __typename ${Array.from({ length: 12 }, (_, j) => `...F${j}`).join(' ')} }`).join('\n')}`,
  '{'.repeat(20_000),
].map((query) => ({ doc: { query, variables: { b: true } }, key: 'valid', accept: 'application/json' }));

// ---------------------------------------------------------------------------------------------
// Properties.
// ---------------------------------------------------------------------------------------------
interface Stats {
  firsts: number[];
  /** How many documents got each answer (status and first error code), to show what was reached. */
  outcomes: Map<string, number>;
  maxCheapest: number;
  slowest: string;
}

const newStats = (): Stats => ({ firsts: [], outcomes: new Map(), maxCheapest: 0, slowest: '' });

function outcomeOf(r: Answer): string {
  try {
    const body = JSON.parse(r.text) as { data?: unknown; errors?: { extensions?: { code?: string } }[] };
    return `${r.status} ${body.errors?.length ? String(body.errors[0].extensions?.code ?? 'no code') : 'data'}`;
  } catch {
    return `${r.status} no JSON`;
  }
}

function summary(label: string, s: Stats): { median: number; max: number } {
  const sorted = [...s.firsts].sort((x, y) => x - y);
  const median = sorted[Math.floor(sorted.length / 2)];
  const max = sorted[sorted.length - 1];
  console.log(
    `${label}: ${sorted.length} documents, median ${median.toFixed(1)} ms, p95 ${sorted[Math.floor(sorted.length * 0.95)].toFixed(1)} ms, ` +
      `max (first try) ${max.toFixed(1)} ms, max (cheapest try) ${s.maxCheapest.toFixed(1)} ms, slowest: ${s.slowest.slice(0, 100)}…\n  outcomes: ` +
      [...s.outcomes]
        .sort((x, y) => y[1] - x[1])
        .map(([k, n]) => `${k} ×${n}`)
        .join(', '),
  );
  return { median, max };
}

async function checkCase(c: RequestCase, method: 'GET' | 'POST', stats: Stats): Promise<void> {
  const { first, cheapestMs } = await measure(() => (method === 'GET' ? sendGet(c) : sendPost(c)));
  stats.firsts.push(first.ms);
  const outcome = outcomeOf(first);
  stats.outcomes.set(outcome, (stats.outcomes.get(outcome) ?? 0) + 1);
  if (cheapestMs > stats.maxCheapest) {
    stats.maxCheapest = cheapestMs;
    stats.slowest = JSON.stringify(c.doc.query);
  }
  expectGraphqlAnswer(c, first, method);
  expect(cheapestMs, `${method} took ${cheapestMs.toFixed(1)} ms (cheapest of 3): ${JSON.stringify(c.doc).slice(0, 600)}`).toBeLessThan(SLOW_MS);
}

describe('generated hostile documents', () => {
  it('POST: each is answered quickly with a GraphQL JSON body, never a 5xx', { timeout: 120_000 }, async () => {
    const stats = newStats();
    await fc.assert(
      fc.asyncProperty(requestCase(documentCase), (c) => checkCase(c, 'POST', stats)),
      { numRuns: 200, examples: EXAMPLES.map((e) => [e]) },
    );
    const { median } = summary('POST', stats);
    expect(median).toBeLessThan(MEDIAN_MS);
    await expectMeAnswers();
  });

  it('GET /graphql?query=…: the same, for documents that fit in a URL', { timeout: 120_000 }, async () => {
    const stats = newStats();
    const fitsUrl = documentCase.filter((d) => getUrl(d).length <= MAX_URL_CHARS);
    await fc.assert(
      fc.asyncProperty(requestCase(fitsUrl), (c) => checkCase(c, 'GET', stats)),
      { numRuns: 80, examples: EXAMPLES.filter((e) => getUrl(e.doc).length <= MAX_URL_CHARS).map((e) => [e]) },
    );
    const { median } = summary('GET', stats);
    expect(median).toBeLessThan(MEDIAN_MS);
    await expectMeAnswers();
  });

  it('as many aliases of one database-backed field as the cost limits allow: each document answered quickly', { timeout: 120_000 }, async () => {
    // Complexity prices objects fetched and the lookups limit prices database round trips, so one
    // cheap field repeated per alias is refused by the latter (quickly: within SLOW_MS). A document
    // the limits accept may read up to the whole complexity budget (24 pages of 200 calls = 4,800
    // rows), the most a single operation can cost: ~170 ms idle, ~250 ms beside two CPU burners on
    // PGlite, so it gets FULL_BUDGET_MS.
    const { GRAPHQL_MAX_BREADTH: breadth, GRAPHQL_MAX_COMPLEXITY: complexity } = t.deps.config;
    const report: string[] = [];
    for (const field of DATABASE_FIELDS) {
      const one = measureDocument(schema, parse(`{ a: ${withIds(field)} }`)).operation!;
      const n = Math.min(Math.floor(breadth / one.breadth), Math.floor(complexity / Math.max(1, one.complexity)));
      const query = `{ ${Array.from({ length: n }, (_, i) => `a${i}: ${field}`).join(' ')} }`;
      const c: RequestCase = { doc: { query }, key: 'valid', accept: 'application/json' };
      const { first, cheapestMs } = await measure(() => sendPost(c));
      expectGraphqlAnswer(c, first, 'POST');
      const outcome = outcomeOf(first);
      const bound = outcome === '200 data' ? FULL_BUDGET_MS : SLOW_MS;
      const ok = (outcome === '200 data' || outcome === '400 QUERY_TOO_COMPLEX') && cheapestMs < bound;
      report.push(`${ok ? 'ok  ' : 'SLOW'} ${n} × ${field} → ${outcome} in ${cheapestMs.toFixed(0)} ms (cheapest of ${first.ms >= SLOW_MS ? 3 : 1})`);
    }
    console.log(report.join('\n'));
    expect(report.filter((line) => !line.startsWith('ok'))).toEqual([]);
  });

  it('GET with malformed variables or extensions JSON is refused as a bad request, not a 500', { timeout: 30_000 }, async () => {
    // Yoga's URL-parameter parser JSON.parses `variables` and `extensions` unguarded (its
    // SyntaxError would be masked as a 500): the front door answers the client's malformed JSON 400.
    const query = encodeURIComponent('{ me { id } }');
    const answers: string[] = [];
    for (const params of [`query=${query}&variables=%7B`, `query=${query}&extensions=%7B`, `query=${query}&variables=%7B%22n%22%3A`]) {
      const c: RequestCase = { doc: { query: '' }, key: 'valid', accept: 'application/json' };
      const r = await timedFetch(new Request(`http://test.local/graphql?${params}`, { headers: headersFor(c) }));
      answers.push(`${params} → ${r.status} ${r.text}`);
    }
    expect(answers).toEqual(answers.map(() => expect.stringMatching(/ → 400 \{"errors":\[\{"message":"(?!Unexpected error\.)/)));
    await expectMeAnswers();
  });

  it('afterwards the API still answers with the key', async () => {
    await expectMeAnswers();
  });
});
