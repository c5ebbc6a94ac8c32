// Calling windows (issue 15): the local hours and days in which a call may be placed, judged in a
// fixed zone or in each recipient's own zones. Pure: the create checks, the worker's retries and the
// sweep that moves calls to their next window share it.
//
// A call is placeable while every window that applies to it (its batch's, the account's enforced
// one) is open in every zone it is judged in: a number that maps to several zones is called only
// when the window is open in all of them. Openings are computed as UTC intervals per zone and day
// and intersected, so DST changes fall where the zone database puts them.
import { DateTime, type IANAZone } from 'luxon';
import { computeScheduledAt, DAY_MS, isValidScheduleTime, wallClockEnd, wallClockStart } from './schedule.ts';
import { fixedOffsetReason, isZone, luxonZone } from './zones.ts';
import { literalReason } from './field-issue.ts';
import { zonesOfKey } from './number-zones.ts';

export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];
/** `timezone` value meaning "each recipient's own zone". */
export const RECIPIENT_ZONE = 'recipient';
/** How far ahead an opening is looked for; a window that does not open within it never will. */
export const OPENING_HORIZON_DAYS = 15;
/** disconnect_reason of a waiting call whose windows no longer open at all (the enforced window changed). */
export const NO_WINDOW_DISCONNECT_REASON = 'no_calling_window';

export interface CallingWindow {
  /** Local `HH:MM`, inclusive. */
  start: string;
  /** Local `HH:MM`, exclusive; after `start` (no overnight windows); `24:00` is the end of the day. */
  end: string;
  days: readonly Weekday[];
  /** An IANA zone, or `recipient`. */
  timezone: string;
}

export interface WindowOpening {
  /** When the call may be placed: the opening, or `from` if the window is already open. */
  opensAt: Date;
  closesAt: Date;
}

/** [opens, closes) in epoch milliseconds. */
export type Interval = [number, number];

/** The one end that is not a time of day: the next local midnight, so a window can run to the end of its day. */
export const END_OF_DAY = '24:00';
const isWindowEnd = (value: string) => value === END_OF_DAY || isValidScheduleTime(value);

export function usesRecipientZone(windows: readonly CallingWindow[]): boolean {
  return windows.some((w) => w.timezone === RECIPIENT_ZONE);
}

/** The recipient zones a call's windows are judged in, from its stored zone key (`calls.timezone`). */
export function recipientZonesOf(windows: readonly CallingWindow[], timezoneKey: string | null): string[] {
  return usesRecipientZone(windows) && timezoneKey ? zonesOfKey(timezoneKey) : [];
}

/** Problems of a window's values as `[field, reason]`, in field order; none for a valid one. */
export function callingWindowProblems(w: {
  start?: string;
  end?: string;
  days?: readonly string[] | null;
  timezone?: string;
}): Array<[string, string]> {
  const problems: Array<[string, string]> = [];
  const startOk = w.start !== undefined && isValidScheduleTime(w.start);
  const endOk = w.end !== undefined && isWindowEnd(w.end);
  if (!startOk) problems.push(['start', 'Value error, Invalid time, expected HH:MM']);
  if (!endOk) problems.push(['end', 'Value error, Invalid time, expected HH:MM']);
  else if (startOk && w.end! <= w.start!) problems.push(['end', 'Value error, end must be after start (no overnight windows)']);
  if (w.days != null) {
    if (w.days.length === 0) problems.push(['days', 'List should have at least 1 item after validation, not 0']);
    else if (w.days.length > WEEKDAYS.length * 2)
      problems.push(['days', `List should have at most ${WEEKDAYS.length * 2} items after validation, not ${w.days.length}`]);
    else
      w.days.forEach((d, i) => {
        if (!(WEEKDAYS as readonly string[]).includes(d)) problems.push([`days.${i}`, literalReason(WEEKDAYS)]);
      });
  }
  if (w.timezone !== undefined && w.timezone !== RECIPIENT_ZONE) {
    if (!isZone(w.timezone)) problems.push(['timezone', `Value error, Unknown time zone '${w.timezone}'; give an IANA zone or '${RECIPIENT_ZONE}'`]);
    else {
      // A stored window keeps being read (storedWindow): dropping it would call more, not less.
      const fixed = fixedOffsetReason(w.timezone, { allowUtc: true });
      if (fixed) problems.push(['timezone', fixed]);
    }
  }
  return problems;
}

