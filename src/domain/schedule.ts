import { DateTime } from 'luxon';
import { canonicalZoneSpelling, isZone, luxonZone } from './zones.ts';

export const DAY_MS = 86_400_000;
const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIME_RE = /^([01]\d|2[0-3]):([0-5]\d)$/;
// 'Area/City (ABBR, UTC±hh:mm)' or a plain name. The parenthesised part is informational:
// its abbreviation and offset depend on the season the client rendered it in, so it is not
// checked against the zone.
const LABEL_RE = /^\s*([^\s()]+)\s*(?:\([^()]*\))?\s*$/;

/** The zone name part of a label, valid or not; null when the label has no recognisable shape. */
export function extractZoneName(label: string): string | null {
  return LABEL_RE.exec(label)?.[1] ?? null;
}

/**
 * The plain zone name of a valid label, in the zone database's spelling: zone names are matched
 * case-insensitively (`america/new_york` is New York), and the batch then reports
 * `America/New_York`. Names outside the canonical list (aliases such as `US/Eastern`) are kept
 * as written.
 */
export function parseTimezoneLabel(label: string): string | null {
  const name = extractZoneName(label);
  if (name === null || !isZone(name)) return null;
  return canonicalZoneSpelling(name);
}

/**
 * Dates the service stores are in years 1000-9999. Before 1000 they are refused, not stored:
 * JavaScript's Date.UTC and Date parsing turn years 0-99 into 1900-1999 or 1950-2049 (PGlite's
 * driver read 0050 back as 1950), and no batch is scheduled then.
 */
export const MIN_STORED_YEAR = 1000;
export const STORED_YEARS_REASON = `Invalid date, expected a year from ${MIN_STORED_YEAR} to 9999`;
export const isStoredYear = (year: number): boolean => year >= MIN_STORED_YEAR && year <= 9999;

export function isValidScheduleDate(value: string): boolean {
  const match = DATE_RE.exec(value);
  if (!match) return false;
  const [year, month, day] = match.slice(1).map(Number);
  return year >= 1 && DateTime.fromObject({ year, month, day }, { zone: 'utc' }).isValid;
}

export function isValidScheduleTime(value: string): boolean {
  return TIME_RE.test(value);
}

/**
 * Wall-clock date and time in `zone` -> UTC instant. Inside a DST gap the time moves forward
 * (luxon's behaviour); in a fold the earlier of the two instants is taken, which luxon does not
 * do consistently by itself (it picks the later one for America/New_York).
 */
export function computeScheduledAt(date: string, time: string, zone: string): Date {
  // A calling window's openings call this twice a day per zone near a DST change: the zone is
  // luxon's resolution of the name (luxonZone), not a fresh check of it (~75 µs).
  const tz = luxonZone(zone);
  if (!isValidScheduleDate(date) || !isValidScheduleTime(time) || !tz.isValid) {
    throw new RangeError(`Invalid schedule: ${date} ${time} ${zone}`);
  }
  const [year, month, day] = date.split('-').map(Number);
  const [hour, minute] = time.split(':').map(Number);
  const fields = { year, month, day, hour, minute };
  const wallAsUtc = DateTime.fromObject(fields, { zone: 'utc' }).toMillis();
  // The offsets in force a day before and after cover both sides of any transition that day.
  const offsets = new Set([tz.offset(wallAsUtc - DAY_MS), tz.offset(wallAsUtc), tz.offset(wallAsUtc + DAY_MS)]);
  const instants = [...offsets]
    .map((offset) => wallAsUtc - offset * 60_000)
    .filter((instant) => instant + tz.offset(instant) * 60_000 === wallAsUtc);
  if (instants.length > 0) return new Date(Math.min(...instants));
  return DateTime.fromObject(fields, { zone: tz }).toJSDate();
}
