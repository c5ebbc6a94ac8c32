// The raw driver's timestamptz parser gives the same Date as pg's own for every form PostgreSQL
// writes: the fixed UTC form it reads by position, and the rest it hands back to pg's parser.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import pg from 'pg';
import { parseTimestamptz } from '../../src/db/timestamp-parser.ts';

// Nothing in this file registers the project's parser, so this is still pg's.
const pgParse = pg.types.getTypeParser(1184) as (text: string) => Date;

/** pg gives a Date, ±Infinity for ±infinity, or null for text it can't read. */
const same = (text: string) => {
  const ours: unknown = parseTimestamptz(text);
  const theirs: unknown = pgParse(text);
  if (!(ours instanceof Date) || !(theirs instanceof Date)) return Object.is(ours, theirs);
  return Object.is(ours.getTime(), theirs.getTime());
};

/** How PostgreSQL prints a timestamptz in UTC: microseconds, trailing zeros trimmed, `+00`. */
function pgText(ms: number, micros: number): string {
  const d = new Date(ms);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  const fraction = String((d.getUTCMilliseconds() * 1000 + micros) / 1e6).slice(1);
  return `${p(d.getUTCFullYear(), 4)}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}${fraction === '' ? '' : fraction}+00`;
}

describe('parseTimestamptz', () => {
  it('is not pg’s parser already (the reference above is the one it replaces)', () => {
    expect(pgParse).not.toBe(parseTimestamptz);
  });

  it('agrees with pg on UTC timestamps from year 1000 to 9999, with and without fractions', () => {
    const min = Date.UTC(1000, 0, 1);
    const max = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
    fc.assert(
      fc.property(fc.integer({ min, max }), fc.integer({ min: 0, max: 999 }), fc.boolean(), (ms, micros, whole) => {
        const text = pgText(whole ? ms - (ms % 1000) : ms, whole ? 0 : micros);
        expect(same(text), text).toBe(true);
      }),
      { numRuns: 5_000 },
    );
  });

  it.each([
    '2026-11-26 08:35:19+00',
    '2026-11-26 08:35:19.5+00',
    '2026-11-26 08:35:19.029+00',
    '2026-11-26 08:35:19.123456+00',
    '2026-11-26 08:35:19.999999+00',
    '2024-02-29 23:59:59.9+00',
  ])('reads %s by position, as pg does', (text) => {
    expect(parseTimestamptz(text).getTime()).toBe(pgParse(text).getTime());
  });

  it.each([
    '2026-11-26 08:35:19.123+05:30',
    '2026-11-26 08:35:19-03',
    '1883-11-18 12:03:58+00:03:58',
    '0044-03-15 12:00:00+00 BC',
    '0099-01-01 00:00:00+00',
    '10000-01-01 00:00:00+00',
    'infinity',
    '-infinity',
    '2026-1x-26 08:35:19+00',
  ])('hands %s to pg’s parser', (text) => {
    expect(same(text)).toBe(true);
  });
});
