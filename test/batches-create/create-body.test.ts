// The create body as the REST facade reads it (types, lax coercion) and the domain then checks it
// (values): together, the contract's validation of POST/PUT /call-batches, detail for detail.
import { describe, expect, it } from 'vitest';
import type { CreateBatchInput } from '../../src/domain/create-batch-types.ts';
import { details, PUT, validBody, value } from '../helpers/create-body.ts';
import { BATCH_OPTION_NAMES, type BatchOptions } from '../../src/domain/batch-options.ts';

/** Every batch option as a body without them reads: none. */
const NO_OPTIONS = Object.fromEntries(BATCH_OPTION_NAMES.map((name) => [name, null])) as BatchOptions;

function contactDetails(contact: unknown): string[] {
  return details(validBody({ contacts: [contact] }));
}

describe('create body: success', () => {
  it('maps a minimal body to the input with defaults', () => {
    expect(value(validBody())).toEqual({
      agentId: 'agt-1',
      agentName: null,
      versionId: 'pmt-1',
      versionName: null,
      voice: null,
      didNumberId: null,
      interruption: true,
      useAlternateNumber: false,
      startMode: 'scheduled',
      scheduleDate: '2024-07-15',
      scheduleTime: '09:00',
      timezone: 'America/New_York',
      scheduledAt: new Date('2024-07-15T13:00:00.000Z'),
      concurrency: null,
      callbackUrl: null,
      deduplicateByPhone: false,
      recordingEnabled: null,
      maxDurationSecondsPerCall: null,
      metadata: {},
      contacts: [
        { contactId: 'c1', name: null, phoneNumber: '+14155552671', metadata: {}, metadataProblem: null, status: 'pending', timezone: null },
      ],
      idempotencyKey: null,
      retry: null,
      expiresAt: null,
      callingWindow: null,
      complianceProfiles: [],
      options: NO_OPTIONS,
    } satisfies CreateBatchInput);
  });

  it('maps every optional field', () => {
    const input = value(
      validBody({
        agent_id: undefined,
        agent_name: 'Sales bot',
        version_id: undefined,
        version_name: 'v2',
        voice: 'alloy',
        did_number_id: 'did-1',
        concurrency: 5,
        callback_url: 'https://example.com/hook',
        deduplicate_by_phone: true,
        recording_enabled: false,
        max_duration_seconds_per_call: 300,
        metadata: { campaign: 'spring' },
        contacts: [{ contact_id: 'c1', name: 'Ann', phone_number: '+14155552671', metadata: { 'First Name': 'Ann' }, status: 'queued' }],
      }),
    );
    expect(input).toMatchObject({
      agentId: null,
      agentName: 'Sales bot',
      versionId: null,
      versionName: 'v2',
      voice: 'alloy',
      didNumberId: 'did-1',
      concurrency: 5,
      callbackUrl: 'https://example.com/hook',
      deduplicateByPhone: true,
      recordingEnabled: false,
      maxDurationSecondsPerCall: 300,
      metadata: { campaign: 'spring' },
    });
    // Raw contacts keep the submitted phone and metadata keys; normalizeContacts normalises.
    expect(input.contacts).toEqual([
      {
        contactId: 'c1',
        name: 'Ann',
        phoneNumber: '+14155552671',
        metadata: { 'First Name': 'Ann' },
        metadataProblem: null,
        status: 'queued',
        timezone: null,
      },
    ]);
  });

  it('treats null on optional fields as absent', () => {
    const input = value(
      validBody({
        agent_name: null,
        version_name: null,
        voice: null,
        did_number_id: null,
        concurrency: null,
        callback_url: null,
        deduplicate_by_phone: null,
        recording_enabled: null,
        max_duration_seconds_per_call: null,
        metadata: null,
        contacts: [{ contact_id: 'c1', phone_number: '+14155552671', name: null, metadata: null, status: null }],
      }),
    );
    expect(input.deduplicateByPhone).toBe(false);
    expect(input.metadata).toEqual({});
    expect(input.contacts[0]).toEqual({
      contactId: 'c1',
      name: null,
      phoneNumber: '+14155552671',
      metadata: {},
      metadataProblem: null,
      status: 'pending',
      timezone: null,
    });
  });

  it('treats blank optional selector strings as absent', () => {
    const input = value(validBody({ agent_name: 'Bot', agent_id: '', voice: ' ', callback_url: '' }));
    expect(input).toMatchObject({ agentId: null, agentName: 'Bot', voice: null, callbackUrl: null });
  });

  it('ignores unknown fields', () => {
    expect(value(validBody({ surprise: { a: 1 }, priority: 'high' })).agentId).toBe('agt-1');
  });

  it('accepts a plain IANA zone and returns the plain name', () => {
    const input = value(validBody({ schedule_timezone: 'Asia/Kolkata', schedule_time: '12:00', schedule_date: '2024-06-01' }));
    expect(input.timezone).toBe('Asia/Kolkata');
    expect(input.scheduledAt.toISOString()).toBe('2024-06-01T06:30:00.000Z');
  });

  it('computes scheduledAt also for manual and immediate batches', () => {
    expect(value(validBody({ start_mode: 'manual' })).scheduledAt.toISOString()).toBe('2024-07-15T13:00:00.000Z');
    expect(value(validBody({ start_mode: 'immediate' })).startMode).toBe('immediate');
  });

  it('accepts a float with a zero fraction as an integer', () => {
    expect(value(validBody({ concurrency: 5.0 })).concurrency).toBe(5);
  });
});

