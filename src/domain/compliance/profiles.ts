// Compliance profiles (rules-v1.ts) as the dial permission applies them: which rules bind a
// number (by its country and its area code's state), and when each rule lets a call through in a
// zone, as UTC intervals like a calling window's (calling-window.ts), so rules and windows
// intersect the same way. Pure.
import { DateTime } from 'luxon';
import { OPENING_HORIZON_DAYS, windowIntervals, type Interval } from '../calling-window.ts';
import { luxonZone } from '../zones.ts';
import { STATE_OF_AREA_CODE } from './area-code-states.ts';
import { isHoliday } from './holidays.ts';
import { COMPLIANCE_PROFILES, COMPLIANCE_RULES, PROFILE_INCLUDES, type ComplianceProfile, type ComplianceRule } from './rules-v1.ts';

/** How many profiles a setting may list (each at most once). */
export const MAX_COMPLIANCE_PROFILES = COMPLIANCE_PROFILES.length;

export const isComplianceProfile = (v: unknown): v is ComplianceProfile =>
  typeof v === 'string' && (COMPLIANCE_PROFILES as readonly string[]).includes(v);

/** What is wrong with a list of profiles, as `[index or null, reason]`; none for a valid one. */
export function complianceProfilesProblems(list: readonly unknown[]): Array<[number | null, string]> {
  if (list.length > MAX_COMPLIANCE_PROFILES)
    return [[null, `List should have at most ${MAX_COMPLIANCE_PROFILES} items after validation, not ${list.length}`]];
  const out: Array<[number | null, string]> = [];
  list.forEach((v, i) => {
    if (!isComplianceProfile(v)) out.push([i, `Input should be ${COMPLIANCE_PROFILES.map((p) => `'${p}'`).join(', ')}`]);
    else if (list.indexOf(v) !== i) out.push([i, `'${v}' is listed twice`]);
  });
  return out;
}

/** The profiles in force: the account's and the batch's together (the most restrictive wins), with what each includes, in table order. */
export function profilesInForce(...lists: ReadonlyArray<readonly string[] | null | undefined>): ComplianceProfile[] {
  const on = new Set<ComplianceProfile>();
  const add = (p: ComplianceProfile) => {
    if (on.has(p)) return;
    on.add(p);
    PROFILE_INCLUDES[p].forEach(add);
  };
  for (const list of lists) for (const p of list ?? []) if (isComplianceProfile(p)) add(p);
  return COMPLIANCE_PROFILES.filter((p) => on.has(p));
}

/** Toll-free and other non-geographic NANP codes: no state, but the called party may be anywhere in the US. */
const NON_GEOGRAPHIC_US = new Set(['800', '833', '844', '855', '866', '877', '888', '900']);

/** `US` plus the state's code for a US number, `US` alone for a non-geographic one; null for a number outside the US. */
export function usJurisdictionsOf(e164: string): readonly string[] | null {
  if (!e164.startsWith('+1') || e164.length < 5) return null;
  const areaCode = e164.slice(2, 5);
  const state = STATE_OF_AREA_CODE.get(areaCode);
  if (state) return ['US', state];
  return NON_GEOGRAPHIC_US.has(areaCode) ? ['US'] : null;
}

const rulesCache = new Map<string, readonly ComplianceRule[]>();

/** The rules of these profiles (profilesInForce) that bind a dial of `e164`, in table order. */
export function rulesFor(e164: string, profiles: readonly ComplianceProfile[]): readonly ComplianceRule[] {
  if (profiles.length === 0) return [];
  const where = usJurisdictionsOf(e164);
  if (where === null) return [];
  // A few hundred area codes times a few profile sets.
  const key = `${where.join(',')}|${profiles.join(',')}`;
  let rules = rulesCache.get(key);
  if (!rules) {
    rules = COMPLIANCE_RULES.filter((r) => profiles.includes(r.profile) && where.includes(r.jurisdiction));
    if (rulesCache.size > 10_000) rulesCache.clear();
    rulesCache.set(key, rules);
  }
  return rules;
}

/**
 * Whether any rule of the table limits how often `e164` may be called, whatever profiles are in
 * force: every dial of such a number is recorded, so that a batch under the rule also counts the
 * dials the account's other batches made without it.
 */
export function hasFrequencyRule(e164: string): boolean {
  const where = usJurisdictionsOf(e164);
  return where !== null && COMPLIANCE_RULES.some((r) => r.frequency !== undefined && where.includes(r.jurisdiction));
}

/** Whether the rule limits when a call may be placed (hours or no-call days). */
export const limitsHours = (r: ComplianceRule): boolean => r.hours !== undefined || r.noCallDays !== undefined;

/** When the rule allows calls in `zone`, from the local day before `from` through the opening horizon; sorted, disjoint. */
export function ruleIntervals(rule: ComplianceRule, zone: string, from: Date): Interval[] {
  const skip = rule.noCallDays?.length ? (d: string) => rule.noCallDays!.some((c) => isHoliday(c, d)) : undefined;
  if (!rule.hours) return allDayIntervals(zone, from, skip);
  const parts = rule.hours.flatMap((h) => windowIntervals({ ...h, timezone: zone }, zone, from, skip));
  return merged(parts);
}

/** Whole local days, but those skipped, as merged intervals. */
function allDayIntervals(zone: string, from: Date, skip?: (d: string) => boolean): Interval[] {
  const tz = luxonZone(zone);
  let day = DateTime.fromJSDate(from, { zone: tz }).startOf('day').minus({ days: 1 });
  const parts: Interval[] = [];
  for (let i = 0; i < OPENING_HORIZON_DAYS + 2; i++) {
    const next = day.plus({ days: 1 });
    if (!skip?.(day.toISODate()!)) parts.push([day.toMillis(), next.toMillis()]);
    day = next;
  }
  return merged(parts);
}

/** Sorted, with touching or overlapping intervals joined. */
function merged(parts: Interval[]): Interval[] {
  const sorted = [...parts].sort((a, b) => a[0] - b[0]);
  const out: Interval[] = [];
  for (const [a, b] of sorted) {
    const last = out[out.length - 1];
    if (last && a <= last[1]) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

/** An account's stored choice (`accounts.compliance_profiles`, JSON): its known names, or null for the service default. */
export function accountProfiles(a: { complianceProfiles: unknown }): ComplianceProfile[] | null {
  return Array.isArray(a.complianceProfiles) ? a.complianceProfiles.filter(isComplianceProfile) : null;
}
