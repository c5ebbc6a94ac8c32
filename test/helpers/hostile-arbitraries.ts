// fast-check arbitraries for hostile API input: wrong JSON types, huge and odd strings (NUL, lone
// surrogates, BOM, bidi, combining marks), deep and prototype-polluting objects, and mutations of
// valid create bodies and query strings. Shared by the property suites in test/abuse.
import fc from 'fast-check';
import type { SeededAccount } from './app.ts';
import { validPhone } from './batch-requests.ts';

const ODD_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff',
  'x\ud83d',
  '\ude00y',
  '\ud83d\ude00',
  '\u202etxt.exe',
  '\ufeff{}',
  '\u2028\u2029',
  'Z\u0337\u031b\u0349a\u0334l\u0336g\u0338o',
  'null',
  'true',
  '0',
  '-1',
  '1e400',
  'NaN',
  '__proto__',
  'constructor',
  'prototype',
  '<script>alert(1)</script>',
  "'; DROP TABLE batches; --",
  '%00',
  '%ED%A0%80',
  '../../etc/passwd',
  '${jndi:ldap://x/a}',
  '{{7*7}}',
  '\\u0000',
  '\n\r\t\b\f',
  '𝕏'.repeat(50),
];

/** Large but bounded, so a case stays fast (the body cap itself is tested elsewhere). */
const hugeString = fc
  .integer({ min: 10_000, max: 150_000 })
  .chain((n) => fc.constantFrom('x', '\u00e9', '\ud83d\ude00', '\u0000').map((c) => c.repeat(n)));

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
  { weight: 4, arbitrary: fc.constantFrom(...ODD_STRINGS) },
  { weight: 1, arbitrary: hugeString },
);

const hostileKey = fc.oneof(
  { weight: 8, arbitrary: fc.string({ maxLength: 12 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype', '', '\u0000', '\ud800', 'Phone Number', 'phoneNumber', 'PHONE-NUMBER'),
  },
);

/** An object or array nested `depth` levels deep. */
function nested(depth: number, leaf: unknown, array: boolean): unknown {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = array ? [v] : { a: v };
  return v;
}

const deepValue = fc.tuple(fc.integer({ min: 5, max: 120 }), fc.boolean()).map(([d, arr]) => nested(d, 'leaf', arr));

/** Objects with own `__proto__` / `constructor` keys, as JSON.parse produces them. */
const pollutingObject = fc
  .constantFrom(
    '{"__proto__":{"polluted":true}}',
    '{"constructor":{"prototype":{"polluted":true}}}',
    '{"a":{"__proto__":{"isAdmin":true}}}',
    '{"prototype":1,"ok":2}',
  )
  .map((s) => JSON.parse(s) as unknown);

export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: hostileString },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 2, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.constantFrom(-0, 0.5, -1, 2 ** 31, 2 ** 53 + 2, 1e308, -1e308, 1e-320, 3.000000000000001) },
  { weight: 1, arbitrary: fc.double() },
  { weight: 1, arbitrary: fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.dictionary(hostileKey, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }) },
  { weight: 1, arbitrary: deepValue },
  { weight: 1, arbitrary: pollutingObject },
);

/** Metadata as a client might send it: mostly a dictionary, sometimes hostile. */
const metadataValue = fc.oneof(
  { weight: 3, arbitrary: fc.dictionary(hostileKey, fc.oneof(hostileString, fc.integer(), fc.boolean(), fc.constant(null)), { maxKeys: 5 }) },
  { weight: 1, arbitrary: deepValue },
  { weight: 1, arbitrary: pollutingObject },
  { weight: 1, arbitrary: hostileValue },
);

/** A field mutation: keep the valid value, drop the field, or replace it. */
type Mutation = { kind: 'keep' } | { kind: 'drop' } | { kind: 'set'; value: unknown };

function mutation(alternatives: fc.Arbitrary<unknown>, keepWeight = 12): fc.Arbitrary<Mutation> {
  return fc.oneof(
    { weight: keepWeight, arbitrary: fc.constant<Mutation>({ kind: 'keep' }) },
    { weight: 1, arbitrary: fc.constant<Mutation>({ kind: 'drop' }) },
    { weight: 2, arbitrary: hostileValue.map((value): Mutation => ({ kind: 'set', value })) },
    { weight: 2, arbitrary: alternatives.map((value): Mutation => ({ kind: 'set', value })) },
  );
}

function apply(target: Record<string, unknown>, mutations: Record<string, Mutation>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...target };
  for (const [key, m] of Object.entries(mutations)) {
    if (m.kind === 'drop') delete out[key];
    else if (m.kind === 'set') out[key] = m.value;
  }
  return out;
}

