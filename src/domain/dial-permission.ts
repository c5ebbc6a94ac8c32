// Whether a number may be dialled now under the calling windows and compliance rules that apply
// to it: the one place that decides it, for the first dial, a retry, the alternate number and a
// call adopted from another worker, and the place a create puts each call in its window. Pure.
//
// The zones a dial is judged in are every zone that can apply to the person at that number: the
// zones of the number dialled (its prefix's, or every zone of its area code when the table does
// not list its exchange: number-zones.ts) AND the contact's own zone when the contact gave one. A
// `recipient` window must be open in all of them; a window that names a fixed zone must also be
// open in that zone. When in doubt the most restrictive reading wins: a contact's zone narrows the
// number's, never replaces them, and the alternate number is judged in its own zones, not the
// primary's. The compliance profiles in force (compliance/rules-v1.ts) add their rules for the
// number dialled (by its country and state): their hours and no-call days are judged in those
// same zones and intersected with the windows; their frequency limits are returned for the
// caller to count (the frequency cap's machinery counts dials in the database).
import {
  firstOpening,
  intersect,
  openIntervals,
  usesRecipientZone,
  type CallingWindow,
  type Interval,
  type WindowOpening,
  type ZoneIntervals,
} from './calling-window.ts';
import { zonesForNumber, type NumberZones } from './number-zones.ts';
import { limitsHours, ruleIntervals, rulesFor } from './compliance/profiles.ts';
import { COMPLIANCE_RULES_VERSION, type ComplianceProfile, type ComplianceRule } from './compliance/rules-v1.ts';
import { DAY_MS } from './schedule.ts';

export interface DialQuestion {
  /** E.164 of the number to dial: the primary or the alternate. */
  number: string;
  /** The contact's own zone (the create's `timezone`), or null. */
  contactZone: string | null;
  /** The batch's window (its own or the account's default) and the account's enforced one. */
  windows: readonly CallingWindow[];
  /** The compliance profiles in force (profilesInForce: the account's and the batch's). */
  profiles?: readonly ComplianceProfile[];
  now: Date;
  /** Intervals already computed for these windows (newDialCache): a worker keeps one per batch. */
  cache?: DialCache;
}

/** A frequency limit of a rule that binds the number: at most `maxCalls` dials in `periodSeconds`. */
export interface FrequencyLimit {
  rule: string;
  maxCalls: number;
  periodSeconds: number;
}

/** What a dial was judged against, for its audit: zones, windows, the rules applied and their table's version. */
export interface DialChecks {
  zones: string[];
  windows: readonly CallingWindow[];
  /** Ids of the compliance rules applied (rules-v1.ts), hours and frequency alike. */
  rules: string[];
  /** The rule table's version when a profile was in force, else null. */
  rulesVersion: string | null;
  /** The frequency limits the caller must count before dialling. */
  frequency: FrequencyLimit[];
}

export type DialAnswer = (
  | { allowed: true; zones: string[]; closesAt: Date | null }
  /**
   * `calling_window`: closed now, open again at `opensAt` until `closesAt`; `never_opens`: not
   * within the 15-day horizon; `no_zone`: neither the number nor the contact gives a zone.
   */
  | { allowed: false; reason: 'calling_window' | 'never_opens' | 'no_zone'; zones: string[]; opensAt: Date | null; closesAt: Date | null }
) & { rules: string[]; checks: DialChecks };

/**
 * Intervals by window or rule and zone, computed from `from`: valid while a dial's `now` is at most
 * a day later (they reach 15 days past `from`; a later `now` starts a new cache).
 */
export interface DialCache {
  from: number;
  intervals: ZoneIntervals;
}

export const newDialCache = (now: Date): DialCache => ({ from: now.getTime(), intervals: new Map() });

/** The zones to judge a dial in: the number's, then the contact's own; null when there are none. */
export function judgedZones(numberZones: readonly string[] | null, contactZone: string | null): string[] | null {
  const zones = [...(numberZones ?? [])];
  if (contactZone !== null && !zones.includes(contactZone)) zones.push(contactZone);
  return zones.length > 0 ? zones : null;
}