describe('create body: did_number alias', () => {
  it('accepts did_number when did_number_id is absent', () => {
    expect(value(validBody({ did_number: 'did-legacy' })).didNumberId).toBe('did-legacy');
  });

  it('prefers did_number_id when both are given', () => {
    expect(value(validBody({ did_number: 'did-legacy', did_number_id: 'did-new' })).didNumberId).toBe('did-new');
  });

  it('validates did_number under its own path', () => {
    expect(details(validBody({ did_number: 7 }))).toEqual(['did_number: Input should be a valid string']);
  });
});

describe('create body: idempotency_key', () => {
  it('is required for PUT', () => {
    expect(details(validBody(), PUT)).toEqual(['idempotency_key: Field required']);
  });

  it('is returned for PUT', () => {
    expect(value(validBody({ idempotency_key: 'k-1' }), PUT).idempotencyKey).toBe('k-1');
  });

  it('must be 1 to 128 characters', () => {
    expect(details(validBody({ idempotency_key: '' }), PUT)).toEqual(['idempotency_key: String should have at least 1 character']);
    expect(value(validBody({ idempotency_key: 'k'.repeat(128) }), PUT).idempotencyKey).toHaveLength(128);
    expect(details(validBody({ idempotency_key: 'k'.repeat(129) }), PUT)).toEqual(['idempotency_key: String should have at most 128 characters']);
  });

  it('must be a string', () => {
    expect(details(validBody({ idempotency_key: 12 }), PUT)).toEqual(['idempotency_key: Input should be a valid string']);
    expect(details(validBody({ idempotency_key: null }), PUT)).toEqual(['idempotency_key: Input should be a valid string']);
  });

  it('is ignored for POST', () => {
    expect(value(validBody({ idempotency_key: 'k-1' })).idempotencyKey).toBeNull();
    expect(value(validBody({ idempotency_key: 12 })).idempotencyKey).toBeNull();
  });
});

describe('create body: body shape', () => {
  it.each([null, [], 'x', 42, true, undefined])('rejects a non-object body %j', (body) => {
    expect(details(body)).toEqual(['body: Input should be a valid dictionary']);
  });

  it('reports every missing required field in spec order', () => {
    expect(details({}, PUT)).toEqual([
      'agent_id: Value error, agent_id or agent_name is required',
      'version_id: Value error, version_id or version_name is required',
      'interruption: Field required',
      'use_alternate_number: Field required',
      'start_mode: Field required',
      'schedule_date: Field required',
      'schedule_time: Field required',
      'schedule_timezone: Field required',
      'contacts: Field required',
      'idempotency_key: Field required',
    ]);
  });

  it('accepts a null-prototype object and treats an undefined value as missing', () => {
    const body = Object.assign(Object.create(null) as object, validBody({ interruption: undefined }));
    expect(details(body)).toEqual(['interruption: Field required']);
  });
});

