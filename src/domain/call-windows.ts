// Where each new call of a windowed batch stands at create: the zones its windows are judged in,
// and the opening it waits for. A contact whose windows can never be met is rejected like any
// other invalid contact, so no call is created that could only wait forever.
import type { ContactRejection, NormalizedContact } from './contacts.ts';
import {
  firstOpening,
  nextOpening,
  openIntervals,
  OPENING_HORIZON_DAYS,
  recipientZonesOf,
  usesRecipientZone,
  type CallingWindow,
  type Interval,
  type WindowOpening,
  type ZoneIntervals,
} from './calling-window.ts';
import { zoneKey, zonesOfKey } from './number-zones.ts';
import { dialOpening, judgedZones, needsRecipientZones } from './dial-permission.ts';
import { limitsHours, rulesFor } from './compliance/profiles.ts';
import type { ComplianceProfile, ComplianceRule } from './compliance/rules-v1.ts';
import { fixedOffsetReason } from './zones.ts';

export interface CallWindowPlacement {
  /** `calls.timezone`: the zones the call is judged in; null when nothing limits its hours (profiles only). */
  timezone: string | null;
  /** `calls.contact_timezone`: the contact's own zone as written, which judges its alternate number too. */
  contactTimezone: string | null;
  /** Null when the window is open at create. */
  nextAttemptAt: Date | null;
  /** Null in a batch without windows (its rules come from compliance profiles only): no sweep moves its calls. */
  windowClosesAt: Date | null;
}

export interface PlacementInput {
  /** The batch's window and the account's enforced one, those that are set. */
  windows: readonly CallingWindow[];
  /** The zones of a number, or null when none is known (libphonenumber's table). */
  zonesOf: (e164: string) => string[] | null;
  /** A contact's own zone (the request's `timezone`), by its 1-based index. */
  ownZone: (index: number) => string | null;
  now: Date;
  /** Openings by zone key already computed for this `now`: a create keeps one across its chunks. */
  openings?: Map<string, WindowOpening | null>;
  /** Each zone's intervals for these windows and `now`, kept likewise. */
  intervals?: ZoneIntervals;
  /** The compliance profiles in force (profilesInForce): their rules narrow the windows per number. */
  profiles?: readonly ComplianceProfile[];
}

export const NO_ZONE_MESSAGE =
  'No time zone is known for this number (a toll-free or other non-geographic number has none); give the contact a timezone';

/**
 * The zones the windows are judged in for a contact (dial-permission.ts): with a `recipient`
 * window its number's zones and its own zone, all of them; else the windows' fixed zones. The
 * alternate number is judged in its own zones when it is dialled.
 */
function zonesOfContact(c: NormalizedContact, p: PlacementInput, recipient: boolean, own: string | null): string[] | null {
  if (!recipient) return p.windows.length === 0 ? [] : [...new Set(p.windows.map((w) => w.timezone))];
  return judgedZones(p.zonesOf(c.phoneNumber), own);
}

/**
 * The hour-limiting rules that bind a number, and their ids: they follow from its area code alone
 * (usJurisdictionsOf), so they are looked up once per area code of a list, not once per contact.
 */
function hourRulesByAreaCode(profiles: readonly ComplianceProfile[]): (e164: string) => { rules: readonly ComplianceRule[]; ruleIds: string } {
  const byArea = new Map<string, { rules: readonly ComplianceRule[]; ruleIds: string }>();
  return (e164) => {
    const area = e164.slice(0, 5);
    let found = byArea.get(area);
    if (!found) {
      const rules = rulesFor(e164, profiles).filter(limitsHours);
      byArea.set(area, (found = { rules, ruleIds: rules.map((r) => r.id).join(',') }));
    }
    return found;
  };
}

/**
 * A contact's judged zones and their key (zonesOfContact, zoneKey). Without a zone of its own they
 * follow from its number's zones, which `zonesOf` hands out once per exchange block: kept per
 * that answer, the list's contacts share a handful of them.
 */
