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
  return wallClockInstant(date, time, zone, 'shift', 'earlier');
}

/**
 * Like computeScheduledAt, but in a fold the later instant: the start of a calling window. The wall
 * clock reads a time in the repeated hour twice; a window opened at the first pass would run through
 * the second pass's earlier readings (01:30-02:00 New York open at 01:10 EST), outside its hours.
 */
export function wallClockStart(date: string, time: string, zone: string): Date {
  return wallClockInstant(date, time, zone, 'shift', 'later');
}

/**
 * Like computeScheduledAt, but a time inside a DST gap is the instant the clocks jump past it (the
 * first instant at which they read that time or later), not the gap's length after it: the end of
 * a calling window (calling-window.ts). Costs the same offset lookups outside a gap.
 */
export function wallClockEnd(date: string, time: string, zone: string): Date {
  return wallClockInstant(date, time, zone, 'jump', 'earlier');
}

function wallClockInstant(date: string, time: string, zone: string, inGap: 'shift' | 'jump', inFold: 'earlier' | 'later'): Date {
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
  const instants = [...offsets].map((offset) => wallAsUtc - offset * 60_000).filter((instant) => instant + tz.offset(instant) * 60_000 === wallAsUtc);
  if (instants.length > 0) return new Date(inFold === 'earlier' ? Math.min(...instants) : Math.max(...instants));
  const shifted = DateTime.fromObject(fields, { zone: tz }).toJSDate();
  if (inGap === 'shift') return shifted;
  // The jump lies between the wall time read at the offset after it and at the one before it
  // (shifted); zones change on whole minutes, so bisect to the minute.
  const offsetAfter = tz.offset(shifted.getTime());
  let before = wallAsUtc - offsetAfter * 60_000;
  let after = shifted.getTime();
  while (after - before > 60_000) {
    const mid = before + Math.floor((after - before) / 120_000) * 60_000;
    if (tz.offset(mid) === offsetAfter) after = mid;
    else before = mid;
  }
  return new Date(after);
}