describe('create body: agent and version', () => {
  it('requires agent_id or agent_name', () => {
    expect(details(validBody({ agent_id: undefined }))).toEqual(['agent_id: Value error, agent_id or agent_name is required']);
    expect(details(validBody({ agent_id: null, agent_name: null }))).toEqual(['agent_id: Value error, agent_id or agent_name is required']);
  });

  it('requires version_id or version_name', () => {
    expect(details(validBody({ version_id: '' }))).toEqual(['version_id: Value error, version_id or version_name is required']);
  });

  it('reports a type error instead of the one-of error', () => {
    expect(details(validBody({ agent_id: 5 }))).toEqual(['agent_id: Input should be a valid string']);
    expect(details(validBody({ version_id: undefined, version_name: ['v'] }))).toEqual(['version_name: Input should be a valid string']);
  });

  it('accepts the name alone', () => {
    expect(value(validBody({ agent_id: undefined, agent_name: 'Bot' })).agentName).toBe('Bot');
  });
});

describe('create body: booleans', () => {
  it.each(['interruption', 'use_alternate_number'])('%s is required', (field) => {
    expect(details(validBody({ [field]: undefined }))).toEqual([`${field}: Field required`]);
  });

  it.each(['interruption', 'use_alternate_number', 'deduplicate_by_phone', 'recording_enabled'])(
    '%s accepts what the original (lax pydantic) validator accepts, and nothing else',
    (field) => {
      const key = (
        {
          interruption: 'interruption',
          use_alternate_number: 'useAlternateNumber',
          deduplicate_by_phone: 'deduplicateByPhone',
          recording_enabled: 'recordingEnabled',
        } as const
      )[field as 'interruption'];
      const read = (v: unknown) => value(validBody({ [field]: v }))[key];
      for (const yes of [true, 1, 'true', 'True', 'YES', 'y', 'on', 't', '1']) expect(read(yes)).toBe(true);
      for (const no of [false, 0, 'false', 'False', 'no', 'n', 'OFF', 'f', '0']) expect(read(no)).toBe(false);
      for (const bad of ['maybe', '', ' true', 2, -1, 0.5]) {
        expect(details(validBody({ [field]: bad }))).toEqual([`${field}: Input should be a valid boolean, unable to interpret input`]);
      }
      for (const bad of [{}, [], [true]]) {
        expect(details(validBody({ [field]: bad }))).toEqual([`${field}: Input should be a valid boolean`]);
      }
    },
  );

  it('a null on a required boolean is a type error, not "missing"', () => {
    expect(details(validBody({ interruption: null }))).toEqual(['interruption: Input should be a valid boolean']);
  });
});

describe('create body: start_mode', () => {
  it.each(['MANUAL', 'later', '', 3, null])('rejects %j', (mode) => {
    expect(details(validBody({ start_mode: mode }))).toEqual(["start_mode: Input should be 'manual', 'immediate' or 'scheduled'"]);
  });

  it('is required', () => {
    expect(details(validBody({ start_mode: undefined }))).toEqual(['start_mode: Field required']);
  });
});

describe('create body: schedule', () => {
  it.each(['2024-7-15', '2024-02-30', '15/07/2024', '2024-07-15T09:00:00Z'])('rejects date %j', (date) => {
    expect(details(validBody({ schedule_date: date }))).toEqual(['schedule_date: Value error, Invalid date, expected YYYY-MM-DD']);
  });

  it.each(['9:00', '24:00', '09:60', '09:00:00', '9am'])('rejects time %j', (time) => {
    expect(details(validBody({ schedule_time: time }))).toEqual(['schedule_time: Value error, Invalid time, expected HH:MM']);
  });

  it('rejects an unknown zone, naming the zone', () => {
    expect(details(validBody({ schedule_timezone: 'Mars/Base' }))).toEqual(["schedule_timezone: Value error, Unknown time zone 'Mars/Base'"]);
    expect(details(validBody({ schedule_timezone: 'Mars/Base (MBT, UTC+01:00)' }))).toEqual([
      "schedule_timezone: Value error, Unknown time zone 'Mars/Base'",
    ]);
    expect(details(validBody({ schedule_timezone: 'not a zone' }))).toEqual(["schedule_timezone: Value error, Unknown time zone 'not a zone'"]);
  });

  it('rejects non-string schedule fields', () => {
    expect(details(validBody({ schedule_date: 20240715, schedule_time: null, schedule_timezone: {} }))).toEqual([
      'schedule_date: Input should be a valid string',
      'schedule_time: Input should be a valid string',
      'schedule_timezone: Input should be a valid string',
    ]);
  });

  it('reports all three schedule problems together', () => {
    expect(details(validBody({ schedule_date: 'x', schedule_time: 'y', schedule_timezone: 'Mars/Base' }))).toHaveLength(3);
  });
});

