// fastE164 must give libphonenumber's verdict whenever it gives one (it may defer with undefined).
import fc from 'fast-check';
import { getCountries, getCountryCallingCode, getExampleNumber, parsePhoneNumberFromString } from 'libphonenumber-js';
import examples from 'libphonenumber-js/mobile/examples';
import { describe, expect, it } from 'vitest';
import { normalizePhone } from '../../src/domain/contacts.ts';
import { fastE164 } from '../../src/domain/phone-rules.ts';

const reference = (digits: string) => {
  const parsed = parsePhoneNumberFromString(`+${digits}`);
  return parsed?.isValid() ? parsed.number : null;
};

/** Deterministic digits so a failure is reproducible. */
function lcg(seed: number) {
  let s = seed;
  return (n: number) => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s % n;
  };
}

describe('fastE164 agrees with libphonenumber', () => {
  it('on every country: random numbers and near-misses of its example number', () => {
    const r = lcg(7);
    const digits = (n: number) => Array.from({ length: n }, () => r(10)).join('');
    let decided = 0;
    let valid = 0;
    const disagreements: string[] = [];
    for (const country of getCountries()) {
      const cc = getCountryCallingCode(country);
      const example = getExampleNumber(country, examples)?.nationalNumber ?? '';
      for (let k = 0; k < 60; k++) {
        const samples = [cc + digits(2 + r(14 - cc.length))];
        if (example) {
          const keep = r(example.length + 1);
          const varied = example.slice(0, keep) + digits(Math.max(0, example.length - keep + r(3) - 1));
          samples.push(cc + varied, cc + '0' + varied, cc + '1' + varied);
        }
        for (const d of samples.filter((s) => s.length <= 15)) {
          const fast = fastE164(d);
          if (fast === undefined) continue;
          decided++;
          if (fast !== null) valid++;
          if (fast !== reference(d)) disagreements.push(`${d}: fast ${fast}, libphonenumber ${reference(d)}`);
        }
      }
    }
    expect(disagreements).toEqual([]);
    // The comparison means something only if both verdicts occur often.
    expect(decided).toBeGreaterThan(20_000);
    expect(valid).toBeGreaterThan(5_000);
  });

  it('on arbitrary digit strings (property)', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9]{1,15}$/), (d) => {
        const fast = fastE164(d);
        if (fast !== undefined) expect(fast).toBe(reference(d));
      }),
      { numRuns: 5_000 },
    );
  });

  it('on NANP numbers across every area code', () => {
    const r = lcg(11);
    for (let area = 200; area <= 999; area++) {
      const d = `1${area}${200 + r(800)}${String(r(10_000)).padStart(4, '0')}`;
      const fast = fastE164(d);
      if (fast !== undefined) expect(fast, d).toBe(reference(d));
    }
  });

  it('normalizePhone still accepts and rejects as before', () => {
    expect(normalizePhone('+1 (415) 555-2671')).toBe('+14155552671');
    expect(normalizePhone('+12223333333')).toBeNull();
    expect(normalizePhone('+44 7911 123456')).toBe('+447911123456');
    expect(normalizePhone('+999123456789')).toBeNull();
    expect(normalizePhone('+8001234 5678')).toBe(reference('80012345678')); // non-geographic: libphonenumber decides
  });
});