/** The window with its days in week order, each once (absent days: every day). */
export function normalizeWindow(w: { start: string; end: string; days?: readonly string[] | null; timezone: string }): CallingWindow {
  const days = w.days == null ? WEEKDAYS : WEEKDAYS.filter((d) => w.days!.includes(d));
  return { start: w.start, end: w.end, days, timezone: w.timezone };
}

/**
 * The first time from `from` on at which every window is open in every zone that applies, and when
 * that opening ends; null if there is none within the horizon (the windows never meet for these zones).
 * `recipientZones` are the zones of the call's number (or the contact's own zone).
 */
export function nextOpening(
  windows: readonly CallingWindow[],
  recipientZones: readonly string[],
  from: Date,
  cache?: ZoneIntervals,
): WindowOpening | null {
  return firstOpening(openIntervals(windows, recipientZones, from, cache), from);
}

/**
 * Each window's intervals by zone, for one set of windows and one `from`: a create judges its
 * contacts in their numbers' zones and their own, so a zone recurs in many zone sets.
 */
export type ZoneIntervals = Map<string, Interval[]>;

/**
 * When every window is open in every zone that applies, as sorted UTC intervals from the local day
 * before `from` through the horizon; null without windows (always open).
 */
export function openIntervals(
  windows: readonly CallingWindow[],
  recipientZones: readonly string[],
  from: Date,
  cache?: ZoneIntervals,
): Interval[] | null {
  let open: Interval[] | null = null;
  for (const [i, w] of windows.entries()) {
    const zones = w.timezone === RECIPIENT_ZONE ? recipientZones : [w.timezone];
    for (const zone of new Set(zones)) {
      const cacheKey = `${i} ${zone}`;
      const intervals = cache?.get(cacheKey) ?? windowIntervals(w, zone, from);
      cache?.set(cacheKey, intervals);
      open = open === null ? intervals : intersect(open, intervals);
      if (open.length === 0) return open;
    }
  }
  return open;
}

/** The opening at or after `from` among `open` (openIntervals); null when they hold none. */
export function firstOpening(open: readonly Interval[] | null, from: Date): WindowOpening | null {
  const t = from.getTime();
  if (open === null) return { opensAt: from, closesAt: new Date(8.64e15) };
  const first = open.find(([, end]) => end > t);
  return first ? { opensAt: new Date(Math.max(first[0], t)), closesAt: new Date(first[1]) } : null;
}

/** Whether the windows are open at `at`. */
export function isOpenAt(windows: readonly CallingWindow[], recipientZones: readonly string[], at: Date): boolean {
  const o = nextOpening(windows, recipientZones, at);
  return o !== null && o.opensAt.getTime() === at.getTime();
}

/**
 * The window's open intervals in UTC, from the local day before `from` through the horizon;
 * `skipDay` drops the local dates (`YYYY-MM-DD`) it returns true for (no-call days).
 */
export function windowIntervals(w: CallingWindow, zone: string, from: Date, skipDay?: (localDate: string) => boolean): Interval[] {
  const tz = luxonZone(zone);
  const before = DateTime.fromJSDate(from, { zone: tz }).startOf('day').minus({ days: 1 });
  // Local dates as UTC midnights: consecutive days and their weekdays need no zone.
  const firstDay = Date.UTC(before.year, before.month - 1, before.day);
  const days = OPENING_HORIZON_DAYS + 2;
  const offset = steadyOffset(tz, firstDay, days);
  const out: Interval[] = [];
  for (let i = 0; i < days; i++) {
    const day = firstDay + i * DAY_MS;
    if (!w.days.includes(WEEKDAYS[(new Date(day).getUTCDay() + 6) % 7])) continue;
    if (skipDay?.(new Date(day).toISOString().slice(0, 10))) continue;
    const [opens, closes] =
      offset === null ? changingDayInterval(day, w, zone) : [w.start, w.end].map((time) => day + (minutesOf(time) - offset) * 60_000);
    // A DST change can shrink a short window to nothing.
    if (closes > opens) out.push([opens, closes]);
  }
  return out;
}