describe('create body: integers', () => {
  it.each(['concurrency', 'max_duration_seconds_per_call'])('%s must be an integer >= 1', (field) => {
    expect(details(validBody({ [field]: 0 }))).toEqual([`${field}: Input should be greater than or equal to 1`]);
    expect(details(validBody({ [field]: -3 }))).toEqual([`${field}: Input should be greater than or equal to 1`]);
    // Lax like the original validator: digit strings, whole floats and booleans are integers.
    const key = field === 'concurrency' ? 'concurrency' : 'maxDurationSecondsPerCall';
    expect(value(validBody({ [field]: '5' }))[key]).toBe(5);
    expect(value(validBody({ [field]: ' 7 ' }))[key]).toBe(7);
    expect(value(validBody({ [field]: 5.0 }))[key]).toBe(5);
    expect(value(validBody({ [field]: true }))[key]).toBe(1);
    expect(details(validBody({ [field]: false }))).toEqual([`${field}: Input should be greater than or equal to 1`]);
    expect(details(validBody({ [field]: '5.5' }))).toEqual([`${field}: Input should be a valid integer, unable to parse string as an integer`]);
    expect(details(validBody({ [field]: 'five' }))).toEqual([`${field}: Input should be a valid integer, unable to parse string as an integer`]);
    expect(details(validBody({ [field]: '0' }))).toEqual([`${field}: Input should be greater than or equal to 1`]);
    expect(details(validBody({ [field]: [5] }))).toEqual([`${field}: Input should be a valid integer`]);
    expect(details(validBody({ [field]: 2.5 }))).toEqual([`${field}: Input should be a valid integer, got a number with a fractional part`]);
    expect(details(validBody({ [field]: 2 ** 31 }))).toEqual([`${field}: Input should be less than or equal to 2147483647`]);
  });
});

