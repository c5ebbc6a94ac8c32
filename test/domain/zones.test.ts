// Zone names: checked without building a formatter when the runtime lists them, and handed to
// luxon only as the zone they resolve to, since luxon keeps a zone and a formatter per name for good.
import { IANAZone } from 'luxon';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { canonicalZoneSpelling, isListedZone, isZone, luxonZone } from '../../src/domain/zones.ts';
import { spyOnFormatters } from '../helpers/intl-spy.ts';

afterEach(() => vi.restoreAllMocks());

/** The zone names Intl formatters are built for from now on. */
function formatterZones(): () => unknown[] {
  const built = spyOnFormatters();
  return () => built.mock.calls.map(([, options]) => options?.timeZone);
}

describe('isZone', () => {
  it('answers listed names from the list, and any other name as Intl does, once in whatever case', () => {
    const built = formatterZones();
    expect(['America/New_York', 'Asia/Tokyo', 'UTC'].map((z) => [isListedZone(z), isZone(z)])).toEqual([
      [true, true],
      [true, true],
      [true, true],
    ]);
    // Intl reads names in any case: so does the list.
    expect(['america/NEW_YORK', 'utc'].map((z) => [isListedZone(z), isZone(z)])).toEqual([
      [true, true],
      [true, true],
    ]);
    expect(built()).toEqual([]);
    expect(['US/Eastern', 'us/EASTERN', '+05:00', 'Mars/Base', 'MARS/base', 'x'.repeat(65)].map(isZone)).toEqual([
      true,
      true,
      true,
      false,
      false,
      false,
    ]);
    expect(built()).toEqual(['US/Eastern', '+05:00', 'Mars/Base']);
  });

  it('spells a listed zone as the list does, any other name as written', () => {
    expect(['america/new_york', 'US/Eastern'].map(canonicalZoneSpelling)).toEqual(['America/New_York', 'US/Eastern']);
  });
});

describe('luxonZone', () => {
  it('gives every spelling of a zone the one luxon zone the runtime resolves it to', () => {
    const newYork = IANAZone.create('America/New_York');
    expect(['America/New_York', 'america/NEW_YORK', 'US/Eastern', 'us/eastern'].map(luxonZone)).toEqual(Array(4).fill(newYork));
    expect(luxonZone('+0500')).toBe(luxonZone('+05:00'));
    expect(luxonZone('+0500').offset(Date.UTC(2026, 0, 1))).toBe(300);
  });

  it('hands luxon no more zones for endless spellings', () => {
    const made = vi.spyOn(IANAZone, 'create');
    // Every upper/lower-case spelling of us/eastern: 512 names.
    const spellings = Array.from({ length: 1024 }, (_, i) => [...'us/eastern'].map((c, k) => ((i >> k) & 1 ? c.toUpperCase() : c)).join(''));
    expect(new Set(spellings).size).toBe(512);
    const zones = new Set(spellings.map(luxonZone));
    expect(zones.size).toBe(1);
    expect(new Set(made.mock.calls.map(([name]) => name))).toEqual(new Set(['America/New_York']));
  });

  it('is invalid for a name that is no zone, and luxon does not keep it', () => {
    const made = vi.spyOn(IANAZone, 'create');
    expect(luxonZone('Mars/Base').isValid).toBe(false);
    expect(made).not.toHaveBeenCalled();
  });
});