function contactZonesMemo(
  p: PlacementInput,
): (c: NormalizedContact, recipient: boolean, own: string | null) => { zones: string[]; key: string } | null {
  const byNumberZones = [
    new Map<readonly string[] | null, { zones: string[]; key: string } | null>(),
    new Map<readonly string[] | null, { zones: string[]; key: string } | null>(),
  ];
  const judge = (c: NormalizedContact, recipient: boolean, own: string | null) => {
    const zones = zonesOfContact(c, p, recipient, own);
    return zones === null ? null : { zones, key: zoneKey(zones) };
  };
  return (c, recipient, own) => {
    if (own !== null) return judge(c, recipient, own);
    const memo = byNumberZones[recipient ? 1 : 0];
    const numberZones = recipient ? p.zonesOf(c.phoneNumber) : null;
    if (!memo.has(numberZones)) memo.set(numberZones, judge(c, recipient, own));
    return memo.get(numberZones)!;
  };
}

/** The accepted contacts with their placements; those that can never be called join the rejections. */
export function placeInWindows(
  accepted: NormalizedContact[],
  rejected: ContactRejection[],
  p: PlacementInput,
): { accepted: NormalizedContact[]; rejected: ContactRejection[]; placements: CallWindowPlacement[] } {
  const windowed = p.windows.length > 0;
  // Contacts share a handful of zone sets: one opening computed per set.
  const openings = p.openings ?? new Map<string, WindowOpening | null>();
  const intervals = p.intervals ?? new Map();
  const kept: NormalizedContact[] = [];
  const placements: CallWindowPlacement[] = [];
  const refused: ContactRejection[] = [];
  const refuse = (c: NormalizedContact, field: string, message: string) =>
    refused.push({ index: c.index, external_id: c.externalId, field, message });
  const hourRulesOf = hourRulesByAreaCode(p.profiles ?? []);
  const zonesAndKeyOf = contactZonesMemo(p);
  for (const c of accepted) {
    const own = p.ownZone(c.index);
    // A fixed offset (EST, +05:00) would be judged without daylight saving time.
    const fixed = own === null ? null : fixedOffsetReason(own, { allowUtc: false });
    if (fixed !== null) {
      refuse(c, 'timezone', fixed);
      continue;
    }
    // The compliance rules that bind this number (by its state) narrow the windows, in its zones.
    const { rules, ruleIds } = hourRulesOf(c.phoneNumber);
    if (!windowed && rules.length === 0) {
      kept.push(c);
      placements.push({ timezone: null, contactTimezone: own, nextAttemptAt: null, windowClosesAt: null });
      continue;
    }
    const recipient = needsRecipientZones(p.windows, rules);
    const contactZones = zonesAndKeyOf(c, recipient, own);
    if (contactZones === null) {
      refuse(c, 'phone_number', NO_ZONE_MESSAGE);
      continue;
    }
    const { zones, key } = contactZones;
    const openingKey = rules.length === 0 ? key : `${key}|${ruleIds}`;
    if (!openings.has(openingKey)) {
      const judged = recipient ? zonesOfKey(key) : recipientZonesOf(p.windows, key);
      openings.set(
        openingKey,
        rules.length === 0 ? nextOpening(p.windows, judged, p.now, intervals) : dialOpening(p.windows, rules, judged, p.now, intervals),
      );
    }
    const opening = openings.get(openingKey)!;
    if (opening === null) {
      refuse(c, own !== null ? 'timezone' : 'phone_number', neverOpensMessage(zones));
      continue;
    }
    kept.push(c);
    placements.push({
      timezone: key,
      contactTimezone: own,
      nextAttemptAt: opening.opensAt.getTime() > p.now.getTime() ? opening.opensAt : null,
      windowClosesAt: windowed ? opening.closesAt : null,
    });
  }
  if (refused.length === 0) return { accepted, rejected, placements };
  return { accepted: kept, rejected: [...rejected, ...refused].sort((x, y) => x.index - y.index), placements };
}

