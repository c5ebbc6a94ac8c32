// timestamptz values as the raw driver reads them. pg's own parser (postgres-date, a regular
// expression and several Number conversions) was ~5 % of a list page's CPU (bench:read, 200 rows,
// a few timestamps each); a server in UTC writes one fixed form, read here by position.
import pg from 'pg';

export const TIMESTAMPTZ_OID = 1184;
const pgParse = pg.types.getTypeParser(TIMESTAMPTZ_OID) as (text: string) => Date;

const digits = (s: string, from: number, to: number): number => {
  let n = 0;
  for (let i = from; i < to; i++) {
    const d = s.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return NaN;
    n = n * 10 + d;
  }
  return n;
};

/**
 * `2026-11-26 08:35:19.123456+00` (a server whose TimeZone is UTC): milliseconds truncated, as pg's
 * parser gives them. Anything else (another zone, BC, infinity, a five-digit year) goes to pg's parser.
 */
export function parseTimestamptz(text: string): Date {
  const n = text.length;
  const utc = n >= 22 && text[n - 3] === '+' && text[n - 2] === '0' && text[n - 1] === '0';
  if (
    utc &&
    text[4] === '-' &&
    text[7] === '-' &&
    text[10] === ' ' &&
    text[13] === ':' &&
    text[16] === ':' &&
    (n === 22 || (text[19] === '.' && n > 23 && n <= 29))
  ) {
    const ms = n === 22 ? 0 : digits((text.slice(20, n - 3) + '00').slice(0, 3), 0, 3);
    const t = Date.UTC(
      digits(text, 0, 4),
      digits(text, 5, 7) - 1,
      digits(text, 8, 10),
      digits(text, 11, 13),
      digits(text, 14, 16),
      digits(text, 17, 19),
      ms,
    );
    // Date.UTC maps years 0-99 to 1900-1999; those, and any non-digit, take pg's path.
    if (Number.isFinite(t) && text.charCodeAt(0) !== 48) return new Date(t);
  }
  return pgParse(text);
}
