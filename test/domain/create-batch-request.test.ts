// The domain's value checks on a typed create request, surface-neutral: paths, not spellings.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { readContactList } from '../../src/domain/contact-list.ts';
import { checkCreateBatchRequest } from '../../src/domain/create-batch-request.ts';
import { CREATE_BATCH_FIELD_ORDER, MAX_UNLISTED_CONTACT_ZONES } from '../../src/domain/create-batch-fields.ts';
import { typedRequest } from '../helpers/create-body.ts';
import { formatIssue, inFieldOrder } from '../../src/domain/field-issue.ts';
import { spyOnFormatters } from '../helpers/intl-spy.ts';

const request = typedRequest;

describe('checkCreateBatchRequest', () => {
  it('accepts a typed request and fills the defaults', () => {
    const result = checkCreateBatchRequest(request({ agentName: '  ', callbackUrl: ' https://x.test/h ' }));
    expect(result.ok && result.value).toMatchObject({
      agentName: null,
      callbackUrl: 'https://x.test/h',
      deduplicateByPhone: false,
      recordingEnabled: null,
      timezone: 'America/New_York',
      scheduledAt: new Date('2024-07-15T13:00:00.000Z'),
      contacts: [{ contactId: 'c1', name: null, phoneNumber: '+14155552671', metadata: {}, metadataProblem: null, status: 'pending' }],
    });
  });

  it('reports value problems at domain paths, in the contract field order', () => {
    const result = checkCreateBatchRequest(
      request({ contacts: [{ contactId: '', phoneNumber: '1' }], scheduleTime: '25:00', concurrency: 0, agentId: null }),
      { maxCallDurationSeconds: 60 },
    );
    expect(result.ok).toBe(false);
    expect(!result.ok && result.issues).toEqual([
      { path: ['agentId'], reason: 'Value error, agent_id or agent_name is required' },
      { path: ['scheduleTime'], reason: 'Value error, Invalid time, expected HH:MM' },
      { path: ['concurrency'], reason: 'Input should be greater than or equal to 1' },
      { path: ['contacts', 0, 'contactId'], reason: 'String should have at least 1 character' },
      { path: ['contacts', 0, 'phoneNumber'], reason: 'String should have at least 8 characters' },
    ]);
  });

  it('caps max duration at the account limit', () => {
    const result = checkCreateBatchRequest(request({ maxDurationSecondsPerCall: 61 }), { maxCallDurationSeconds: 60 });
    expect(!result.ok && result.issues).toEqual([{ path: ['maxDurationSecondsPerCall'], reason: 'Input should be less than or equal to 60' }]);
  });

  it('never accepts a draft with a field its surface already refused, even when every value passes', () => {
    const { interruption: _i, ...draft } = request();
    expect(checkCreateBatchRequest(draft)).toEqual({ ok: false, issues: [] });
    expect(checkCreateBatchRequest({ ...request(), contacts: [undefined] })).toEqual({ ok: false, issues: [] });
  });
});

describe('field issues', () => {
  it('inFieldOrder sorts by field, then list index, then the item field', () => {
    const issues = [
      { path: ['contacts', 2, 'contactId'], reason: 'c' },
      { path: ['contacts', 1, 'status'], reason: 'b' },
      { path: ['contacts', 1, 'contactId'], reason: 'a' },
      { path: ['interruption'], reason: 'first' },
      { path: ['idempotencyKey'], reason: 'last' },
      { path: ['contacts', 1], reason: 'item' },
    ];
    expect(inFieldOrder(issues, CREATE_BATCH_FIELD_ORDER).map((i) => i.reason)).toEqual(['first', 'item', 'a', 'b', 'c', 'last']);
  });

  it('formatIssue spells each field with the given function and names the root', () => {
    expect(formatIssue({ path: ['contacts', 0, 'phoneNumber'], reason: 'r' })).toBe('contacts.0.phoneNumber: r');
    expect(formatIssue({ path: ['contacts', 0, 'phoneNumber'], reason: 'r' }, (f) => f.toUpperCase())).toBe('CONTACTS.0.PHONENUMBER: r');
    expect(formatIssue({ path: [], reason: 'r' }, undefined, 'body')).toBe('body: r');
  });
});