function neverOpensMessage(zones: readonly string[]): string {
  const named = zones.length <= 3 ? zones.join(', ') : `${zones.slice(0, 3).join(', ')} and ${zones.length - 3} more`;
  return `The calling window does not open within ${OPENING_HORIZON_DAYS} days in all of this contact's time zones (${named}); give the contact a timezone`;
}

/** A waiting call (pending, or queued for a retry) whose batch's windows changed. */
export interface WaitingCall {
  status: 'pending' | 'queued';
  phoneNumber: string;
  /** Its stored zone key; null when its batch had no window. */
  timezone: string | null;
  nextAttemptAt: Date | null;
  /** `calls.wait_reason`: set while the frequency cap holds it. */
  waitReason: string | null;
  /** `calls.contact_timezone`: the contact's own zone, judged with the number's. */
  contactZone?: string | null;
}

export interface ReplaceInput {
  windows: readonly CallingWindow[];
  /** The stored keys are the recipients' zones (the batch was created under a `recipient` window). */
  recipientKeys: boolean;
  zonesOf: (e164: string) => string[] | null;
  now: Date;
}

/** Where a waiting call stands under its batch's new windows; null when they never open for it. */
export type Replacement = { timezone: string | null; nextAttemptAt: Date | null; windowClosesAt: Date | null } | null;

/**
 * Re-places a waiting call under changed windows. It waits for the first opening from now, or
 * from its due time when a retry delay or the frequency cap holds it (a retry's own delay is not
 * stored apart from its opening, so it never moves earlier). A key from a `recipient` window is
 * kept (it may be the contact's own zone); otherwise the number's zones are looked up again.
 */
export function replaceWaitingCall(call: WaitingCall, p: ReplaceInput, openingOf: (key: string, from: Date) => WindowOpening | null): Replacement {
  const ownKey = p.recipientKeys ? call.timezone : null;
  const held = call.status === 'queued' || call.waitReason !== null;
  if (p.windows.length === 0) {
    return { timezone: ownKey, nextAttemptAt: held ? call.nextAttemptAt : null, windowClosesAt: null };
  }
  let key: string;
  if (ownKey !== null) key = ownKey;
  else if (usesRecipientZone(p.windows)) {
    const zones = judgedZones(p.zonesOf(call.phoneNumber), call.contactZone ?? null);
    if (zones === null) return null;
    key = zoneKey(zones);
  } else key = zoneKey([...new Set(p.windows.map((w) => w.timezone))]);
  const due = held && call.nextAttemptAt !== null ? call.nextAttemptAt.getTime() : 0;
  const opening = openingOf(key, new Date(Math.max(p.now.getTime(), due)));
  if (opening === null) return null;
  return {
    timezone: key,
    nextAttemptAt: opening.opensAt.getTime() > p.now.getTime() ? opening.opensAt : held ? call.nextAttemptAt : null,
    windowClosesAt: opening.closesAt,
  };
}

/**
 * nextOpening for these windows from `now` on: the open intervals are computed once per zone key
 * (15 days of them through luxon cost milliseconds; a chunk of retries has as many due times as
 * calls), and each due time looks its opening up among them. One past them is computed on its own.
 */
export function openingsOf(windows: readonly CallingWindow[], now: Date): (key: string, from: Date) => WindowOpening | null {
  const intervals = new Map<string, Interval[] | null>();
  return (key, from) => {
    const zones = recipientZonesOf(windows, key);
    if (!intervals.has(key)) intervals.set(key, openIntervals(windows, zones, now));
    const open = intervals.get(key)!;
    const found = firstOpening(open, from);
    if (found !== null || open === null || open.length === 0 || from.getTime() < open[open.length - 1][1]) return found;
    return nextOpening(windows, zones, from);
  };
}