describe('create body: strings and objects', () => {
  it.each(['voice', 'did_number_id', 'callback_url', 'agent_name'])('%s must be a string', (field) => {
    expect(details(validBody({ [field]: 1 }))).toEqual([`${field}: Input should be a valid string`]);
  });

  it('metadata must be an object', () => {
    expect(details(validBody({ metadata: [] }))).toEqual(['metadata: Input should be a valid dictionary']);
    expect(details(validBody({ metadata: 'x' }))).toEqual(['metadata: Input should be a valid dictionary']);
  });

  it('guards every typed string against hostile length', () => {
    const long = 'a'.repeat(10_001);
    expect(details(validBody({ agent_id: long, voice: 'v'.repeat(256), callback_url: long }))).toEqual([
      'agent_id: String should have at most 255 characters',
      'voice: String should have at most 255 characters',
      'callback_url: String should have at most 10000 characters',
    ]);
    expect(
      details(validBody({ agent_id: undefined, agent_name: 'n'.repeat(256), version_name: 'n'.repeat(256), did_number_id: 'd'.repeat(256) })),
    ).toEqual([
      'agent_name: String should have at most 255 characters',
      'version_name: String should have at most 255 characters',
      'did_number_id: String should have at most 255 characters',
    ]);
    expect(details(validBody({ schedule_timezone: 't'.repeat(101) }))).toEqual(['schedule_timezone: String should have at most 100 characters']);
    expect(value(validBody({ voice: 'a'.repeat(255) })).voice).toHaveLength(255);
  });

  it('keeps callback_url without surrounding whitespace, as it is checked and sent to', () => {
    expect(value(validBody({ callback_url: '  https://hooks.example.com/in \n' })).callbackUrl).toBe('https://hooks.example.com/in');
  });

  it('counts characters, not UTF-16 units', () => {
    const emoji = '😀'.repeat(255); // 510 UTF-16 units
    expect(value(validBody({ voice: emoji })).voice).toBe(emoji);
  });

  it('limits batch metadata: keys, key length, value length, bytes', () => {
    const keys = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i]));
    expect(details(validBody({ metadata: keys }))).toEqual(['metadata: Value error, metadata has more than 50 keys']);
    expect(details(validBody({ metadata: { ['k'.repeat(101)]: 1 } }))).toEqual(['metadata: Value error, metadata key longer than 100 characters']);
    expect(details(validBody({ metadata: { deep: { list: ['x'.repeat(2_001)] } } }))).toEqual([
      'metadata: Value error, metadata value longer than 2000 characters',
    ]);
    const big = Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`k${i}`, 'é'.repeat(1_000)]));
    expect(details(validBody({ metadata: big }))).toEqual(['metadata: Value error, metadata is larger than 16384 bytes']);
    const fits = Object.fromEntries(Array.from({ length: 7 }, (_, i) => [`k${i}`, 'é'.repeat(1_000)]));
    expect(value(validBody({ metadata: fits })).metadata).toEqual(fits);
  });

  it('refuses metadata past its limits however large the input', () => {
    const list = new Array(5_000_000).fill(1);
    const text = 'x'.repeat(30_000_000);
    expect(details(validBody({ metadata: { list } }))).toEqual(['metadata: Value error, metadata is larger than 16384 bytes']);
    expect(details(validBody({ metadata: { text } }))).toEqual(['metadata: Value error, metadata value longer than 2000 characters']);
    // How long that takes: create-body.timed.test.ts.
  });

  it('rejects metadata nested deeper than 8 levels', () => {
    let deep: Record<string, unknown> = { leaf: 1 };
    for (let i = 1; i < 8; i++) deep = { d: deep };
    expect(value(validBody({ metadata: deep })).metadata).toEqual(deep);
    expect(details(validBody({ metadata: { d: deep } }))).toEqual(['metadata: Value error, metadata is nested too deeply (max depth 8)']);
  });

  it('drops prototype-polluting keys from batch metadata', () => {
    const body = JSON.parse(JSON.stringify(validBody()).replace(/}$/, ',"metadata":{"__proto__":{"x":1},"a":{"constructor":1,"b":2}}}')) as unknown;
    const input = value(body);
    expect(input.metadata).toEqual({ a: { b: 2 } });
    expect(Object.getPrototypeOf(input.metadata)).toBe(Object.prototype);
  });
});

