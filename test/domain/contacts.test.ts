import { describe, expect, it } from 'vitest';
import { normalizeContacts, normalizePhone } from '../../src/domain/contacts.ts';
import type { RawContact } from '../../src/domain/create-batch-types.ts';

function contact(contactId: string, phoneNumber: string, extra: Partial<RawContact> = {}): RawContact {
  return { contactId, name: null, phoneNumber, metadata: {}, metadataProblem: null, status: 'pending', timezone: null, ...extra };
}

describe('normalizePhone', () => {
  it.each([
    ['+14155552671', '+14155552671'],
    ['14155552671', '+14155552671'],
    ['+1 (415) 555-2671', '+14155552671'],
    ['1.415.555.2671', '+14155552671'],
    ['  +44 7911 123456  ', '+447911123456'],
    ['+44\u00a07911\u00a0123456', '+447911123456'],
    ['33 6 12 34 56 78', '+33612345678'],
  ])('%j -> %s', (raw, expected) => {
    expect(normalizePhone(raw)).toBe(expected);
  });

  it.each([
    '',
    '+',
    '4155552671', // no country code: read as +415…, not a valid number
    '+12223333333', // NANP area code 222 does not exist
    '+1415555267', // too short for NANP
    '+999123456789', // unassigned country code
    '+44 7911 123456 ext. 5', // letters are not tolerated
    '+1-800-FLOWERS',
    '++14155552671',
    '1+4155552671',
    '+1234567890123456', // over 15 digits
  ])('rejects %j', (raw) => {
    expect(normalizePhone(raw)).toBeNull();
  });

  it('returns null for a non-string at runtime', () => {
    expect(normalizePhone(14155552671 as unknown as string)).toBeNull();
  });
});