describe('readContactList', () => {
  it('types each contact or reports where it is not', () => {
    const reading = readContactList(
      [{ contactId: 'a', phoneNumber: '+1', name: null, status: 'queued', extra: 1 }, 7, { contactId: 1, status: 'done' }],
      ['contacts'],
    );
    expect(reading.contacts).toEqual([
      { contactId: 'a', name: null, phoneNumber: '+1', metadata: undefined, status: 'queued', timezone: null, consent: null },
      undefined,
      expect.anything(),
    ]);
    expect(reading.issues).toEqual([
      { path: ['contacts', 1], reason: 'Input should be a valid dictionary' },
      { path: ['contacts', 2, 'contactId'], reason: 'Input should be a valid string' },
      { path: ['contacts', 2, 'phoneNumber'], reason: 'Field required' },
      { path: ['contacts', 2, 'status'], reason: "Input should be 'pending' or 'queued'" },
    ]);
  });

  it('a value that is not a list is one issue', () => {
    expect(readContactList({}, ['contacts']).issues).toEqual([{ path: ['contacts'], reason: 'Input should be a valid list' }]);
  });
});

// Checking a zone name outside the runtime's list builds an Intl formatter (~75 µs): 100k contacts
// each naming a zone took seconds of the event loop, so a request checks each distinct name once,
// and only so many distinct ones.
describe("contacts' own time zones", () => {
  afterEach(() => vi.restoreAllMocks());
  // The zone names Intl formatters were built for, but the batch's own schedule_timezone.
  const looked = (spy: { mock: { calls: unknown[][] } }) =>
    spy.mock.calls.map(([, options]) => (options as Intl.DateTimeFormatOptions | undefined)?.timeZone).filter((zone) => zone !== 'America/New_York');
  const withZones = (zones: string[]) =>
    request({ contacts: zones.map((timezone, i) => ({ contactId: `c${i}`, phoneNumber: '+14155552671', timezone })) });

  it('a listed zone (in any case) costs no formatter, and an unlisted name one however often and in whatever case it is named', () => {
    const lookups = spyOnFormatters();
    const result = checkCreateBatchRequest(
      withZones([...Array(500).fill('America/Chicago'), ...Array(500).fill('US/Eastern'), '+05:30', 'utc', 'america/chicago', 'us/EASTERN']),
    );
    expect(result.ok && result.value.contacts.map((c) => c.timezone).slice(498, 502)).toEqual([
      'America/Chicago',
      'America/Chicago',
      'US/Eastern',
      'US/Eastern',
    ]);
    expect(looked(lookups).sort()).toEqual(['+05:30', 'US/Eastern']);
  });

  it('unknown names are refused each; past the distinct unlisted names a request may name, the rest are refused unlooked', () => {
    const lookups = spyOnFormatters();
    const zones = ['Mars/Base', 'MARS/BASE', ...Array.from({ length: MAX_UNLISTED_CONTACT_ZONES + 50 }, (_, i) => `Nowhere/X${i}`)];
    const result = checkCreateBatchRequest(withZones(zones));
    expect(looked(lookups)).toHaveLength(MAX_UNLISTED_CONTACT_ZONES);
    const reasons = !result.ok ? result.issues.map((i) => [i.path.join('.'), i.reason]) : [];
    expect(reasons.slice(0, 2)).toEqual([
      ['contacts.0.timezone', "Value error, Unknown time zone 'Mars/Base'"],
      ['contacts.1.timezone', "Value error, Unknown time zone 'MARS/BASE'"],
    ]);
    expect(reasons).toHaveLength(zones.length);
    expect(reasons[MAX_UNLISTED_CONTACT_ZONES + 1]).toEqual([
      `contacts.${MAX_UNLISTED_CONTACT_ZONES + 1}.timezone`,
      `Value error, more than ${MAX_UNLISTED_CONTACT_ZONES} distinct time zones that are not canonical IANA names (such as US/Eastern or +05:00)`,
    ]);
  });
});