/** The zones a dial of `number` is judged in (see judgedZones). */
export function zonesOfDial(table: NumberZones, number: string, contactZone: string | null): string[] | null {
  return judgedZones(zonesForNumber(table, number), contactZone);
}

/** Whether these windows and rules need the called party's zones. */
export const needsRecipientZones = (windows: readonly CallingWindow[], rules: readonly ComplianceRule[]): boolean =>
  usesRecipientZone(windows) || rules.some(limitsHours);

/**
 * When windows and rules are all open, as intervals: the windows' (openIntervals) intersected with
 * each hours rule's in every one of the recipient's zones; null: nothing limits (always open).
 */
export function allowedIntervals(
  windows: readonly CallingWindow[],
  rules: readonly ComplianceRule[],
  recipientZones: readonly string[],
  from: Date,
  cache?: ZoneIntervals,
): Interval[] | null {
  let open = openIntervals(windows, recipientZones, from, cache);
  for (const rule of rules) {
    if (!limitsHours(rule)) continue;
    for (const zone of new Set(recipientZones)) {
      const key = `rule:${rule.id} ${zone}`;
      const intervals = cache?.get(key) ?? ruleIntervals(rule, zone, from);
      cache?.set(key, intervals);
      open = open === null ? intervals : intersect(open, intervals);
      if (open.length === 0) return open;
    }
  }
  return open;
}

/** The first opening at or after `from` under windows and rules; null when none within the horizon. */
export function dialOpening(
  windows: readonly CallingWindow[],
  rules: readonly ComplianceRule[],
  recipientZones: readonly string[],
  from: Date,
  cache?: ZoneIntervals,
): WindowOpening | null {
  return firstOpening(allowedIntervals(windows, rules, recipientZones, from, cache), from);
}

export function dialPermission(table: NumberZones, q: DialQuestion): DialAnswer {
  const rules = rulesFor(q.number, q.profiles ?? []);
  const ruleIds = rules.map((r) => r.id);
  const checks = (zones: string[]): DialChecks => ({
    zones,
    windows: q.windows,
    rules: ruleIds,
    rulesVersion: q.profiles?.length ? COMPLIANCE_RULES_VERSION : null,
    frequency: rules.flatMap((r) => (r.frequency ? [{ rule: r.id, ...r.frequency }] : [])),
  });
  const hoursRules = rules.filter(limitsHours);
  if (q.windows.length === 0 && hoursRules.length === 0) return { allowed: true, zones: [], closesAt: null, rules: ruleIds, checks: checks([]) };
  // A fixed-zone window alone needs no recipient zone; a `recipient` one or a rule cannot be judged without.
  const zones = needsRecipientZones(q.windows, hoursRules) ? zonesOfDial(table, q.number, q.contactZone) : [];
  if (zones === null) return { allowed: false, reason: 'no_zone', zones: [], opensAt: null, closesAt: null, rules: ruleIds, checks: checks([]) };
  let opening = dialOpening(q.windows, hoursRules, zones, q.now, cacheFor(q));
  // A cache from earlier looks less far ahead: "never" is only said from a fresh look.
  if (opening === null && q.cache && q.cache.from < q.now.getTime()) opening = dialOpening(q.windows, hoursRules, zones, q.now);
  const base = { zones, rules: ruleIds, checks: checks(zones) };
  if (opening === null) return { allowed: false, reason: 'never_opens', opensAt: null, closesAt: null, ...base };
  if (opening.opensAt.getTime() <= q.now.getTime()) return { allowed: true, closesAt: opening.closesAt, ...base };
  return { allowed: false, reason: 'calling_window', opensAt: opening.opensAt, closesAt: opening.closesAt, ...base };
}

/** The question's cache, started again when it is older than a day (or from a later time). */
function cacheFor(q: DialQuestion): ZoneIntervals | undefined {
  const c = q.cache;
  if (!c) return undefined;
  const now = q.now.getTime();
  if (now < c.from || now - c.from > DAY_MS) {
    c.from = now;
    c.intervals.clear();
  }
  return c.intervals;
}
