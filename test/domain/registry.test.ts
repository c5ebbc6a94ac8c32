// The registry's line formats, its bit layout, the create's refusals, and consent records: pure.
import { describe, expect, it } from 'vitest';
import {
  BLOCK_BYTES,
  hasBit,
  parseReassignedLine,
  parseRegistryNumber,
  reassignedKey,
  REASSIGNED_CONTACT_MESSAGE,
  REGISTRY_CONTACT_MESSAGE,
  setBit,
  withoutRegistryRefused,
} from '../../src/domain/registry.ts';
import { checkConsent, MAX_CONSENT_TEXT_LENGTH } from '../../src/domain/consent.ts';
import type { NormalizedContact } from '../../src/domain/contacts.ts';

describe('registry lines', () => {
  it('reads the download format and the usual ways of writing a NANP number', () => {
    for (const line of [
      '2015550123',
      '2015550123\r',
      '201,5550123',
      '201-555-0123',
      '(201) 555-0123',
      '+12015550123',
      '12015550123',
      ' 2015550123 ',
    ]) {
      expect(parseRegistryNumber(line), line).toBe(2015550123);
    }
  });

  it('refuses what is not one US-shaped number', () => {
    for (const line of [
      '',
      '201555012',
      '201555012345',
      '22015550123',
      '1015550123',
      '2011550123',
      '201555012x',
      '2015550123 ext 5',
      '+442015550123',
      '2015550123+',
    ]) {
      expect(parseRegistryNumber(line), line).toBeNull();
    }
  });

  it('reads reassigned results as number and day', () => {
    expect(parseReassignedLine('2015550123,2026-01-31')).toEqual({ number: 2015550123, reassignedOn: '2026-01-31' });
    expect(parseReassignedLine('+1 201 555 0123, 2026-01-31 ')).toEqual({ number: 2015550123, reassignedOn: '2026-01-31' });
    for (const line of ['2015550123', '2015550123,2026-02-30', '2015550123,31/01/2026', 'x,2026-01-31'])
      expect(parseReassignedLine(line), line).toBeNull();
  });

  it("sets the bit PostgreSQL reads as bit n of a bit(10000): the first byte's high bit is 0", () => {
    const block = new Uint8Array(BLOCK_BYTES);
    setBit(block, 0);
    setBit(block, 9_999);
    expect(block[0]).toBe(0x80);
    expect(block[BLOCK_BYTES - 1]).toBe(0x01);
    expect([hasBit(block, 0), hasBit(block, 1), hasBit(block, 9_999)]).toEqual([true, false, true]);
  });
});

describe("the create's refusals", () => {
  const at = new Date('2026-01-10T12:00:00Z');
  const contact = (index: number, phone: string, o: Partial<NormalizedContact> = {}): NormalizedContact => ({
    index,
    externalId: `c${index}`,
    name: null,
    phoneNumber: phone,
    alternatePhone: null,
    metadata: {},
    ...o,
  });
  const consent = { source: 'web_form', at, text: null, reference: null };
  const verdicts = { listed: new Set(['+12015550001', '+12015550009']), reassigned: new Set([reassignedKey('+12015550002', at.toISOString())]) };

  it('refuses listed numbers, spares consent only when exempt, refuses reassignments after consent always, drops refused alternates', () => {
    const accepted = [
      contact(1, '+12015550001'),
      contact(2, '+12015550001', { consent }),
      contact(3, '+12015550002', { consent }),
      contact(4, '+12015550002'),
      contact(5, '+12015550003', { alternatePhone: '+12015550009' }),
    ];
    const strict = withoutRegistryRefused(accepted, [], verdicts, false);
    expect(strict.rejected).toEqual([
      { index: 1, external_id: 'c1', field: 'phone_number', message: REGISTRY_CONTACT_MESSAGE },
      { index: 2, external_id: 'c2', field: 'phone_number', message: REGISTRY_CONTACT_MESSAGE },
      { index: 3, external_id: 'c3', field: 'phone_number', message: REASSIGNED_CONTACT_MESSAGE },
    ]);
    expect(strict.accepted.map((c) => [c.index, c.alternatePhone])).toEqual([
      [4, null],
      [5, null],
    ]);
    const exempt = withoutRegistryRefused(accepted, [], verdicts, true);
    expect(exempt.rejected.map((r) => r.index)).toEqual([1, 3]);
  });
});

describe('consent records', () => {
  const now = new Date('2026-05-01T00:00:00Z');
  it('keeps the record, the time as an instant', () => {
    expect(checkConsent({ source: 'web_form', timestamp: '2026-01-10T13:00:00+01:00', text: 'yes', reference: '' }, now)).toEqual({
      ok: true,
      value: { source: 'web_form', at: new Date('2026-01-10T12:00:00Z'), text: 'yes', reference: null },
    });
  });
  it('refuses a missing source, a label that could be a formula, a time without a zone or in the future, and long text', () => {
    const issues = (v: Parameters<typeof checkConsent>[0]) => {
      const r = checkConsent(v, now);
      return r.ok ? [] : r.issues.map((i) => `${i.path.join('.')}: ${i.reason}`);
    };
    expect(issues({ timestamp: '2026-01-10T12:00:00Z' })).toEqual(['consent.source: Field required']);
    expect(issues({ source: '@SUM(1)', timestamp: '2026-01-10T12:00:00' })[0]).toMatch(/^consent\.source: Value error/);
    expect(issues({ source: 'x', timestamp: '2026-01-10T12:00:00' })).toEqual([
      'consent.timestamp: Value error, Invalid datetime, expected ISO 8601 with a time zone (e.g. 2026-03-01T14:30:00Z)',
    ]);
    expect(issues({ source: 'x', timestamp: '2026-05-01T00:06:00Z' })).toEqual([
      'consent.timestamp: Value error, consent cannot be given in the future',
    ]);
    expect(issues({ source: 'x', timestamp: '2026-05-01T00:04:00Z' })).toEqual([]);
    expect(issues({ source: 'x', timestamp: '2026-01-01T00:00:00Z', text: 'é'.repeat(MAX_CONSENT_TEXT_LENGTH + 1) })).toEqual([
      `consent.text: String should have at most ${MAX_CONSENT_TEXT_LENGTH} characters`,
    ]);
  });
});