const phoneNumber = fc.oneof(
  fc.integer({ min: 0, max: 9999 }).map(validPhone),
  fc.stringMatching(/^\+?[0-9]{0,18}$/),
  fc.constantFrom('+12223333333', '+1-800-FLOWERS', '+44 20 7946 0958', '0044207946095', '+999999999999', '+1415555010\u0000'),
);

function contact(i: number, keep: number): fc.Arbitrary<unknown> {
  // Mostly dialable; sometimes a well-formed number the phone rules reject per contact (not a 422).
  const basePhone = fc.oneof(
    { weight: 5, arbitrary: fc.constant(validPhone(i)) },
    { weight: 1, arbitrary: fc.constantFrom('+12223333333', '+999999999999', '00000000', '+1415555010') },
  );
  return fc.oneof(
    {
      weight: 12,
      arbitrary: fc
        .record({
          phone: basePhone,
          contact_id: mutation(fc.oneof(hostileString, fc.constantFrom('c1', 'dup')), keep),
          name: mutation(hostileString, keep),
          phone_number: mutation(phoneNumber, keep),
          metadata: mutation(metadataValue, keep),
          status: mutation(fc.constantFrom('pending', 'queued', 'completed', 'PENDING'), keep),
          extra_field: mutation(hostileValue, keep * 2),
        })
        .map(({ phone, ...m }) =>
          apply({ contact_id: `c${i}`, name: `Contact ${i}`, phone_number: phone, metadata: { Segment: 'a', 'Phone Number': validPhone(i + 1) } }, m),
        ),
    },
    { weight: 1, arbitrary: hostileValue },
  );
}

const contacts = (keep: number) =>
  fc.oneof(
    { weight: 10, arbitrary: fc.integer({ min: 0, max: 6 }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => contact(i, keep)))) },
    {
      weight: 1,
      arbitrary: fc
        .integer({ min: 20, max: 120 })
        .map((n) => Array.from({ length: n }, (_, i) => ({ contact_id: `bulk${i}`, phone_number: validPhone(i) }))),
    },
    { weight: 1, arbitrary: hostileValue },
  );

/** A create body derived from a valid one, with some fields dropped or replaced by hostile values. */
export function createBody(a: SeededAccount, opts: { idempotencyKeys: fc.Arbitrary<unknown> }): fc.Arbitrary<unknown> {
  const valid = {
    agent_id: a.agent.id,
    version_id: a.version.id,
    interruption: true,
    use_alternate_number: false,
    start_mode: 'manual',
    schedule_date: '2030-01-15',
    schedule_time: '09:30',
    schedule_timezone: 'America/New_York (EST, UTC-05:00)',
  };
  // `keep`: how much likelier a field stays valid than it is dropped or replaced (per field).
  const fields = (keep: number) =>
    fc.record({
      agent_id: mutation(fc.constantFrom('agt-missing', a.agent.id.toUpperCase(), `${a.agent.id} `), keep),
      agent_name: mutation(fc.constantFrom(a.agent.name, 'Nobody', a.agent.name.toLowerCase()), keep),
      version_id: mutation(fc.constantFrom('pmt-missing', a.version.id), keep),
      version_name: mutation(fc.constantFrom(a.version.name, 'v404'), keep),
      voice: mutation(fc.constantFrom('alloy', 'verse', 'nope', ''), keep),
      did_number_id: mutation(fc.constantFrom(a.did.id, 'did_missing'), keep),
      interruption: mutation(fc.constantFrom(false, 'true', 1), keep),
      use_alternate_number: mutation(fc.constantFrom(true, 'false', 0), keep),
      start_mode: mutation(fc.constantFrom('immediate', 'scheduled', 'manual', 'Manual', 'later'), keep),
      schedule_date: mutation(fc.constantFrom('2030-02-30', '2030-1-5', '20300115', '2024-02-29', '1970-01-01', '9999-12-31'), keep),
      schedule_time: mutation(fc.constantFrom('24:00', '9:30', '23:59', '02:30', '12:60', '12:30:00'), keep),
      schedule_timezone: mutation(
        fc.constantFrom('UTC', 'Europe/Paris', 'Mars/Olympus', 'America/New_York (EST, UTC-05:00)', 'Etc/GMT+14', '(EST, UTC-05:00)'),
        keep,
      ),
      concurrency: mutation(fc.integer({ min: -5, max: 100_000 }), keep),
      callback_url: mutation(
        fc.constantFrom(
          'https://93.184.216.34/hook',
          'http://127.0.0.1/x',
          'https://[::1]/x',
          'ftp://93.184.216.34/',
          'not a url',
          'https://10.0.0.1:8443/',
        ),
        keep,
      ),
      deduplicate_by_phone: mutation(fc.constantFrom(true, false, 'yes'), keep),
      recording_enabled: mutation(fc.constantFrom(true, false, null), keep),
      max_duration_seconds_per_call: mutation(fc.integer({ min: -10, max: 100_000 }), keep),
      metadata: mutation(metadataValue, keep),
      contacts: fc.oneof(
        { weight: 12, arbitrary: contacts(keep).map((value): Mutation => ({ kind: 'set', value })) },
        { weight: 1, arbitrary: fc.constant<Mutation>({ kind: 'drop' }) },
      ),
      idempotency_key: opts.idempotencyKeys.map((value): Mutation => (value === undefined ? { kind: 'drop' } : { kind: 'set', value })),
      unknown_field: mutation(hostileValue, keep),
    });
  return fc.oneof(
    // Valid apart from what the contacts carry (successes must be common too).
    { weight: 4, arbitrary: fields(100_000).map((m) => apply(valid, m)) },
    // About one field broken.
    { weight: 6, arbitrary: fields(80).map((m) => apply(valid, m)) },
    // Many fields broken.
    { weight: 4, arbitrary: fields(6).map((m) => apply(valid, m)) },
    // Not an object at all.
    { weight: 1, arbitrary: hostileValue },
  );
}

