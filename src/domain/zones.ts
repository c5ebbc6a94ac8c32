// Time zone names. luxon checks a name by building an Intl formatter (~75 µs), so the runtime's own
// list of canonical names answers most checks at once: a create names a zone per contact, and a
// calling window's openings are computed day by day in each zone.
import { IANAZone } from 'luxon';

const LISTED = Intl.supportedValuesOf('timeZone');
const LISTED_ZONES: ReadonlySet<string> = new Set([...LISTED, 'UTC']);
const CANONICAL_SPELLING: ReadonlyMap<string, string> = new Map(LISTED.map((z) => [z.toLowerCase(), z]));

/** A name of the runtime's list (canonical IANA names, and UTC): checked by a set lookup. */
export function isListedZone(name: string): boolean {
  return LISTED_ZONES.has(name);
}

/**
 * A valid zone name; bounded before luxon sees it. Any name outside the list (an alias such as
 * US/Eastern, another spelling, an offset such as +05:00) costs luxon an Intl formatter.
 */
export function isZone(name: string): boolean {
  return name.length <= 64 && (LISTED_ZONES.has(name) || IANAZone.isValidZone(name));
}

/** Names are matched case-insensitively: a listed zone in the list's spelling, any other as written. */
export function canonicalZoneSpelling(name: string): string {
  return CANONICAL_SPELLING.get(name.toLowerCase()) ?? name;
}
