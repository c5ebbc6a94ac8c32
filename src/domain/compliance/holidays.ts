// Holiday calendars for no-call days, computed per year (no list to keep up to date by hand).
// `us_federal`: the legal public holidays of 5 U.S.C. § 6103(a). A holiday on a Saturday is
// observed the Friday before, one on a Sunday the Monday after (Executive Order 11582); for a
// no-call day the most restrictive reading keeps both the date itself and the observed date.
import { DAY_MS } from '../schedule.ts';

export const HOLIDAY_CALENDARS = ['us_federal'] as const;
export type HolidayCalendar = (typeof HOLIDAY_CALENDARS)[number];

const iso = (t: number) => new Date(t).toISOString().slice(0, 10);

/** The `n`-th (1-based; -1: last) `weekday` (0 = Sunday) of `month` (1-12) of `year`, as a UTC midnight. */
function nthWeekday(year: number, month: number, weekday: number, n: number): number {
  if (n > 0) {
    const first = Date.UTC(year, month - 1, 1);
    const shift = (weekday - new Date(first).getUTCDay() + 7) % 7;
    return first + (shift + (n - 1) * 7) * DAY_MS;
  }
  const last = Date.UTC(year, month, 0);
  return last - ((new Date(last).getUTCDay() - weekday + 7) % 7) * DAY_MS;
}

/** The federal holidays of `year` and their observed dates, as `YYYY-MM-DD`, sorted. */
export function usFederalHolidays(year: number): string[] {
  const fixed = [
    [1, 1], // New Year's Day
    [6, 19], // Juneteenth National Independence Day
    [7, 4], // Independence Day
    [11, 11], // Veterans Day
    [12, 25], // Christmas Day
  ].map(([m, d]) => Date.UTC(year, m - 1, d));
  const floating = [
    nthWeekday(year, 1, 1, 3), // Birthday of Martin Luther King, Jr.: third Monday of January
    nthWeekday(year, 2, 1, 3), // Washington's Birthday: third Monday of February
    nthWeekday(year, 5, 1, -1), // Memorial Day: last Monday of May
    nthWeekday(year, 9, 1, 1), // Labor Day: first Monday of September
    nthWeekday(year, 10, 1, 2), // Columbus Day: second Monday of October
    nthWeekday(year, 11, 4, 4), // Thanksgiving Day: fourth Thursday of November
  ];
  const days = new Set<string>();
  for (const t of [...fixed, ...floating]) {
    days.add(iso(t));
    const wd = new Date(t).getUTCDay();
    if (wd === 6) days.add(iso(t - DAY_MS));
    if (wd === 0) days.add(iso(t + DAY_MS));
  }
  return [...days].sort();
}

const cache = new Map<string, ReadonlySet<string>>();

/** Whether the local date `YYYY-MM-DD` is a no-call day of `calendar` (years memoised). */
export function isHoliday(calendar: HolidayCalendar, localDate: string): boolean {
  const year = Number(localDate.slice(0, 4));
  // A Saturday 1 January is observed on 31 December of the year before.
  const key = `${calendar} ${year}`;
  let days = cache.get(key);
  if (!days) {
    days = new Set([...usFederalHolidays(year), ...usFederalHolidays(year + 1)]);
    if (cache.size > 64) cache.clear();
    cache.set(key, days);
  }
  return days.has(localDate);
}