const minutesOf = (time: string) => Number(time.slice(0, 2)) * 60 + Number(time.slice(3, 5));

/**
 * The window on a local date whose offset may change. A start the clocks skip (spring forward)
 * moves on by the gap: 02:30 in New York on the day of the change opens at 03:30 EDT. A start they
 * repeat (fall back) opens at its second pass, since opened at the first, 01:30-02:00 would be open
 * at 01:10 EST, which reads before its start; unless the end is in the repeated hour too
 * (01:00-01:30), when the first pass holds the whole window.
 */
function changingDayInterval(day: number, w: CallingWindow, zone: string): Interval {
  const closes = windowEnd(day, w.end, zone);
  const [date, hhmm] = w.start === END_OF_DAY ? [day + DAY_MS, '00:00'] : [day, w.start];
  const isoDate = new Date(date).toISOString().slice(0, 10);
  const opens = wallClockStart(isoDate, hhmm, zone).getTime();
  if (closes > opens) return [opens, closes];
  return [computeScheduledAt(isoDate, hhmm, zone).getTime(), closes];
}

/**
 * A window's end. One the clocks skip is the instant they jump past it, not the gap's length after
 * it: 01:00-02:30 in New York on the day of the change closes at 03:00 EDT, when its clocks first
 * read past 02:30 (moved on like a start, it ran to 03:30 EDT, half an hour of calls at a local
 * time after the window's end).
 */
function windowEnd(day: number, time: string, zone: string): number {
  const [date, hhmm] = time === END_OF_DAY ? [day + DAY_MS, '00:00'] : [day, time];
  return wallClockEnd(new Date(date).toISOString().slice(0, 10), hhmm, zone).getTime();
}

/**
 * The zone's UTC offset in minutes when it is the same at every midnight UTC from a day before
 * `firstDay` to a day past its `days` days, else null. No zone changes its offset twice within a
 * day, so the offset then holds for every window instant of those days, and the instants are
 * plain sums: what wallClockStart finds, without its ~4 offset lookups (Intl) an instant.
 */
function steadyOffset(tz: IANAZone, firstDay: number, days: number): number | null {
  const offset = tz.offset(firstDay - DAY_MS);
  for (let i = 0; i <= days + 1; i++) if (tz.offset(firstDay + i * DAY_MS) !== offset) return null;
  return offset;
}

/** The intersection of two sorted lists of disjoint intervals. */
export function intersect(a: Interval[], b: Interval[]): Interval[] {
  const out: Interval[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const start = Math.max(a[i][0], b[j][0]);
    const end = Math.min(a[i][1], b[j][1]);
    if (start < end) out.push([start, end]);
    if (a[i][1] < b[j][1]) i++;
    else j++;
  }
  return out;
}

/** A window stored as JSON (accounts, batches), or null when absent or not a valid window. */
export function storedWindow(value: unknown): CallingWindow | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
  const w = value as Record<string, unknown>;
  const days = Array.isArray(w.days) && w.days.every((d) => typeof d === 'string') ? (w.days as string[]) : undefined;
  if (typeof w.start !== 'string' || typeof w.end !== 'string' || typeof w.timezone !== 'string' || !days) return null;
  const window = { start: w.start, end: w.end, days, timezone: w.timezone };
  const zoneOk = w.timezone === RECIPIENT_ZONE || isZone(w.timezone);
  return zoneOk && callingWindowProblems({ ...window, timezone: undefined }).length === 0 ? normalizeWindow(window) : null;
}

/** The windows a batch's calls are placed under: its own (or the account's default) and the enforced one. */
export function effectiveWindows(batchWindow: CallingWindow | null, enforced: CallingWindow | null): CallingWindow[] {
  return [batchWindow, enforced].filter((w): w is CallingWindow => w !== null);
}