/** How the body travels: JSON as is, or damaged on the wire (truncated, bad bytes, wrong type). */
export type Wire =
  | { kind: 'json' }
  | { kind: 'truncate'; at: number }
  | { kind: 'garbage'; at: number; bytes: number[] }
  | { kind: 'content-type'; type: string | null };

export const wire: fc.Arbitrary<Wire> = fc.oneof(
  { weight: 16, arbitrary: fc.constant<Wire>({ kind: 'json' }) },
  { weight: 1, arbitrary: fc.nat().map((at): Wire => ({ kind: 'truncate', at })) },
  {
    weight: 1,
    arbitrary: fc
      .record({ at: fc.nat(), bytes: fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 4 }) })
      .map((g): Wire => ({ kind: 'garbage', ...g })),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=b',
        'application/json; charset=latin1',
        'application/problem+json',
        '',
        null,
      )
      .map((type): Wire => ({ kind: 'content-type', type })),
  },
);

/** Encodes `body` for `w`: the raw bytes and the content type header to send (null: none). */
export function encode(body: unknown, w: Wire): { raw: Uint8Array; type: string | null } {
  const bytes = Buffer.from(JSON.stringify(body) ?? 'undefined', 'utf8');
  switch (w.kind) {
    case 'json':
      return { raw: bytes, type: 'application/json' };
    case 'truncate':
      return { raw: bytes.subarray(0, w.at % Math.max(1, bytes.length)), type: 'application/json' };
    case 'garbage': {
      const at = w.at % (bytes.length + 1);
      return { raw: Buffer.concat([bytes.subarray(0, at), Buffer.from(w.bytes), bytes.subarray(at)]), type: 'application/json' };
    }
    case 'content-type':
      return { raw: bytes, type: w.type };
  }
}

/** Query-string values for list endpoints: plausible, boundary and hostile. */
const queryValue = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('1', '0', '-1', '200', '201', '50', '1e2', '1.5', ' 7', '+3', '0x10', '99999999999999999999', 'abc', '') },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'pending',
      'active',
      'completed',
      'cancelled',
      'queued',
      'failed',
      'no_answer',
      'ready',
      'processing',
      'PENDING',
      'running',
      '2030-01-01',
      '2030-02-30',
      '2030-13-01',
      '2030-01-01T00:00:00Z',
      '2030-01-01T25:00:00Z',
      '2030-01-01 10:00',
      '2030-01-01T00:00:00+14:00',
      '1970-01-01',
      '0000-01-01',
      '9999-12-31',
      'agt-missing',
      'sched_missing',
      'interested',
      'yes',
    ),
  },
  { weight: 3, arbitrary: hostileString.filter((s) => s.length < 2_000) },
  { weight: 1, arbitrary: fc.integer().map(String) },
);

const queryName = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.constantFrom(
      'agent_id',
      'status',
      'created_at_from',
      'created_at_to',
      'limit',
      'page',
      'external_id',
      'outcome',
      'transcript_status',
      'start_date',
      'end_date',
      'page_size',
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 10 }) },
  { weight: 1, arbitrary: fc.constantFrom('__proto__', 'constructor', 'limit[]', 'page.x', '\u0000') },
);

/** A query string (without '?'), encoded the way a client would, or raw with broken escapes. */
export const queryString: fc.Arbitrary<string> = fc.oneof(
  { weight: 8, arbitrary: fc.array(fc.tuple(queryName, queryValue), { maxLength: 6 }).map((pairs) => new URLSearchParams(pairs).toString()) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '%',
      '%zz',
      'limit=%',
      'a=%ED%A0%80',
      'page=%00',
      '&&&',
      '=',
      'limit=1&limit=2',
      'agent_id[]=x',
      'start_date=2030-01-01&start_date=2030-01-02&end_date=2030-01-01',
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 30 }).map((s) => s.replace(/[#\s]/g, '')) },
);
