// isoUtc gives back a string already in toISOString's form as it is (mappers get GraphQL
// DateTimes as text); every other string, and every Date, is spelled by toISOString itself.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { isoUtc } from '../../src/domain/text-forms.ts';

const viaDate = (s: string): string => {
  try {
    return new Date(s).toISOString();
  } catch {
    return 'RangeError';
  }
};
const ours = (s: string): string | null => {
  try {
    return isoUtc(s);
  } catch {
    return 'RangeError';
  }
};
const two = (max: number) => fc.integer({ min: 0, max }).map((n) => String(n).padStart(2, '0'));

describe('isoUtc', () => {
  it('answers exactly as toISOString for instants and for strings of that shape, out-of-range fields included', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 253402300799999 }), (ms) => {
        const d = new Date(ms);
        expect(isoUtc(d)).toBe(d.toISOString());
        expect(isoUtc(d.toISOString())).toBe(d.toISOString());
      }),
    );
    const shaped = fc
      .tuple(fc.integer({ min: 0, max: 9999 }), two(13), two(32), two(25), two(61), two(61))
      .map(([y, mo, d, h, mi, s]) => `${String(y).padStart(4, '0')}-${mo}-${d}T${h}:${mi}:${s}.123Z`);
    fc.assert(
      fc.property(shaped, (s) => {
        expect(ours(s)).toBe(viaDate(s));
      }),
      { numRuns: 5000 },
    );
  });

  it('normalises what toISOString would, and refuses what it would', () => {
    for (const s of [
      '2026-02-30T00:00:00.000Z',
      '2025-02-29T10:00:00.000Z',
      '2026-01-01T24:00:00.000Z',
      '2026-11-24T09:00:00Z',
      '2026-11-24T10:00:00.000+01:00',
    ]) {
      expect(isoUtc(s)).toBe(new Date(s).toISOString());
    }
    expect(isoUtc('2024-02-29T00:00:00.000Z')).toBe('2024-02-29T00:00:00.000Z');
    expect(() => isoUtc('2026-13-01T00:00:00.000Z')).toThrow(RangeError);
    expect(isoUtc(null)).toBeNull();
  });
});