describe('normalizeContacts', () => {
  it('accepts valid contacts with E.164 numbers and 1-based indexes', () => {
    const { accepted, rejected } = normalizeContacts([contact('a', '+1 415 555 2671', { name: 'Ann' }), contact('b', '447911123456')], {
      deduplicateByPhone: false,
    });
    expect(rejected).toEqual([]);
    expect(accepted).toEqual([
      { index: 1, externalId: 'a', name: 'Ann', phoneNumber: '+14155552671', alternatePhone: null, metadata: {} },
      { index: 2, externalId: 'b', name: null, phoneNumber: '+447911123456', alternatePhone: null, metadata: {} },
    ]);
  });

  it('rejects invalid numbers with the 1-based index and keeps the rest', () => {
    const { accepted, rejected } = normalizeContacts([contact('a', '+14155552671'), contact('b', '+12223333333'), contact('c', '+447911123456')], {
      deduplicateByPhone: false,
    });
    expect(accepted.map((c) => c.externalId)).toEqual(['a', 'c']);
    expect(rejected).toEqual([{ index: 2, external_id: 'b', field: 'phone_number', message: 'Invalid phone number' }]);
  });

  it('keeps duplicate numbers when deduplication is off', () => {
    const { accepted, rejected } = normalizeContacts([contact('a', '+14155552671'), contact('b', '1 (415) 555-2671')], { deduplicateByPhone: false });
    expect(accepted).toHaveLength(2);
    expect(rejected).toEqual([]);
  });

  it('rejects later duplicates (compared in E.164) naming the first contact', () => {
    const { accepted, rejected } = normalizeContacts(
      [contact('a', '+14155552671'), contact('b', '1 (415) 555-2671'), contact('c', '+447911123456'), contact('d', '+1.415.555.2671')],
      { deduplicateByPhone: true },
    );
    expect(accepted.map((c) => c.externalId)).toEqual(['a', 'c']);
    expect(rejected).toEqual([
      { index: 2, external_id: 'b', field: 'phone_number', message: 'Duplicate phone number (same as contact a)' },
      { index: 4, external_id: 'd', field: 'phone_number', message: 'Duplicate phone number (same as contact a)' },
    ]);
  });

  it('ranges taken in order, sharing the first owners, give what the whole list gives', () => {
    const list = [
      contact('a', '+14155552671'),
      contact('bad', 'nope'),
      contact('b', '1 (415) 555-2671'),
      contact('c', '+447911123456'),
      contact('d', '+44 7911 123456'),
      contact('e', '+1.415.555.2671'),
      contact('f', '+12025550143'),
    ];
    const whole = normalizeContacts(list, { deduplicateByPhone: true });
    for (const size of [1, 2, 3, 4, 7]) {
      const firstOwnerOfPhone = new Map<string, string>();
      const parts = { accepted: [] as typeof whole.accepted, rejected: [] as typeof whole.rejected };
      for (let from = 0; from < list.length; from += size) {
        const part = normalizeContacts(list, { deduplicateByPhone: true, from, to: from + size, firstOwnerOfPhone });
        parts.accepted.push(...part.accepted);
        parts.rejected.push(...part.rejected);
      }
      expect({ size, ...parts }).toEqual({ size, ...whole });
    }
    expect(whole.rejected.map((r) => r.index)).toEqual([2, 3, 5, 6]);
  });

  it('keeps the contract\'s "Invalid phone number" and hints at +1 for a number valid with it', () => {
    const { rejected } = normalizeContacts(
      [
        contact('national', '4155550182'),
        contact('spaced', '(415) 555-0183'),
        contact('plus', '+4155550182'),
        contact('junk', 'not a number'),
        contact('short', '12345678'),
      ],
      { deduplicateByPhone: false },
    );
    expect(rejected.map((r) => [r.external_id, r.message])).toEqual([
      ['national', 'Invalid phone number (no country code? +14155550182 is valid: write numbers as +<country code><number>)'],
      ['spaced', 'Invalid phone number (no country code? +14155550183 is valid: write numbers as +<country code><number>)'],
      // Written with its +, a number meant what it says: no guess.
      ['plus', 'Invalid phone number'],
      ['junk', 'Invalid phone number'],
      ['short', 'Invalid phone number'],
    ]);
  });

  it('does not let an invalid contact claim a number for deduplication', () => {
    const { accepted, rejected } = normalizeContacts([contact('bad', 'not a number'), contact('a', '+14155552671'), contact('b', '+14155552671')], {
      deduplicateByPhone: true,
    });
    expect(accepted.map((c) => c.externalId)).toEqual(['a']);
    expect(rejected.map((r) => [r.index, r.message])).toEqual([
      [1, 'Invalid phone number'],
      [3, 'Duplicate phone number (same as contact a)'],
    ]);
  });

  it('rejects a contact whose metadata is too large, without letting it claim its number', () => {
    const { accepted, rejected } = normalizeContacts(
      [contact('big', '+14155552671', { metadataProblem: 'metadata is larger than 8192 bytes' }), contact('a', '+14155552671')],
      { deduplicateByPhone: true },
    );
    expect(accepted.map((c) => c.externalId)).toEqual(['a']);
    expect(rejected).toEqual([{ index: 1, external_id: 'big', field: 'metadata', message: 'Metadata is larger than 8192 bytes' }]);
  });

  it('normalises metadata keys', () => {
    const { accepted } = normalizeContacts([contact('a', '+14155552671', { metadata: { 'First Name': 'Ann', accountNumber: 7 } })], {
      deduplicateByPhone: false,
    });
    expect(accepted[0].metadata).toEqual({ first_name: 'Ann', account_number: 7 });
  });

  it.each(['alternate_number', 'Alternate Phone', 'alternatePhoneNumber', 'ALT-PHONE-NUMBER'])(
    'reads the alternate number from metadata key %j',
    (key) => {
      const { accepted } = normalizeContacts([contact('a', '+14155552671', { metadata: { [key]: '44 7911 123456' } })], {
        deduplicateByPhone: false,
      });
      expect(accepted[0].alternatePhone).toBe('+447911123456');
    },
  );

  it('accepts an alternate number given as a JSON number', () => {
    const { accepted } = normalizeContacts([contact('a', '+14155552671', { metadata: { alt_phone_number: 447911123456 } })], {
      deduplicateByPhone: false,
    });
    expect(accepted[0].alternatePhone).toBe('+447911123456');
  });

  it('an invalid alternate number is just null, not a rejection', () => {
    const { accepted, rejected } = normalizeContacts([contact('a', '+14155552671', { metadata: { alternate_number: 'nope' } })], {
      deduplicateByPhone: false,
    });
    expect(rejected).toEqual([]);
    expect(accepted[0].alternatePhone).toBeNull();
    expect(accepted[0].metadata).toEqual({ alternate_number: 'nope' });
  });

  it('skips an invalid alternate key in favour of a later valid one', () => {
    const { accepted } = normalizeContacts(
      [contact('a', '+14155552671', { metadata: { alternate_number: 'x', alt_phone_number: '+33612345678' } })],
      { deduplicateByPhone: false },
    );
    expect(accepted[0].alternatePhone).toBe('+33612345678');
  });

  it('ignores an alternate number equal to the primary one', () => {
    const { accepted } = normalizeContacts([contact('a', '+14155552671', { metadata: { alternate_phone: '1-415-555-2671' } })], {
      deduplicateByPhone: false,
    });
    expect(accepted[0].alternatePhone).toBeNull();
  });

  it('handles an empty list', () => {
    expect(normalizeContacts([], { deduplicateByPhone: true })).toEqual({ accepted: [], rejected: [] });
  });
});
