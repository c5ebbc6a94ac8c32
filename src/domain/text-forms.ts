// Value spellings shared by every surface.

/** The form `Date.prototype.toISOString` writes for years 0000-9999. */
const ISO_UTC_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

const daysInMonth = (year: number, month: number) =>
  month === 2 ? (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;

/** True when `s` is exactly what toISOString writes for the instant it names (no field out of range). */
function isIsoUtc(s: string): boolean {
  if (!ISO_UTC_MS.test(s)) return false;
  const year = Number(s.slice(0, 4));
  const month = Number(s.slice(5, 7));
  const day = Number(s.slice(8, 10));
  return (
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysInMonth(year, month) &&
    s[11] < '3' &&
    Number(s.slice(11, 13)) < 24 &&
    s[14] < '6' &&
    s[17] < '6'
  );
}

/** ISO 8601 UTC with milliseconds and `Z`, so a returned value works as a filter bound. */
export function isoUtc(d: Date | string | null | undefined): string | null {
  if (d == null) return null;
  if (d instanceof Date) return d.toISOString();
  // Mappers get GraphQL DateTimes, already in this form: parsing and writing them again (~1.5 µs
  // each) would give back the same characters.
  return isIsoUtc(d) ? d : new Date(d).toISOString();
}

/** `maxBatchSize` → `max_batch_size`: the REST and column spelling of a GraphQL/Prisma name. */
export const snakeCase = <S extends string>(name: S): SnakeCase<S> => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`) as SnakeCase<S>;

/** snakeCase's result as a type, for names known when compiling. */
export type SnakeCase<S extends string> = S extends `${infer H}${infer T}` ? `${H extends Lowercase<H> ? H : `_${Lowercase<H>}`}${SnakeCase<T>}` : S;
