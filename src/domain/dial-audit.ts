// The evidence a dial leaves: what it was checked against (zones, windows, profile rules, lists),
// the local time in each zone at the dial, and why it was allowed. Built from the answer of
// dialPermission (the one function that decides) at the moment the worker dials, stored with the
// dial's own write (dial_audits), read back per call and summed per batch (compliance report).
// Pure; every list and text is bounded so one entry stays small whatever a batch or account holds.
import { DateTime } from 'luxon';
import { RECIPIENT_ZONE } from './calling-window.ts';
import { zonesOfDial, type DialAnswer } from './dial-permission.ts';
import type { NumberZones } from './number-zones.ts';

/** Zones kept per entry (a number has 1-3; a contact zone and fixed-zone windows add a few). */
export const MAX_AUDIT_ZONES = 16;
/** Windows kept per entry (a batch has its own and the account's enforced one). */
export const MAX_AUDIT_WINDOWS = 4;
/** Profile rule ids kept per entry. */
export const MAX_AUDIT_RULES = 32;
/** Lists kept per entry. */
export const MAX_AUDIT_LISTS = 8;
/** Characters kept of each zone, rule id or list name. */
export const MAX_AUDIT_NAME_LENGTH = 64;
/** Entries a read returns per call, newest last (a call is dialled at most max_attempts times, 10 at most, plus its alternate). */
export const MAX_AUDIT_ENTRIES_PER_CALL = 50;

/**
 * Why a dial was allowed: `window_open`: every window and every hours rule of the profiles in
 * force was open in every zone judged (the entry's zones); `no_window`: no window and no hours
 * rule applied, so nothing restricted the hour (the entry's zones are then the number's own, for
 * the record and the report); `claim_window`: the claim placed it on the window stored with the
 * call at create while the check at the dial found it closed (the entry keeps that answer's
 * zones: evidence of a dial to look at, which a dial judged again at the dial never gets).
 */
export const DIAL_ALLOWED_BY = ['window_open', 'no_window', 'claim_window'] as const;
export type DialAllowedBy = (typeof DIAL_ALLOWED_BY)[number];

/**
 * The lists a dial is checked against by the claim that takes it (claim-calls.ts) and, for an
 * alternate dialled right after its primary, by alternate-dial-check.ts: the account's do-not-call
 * list (opt-outs included) and, for a +1 number, the national do-not-call registry and the
 * reassigned-number results (registry_refuses_call, migration consent_and_registry).
 */
export const ACCOUNT_DNC_LIST = 'account_do_not_call';
export const US_REGISTRY_LISTS: readonly string[] = ['us_national_dnc_registry', 'us_reassigned_numbers'];

export function listsCheckedFor(number: string): string[] {
  return /^\+1[0-9]{10}$/.test(number) ? [ACCOUNT_DNC_LIST, ...US_REGISTRY_LISTS] : [ACCOUNT_DNC_LIST];
}

export interface DialAuditWindow {
  start: string;
  end: string;
  days: string[];
  timezone: string;
}

export interface DialAudit {
  /** 1-based: the call's dial count with this dial (the alternate number's dial counts). */
  attempt: number;
  /** E.164 of the number dialled. */
  number: string;
  alternate: boolean;
  dialledAt: Date;
  allowedBy: DialAllowedBy;
  /** Every zone the dial was judged in: the number's, the contact's, and any zone a window names. */
  zones: string[];
  /** The local time in each of `zones` at the dial, ISO 8601 with its offset, in the same order. */
  localTimes: string[];
  /** The windows checked (the batch's own or the account's default, and the enforced one). */
  windows: DialAuditWindow[];
  /** When the window the dial was placed in closes; null without a window. */
  closesAt: Date | null;
  /** Ids of the compliance profile rules applied (empty when none is in force). */
  rules: string[];
  /** The rule table's version (compliance/rules-v1.ts) when a profile was in force, else null. */
  rulesVersion: string | null;
  /** The lists the dial was checked against. */
  lists: string[];
}

const name = (s: string) => s.slice(0, MAX_AUDIT_NAME_LENGTH);
const names = (xs: readonly string[], max: number) => [...new Set(xs.map(name))].slice(0, max);

/** The local time at `at` in `zone`, as ISO 8601 with the zone's offset (minutes precision kept as seconds). */
export function localTimeIn(zone: string, at: Date): string {
  const dt = DateTime.fromJSDate(at, { zone });
  return dt.isValid ? dt.toISO({ suppressMilliseconds: true })! : 'invalid zone';
}

export interface DialAuditInput {
  /** dialPermission's answer at the dial: its zones, closesAt and checks (windows, rules, their version). */
  answer: DialAnswer;
  number: string;
  contactZone: string | null;
  at: Date;
  attempt: number;
  alternate: boolean;
  lists?: readonly string[];
}

/** The entry of an allowed dial, bounded (see the MAX_AUDIT_* limits). */
export function dialAuditOf(table: NumberZones, d: DialAuditInput): DialAudit {
  const { checks } = d.answer;
  const limited = d.answer.closesAt !== null || d.answer.zones.length > 0;
  const fixed = checks.windows.filter((w) => w.timezone !== RECIPIENT_ZONE).map((w) => w.timezone);
  // Nothing limiting the hour judges no zone; the number's own are recorded anyway, so the report
  // shows at what local hour an unrestricted batch reached people.
  const judged = limited ? d.answer.zones : (zonesOfDial(table, d.number, d.contactZone) ?? []);
  const zones = names([...judged, ...fixed], MAX_AUDIT_ZONES);
  return {
    attempt: d.attempt,
    number: name(d.number),
    alternate: d.alternate,
    dialledAt: d.at,
    allowedBy: !d.answer.allowed ? 'claim_window' : limited ? 'window_open' : 'no_window',
    zones,
    localTimes: zones.map((z) => localTimeIn(z, d.at)),
    windows: checks.windows.slice(0, MAX_AUDIT_WINDOWS).map((w) => ({ start: w.start, end: w.end, days: [...w.days], timezone: name(w.timezone) })),
    closesAt: d.answer.closesAt,
    rules: names(checks.rules, MAX_AUDIT_RULES),
    rulesVersion: checks.rulesVersion === null ? null : name(checks.rulesVersion),
    lists: names(d.lists ?? listsCheckedFor(d.number), MAX_AUDIT_LISTS),
  };
}