describe('create body: contacts', () => {
  it('must be a non-empty list', () => {
    expect(details(validBody({ contacts: [] }))).toEqual(['contacts: List should have at least 1 item after validation, not 0']);
    expect(details(validBody({ contacts: {} }))).toEqual(['contacts: Input should be a valid list']);
    expect(details(validBody({ contacts: null }))).toEqual(['contacts: Input should be a valid list']);
  });

  it('each element must be an object', () => {
    expect(details(validBody({ contacts: ['+14155552671', { contact_id: 'c', phone_number: '+14155552671' }] }))).toEqual([
      'contacts.0: Input should be a valid dictionary',
    ]);
  });

  it('requires contact_id and phone_number', () => {
    expect(contactDetails({})).toEqual(['contacts.0.contact_id: Field required', 'contacts.0.phone_number: Field required']);
  });

  it('contact_id must be a non-empty string', () => {
    expect(contactDetails({ contact_id: '', phone_number: '+14155552671' })).toEqual([
      'contacts.0.contact_id: String should have at least 1 character',
    ]);
    expect(contactDetails({ contact_id: 42, phone_number: '+14155552671' })).toEqual(['contacts.0.contact_id: Input should be a valid string']);
  });

  it('phone_number must be a string of at least 8 characters', () => {
    expect(contactDetails({ contact_id: 'c', phone_number: '+1415' })).toEqual(['contacts.0.phone_number: String should have at least 8 characters']);
    expect(contactDetails({ contact_id: 'c', phone_number: 14155552671 })).toEqual(['contacts.0.phone_number: Input should be a valid string']);
  });

  it('does not judge phone validity at request level (that is a per-contact rejection)', () => {
    expect(value(validBody({ contacts: [{ contact_id: 'c', phone_number: 'garbage!!' }] })).contacts).toHaveLength(1);
  });

  it('checks name, metadata and status types', () => {
    expect(contactDetails({ contact_id: 'c', phone_number: '+14155552671', name: 3, metadata: [1], status: 'done' })).toEqual([
      'contacts.0.name: Input should be a valid string',
      'contacts.0.metadata: Input should be a valid dictionary',
      "contacts.0.status: Input should be 'pending' or 'queued'",
    ]);
  });

  it('rejects contact metadata nested too deeply', () => {
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 9; i++) deep = { d: deep };
    expect(contactDetails({ contact_id: 'c', phone_number: '+14155552671', metadata: deep })).toEqual([
      'contacts.0.metadata: Value error, metadata is nested too deeply (max depth 8)',
    ]);
  });

  it('guards contact strings against hostile length', () => {
    expect(contactDetails({ contact_id: 'c'.repeat(256), name: 'n'.repeat(256), phone_number: '1'.repeat(65) })).toEqual([
      'contacts.0.contact_id: String should have at most 255 characters',
      'contacts.0.name: String should have at most 255 characters',
      'contacts.0.phone_number: String should have at most 64 characters',
    ]);
  });

  it('leaves oversized contact metadata to a per-contact rejection, without copying it', () => {
    const body = validBody({
      contacts: [
        { contact_id: 'big', phone_number: '+14155552671', metadata: { note: 'x'.repeat(30_000_000) } },
        { contact_id: 'ok', phone_number: '+14155552672', metadata: { note: 'fine' } },
      ],
    });
    const [big, ok] = value(body).contacts;
    expect(big).toMatchObject({ metadata: {}, metadataProblem: 'metadata value longer than 2000 characters' });
    expect(ok).toMatchObject({ metadata: { note: 'fine' }, metadataProblem: null });
  });

  it('reports every contact problem with 0-based paths, in order', () => {
    const body = validBody({
      contacts: [
        { contact_id: 'ok', phone_number: '+14155552671' },
        { phone_number: '123' },
        { contact_id: 'c3', phone_number: '+14155552671', status: 'queued' },
        { contact_id: 'c4', phone_number: null },
      ],
    });
    expect(details(body)).toEqual([
      'contacts.1.contact_id: Field required',
      'contacts.1.phone_number: String should have at least 8 characters',
      'contacts.3.phone_number: Input should be a valid string',
    ]);
  });
});

describe('create body: ordering across fields', () => {
  it('follows the spec parameter table, then contacts, then idempotency_key', () => {
    const body = {
      agent_id: 1,
      version_id: 'pmt-1',
      voice: 2,
      did_number_id: 3,
      interruption: 'maybe',
      use_alternate_number: [],
      start_mode: 'soon',
      schedule_date: 'today',
      schedule_time: 'now',
      schedule_timezone: 'Mars/Base',
      concurrency: 0,
      callback_url: 4,
      deduplicate_by_phone: 'x',
      recording_enabled: {},
      max_duration_seconds_per_call: 'z',
      metadata: 5,
      contacts: [{ contact_id: 'c' }],
    };
    expect(details(body, PUT)).toEqual([
      'agent_id: Input should be a valid string',
      'voice: Input should be a valid string',
      'did_number_id: Input should be a valid string',
      'interruption: Input should be a valid boolean, unable to interpret input',
      'use_alternate_number: Input should be a valid boolean',
      "start_mode: Input should be 'manual', 'immediate' or 'scheduled'",
      'schedule_date: Value error, Invalid date, expected YYYY-MM-DD',
      'schedule_time: Value error, Invalid time, expected HH:MM',
      "schedule_timezone: Value error, Unknown time zone 'Mars/Base'",
      'concurrency: Input should be greater than or equal to 1',
      'callback_url: Input should be a valid string',
      'deduplicate_by_phone: Input should be a valid boolean, unable to interpret input',
      'recording_enabled: Input should be a valid boolean',
      'max_duration_seconds_per_call: Input should be a valid integer, unable to parse string as an integer',
      'metadata: Input should be a valid dictionary',
      'contacts.0.phone_number: Field required',
      'idempotency_key: Field required',
    ]);
  });
});
