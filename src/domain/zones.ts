// Time zone names. luxon checks a name by building an Intl formatter (~75 µs), so the runtime's own
// list of canonical names answers most checks at once: a create names a zone per contact, and a
// calling window's openings are computed day by day in each zone. And luxon keeps a zone and an
// Intl formatter for every name it computes in, for good, while names come in endless spellings
// (`us/EASTERN`, `+0500`): it is only ever given a name's resolution (luxonZone).
import { IANAZone } from 'luxon';

const LISTED = [...Intl.supportedValuesOf('timeZone'), 'UTC'];
const CANONICAL_SPELLING: ReadonlyMap<string, string> = new Map(LISTED.map((z) => [z.toLowerCase(), z]));

/** A name of the runtime's list (canonical IANA names, and UTC) in any case, as Intl reads names: a map lookup. */
export function isListedZone(name: string): boolean {
  return name.length <= 64 && CANONICAL_SPELLING.has(name.toLowerCase());
}

/**
 * A valid zone name; bounded before luxon sees it. Any name outside the list (an alias such as
 * US/Eastern, an offset such as +05:00) costs luxon an Intl formatter.
 */
export function isZone(name: string): boolean {
  return isListedZone(name) || (name.length <= 64 && IANAZone.isValidZone(name));
}

/** Names are matched case-insensitively: a listed zone in the list's spelling, any other as written. */
export function canonicalZoneSpelling(name: string): string {
  return CANONICAL_SPELLING.get(name.toLowerCase()) ?? name;
}

/**
 * The luxon zone to compute in for a checked name (isZone): a listed zone in the list's spelling,
 * any other name as the runtime resolves it (US/Eastern → America/New_York, +0500 → +05:00), so
 * luxon's caches hold at most the zones that exist, however a client spells them. Resolving an
 * unlisted name builds a formatter once; the last RESOLVED_NAMES names are remembered.
 */
export function luxonZone(name: string): IANAZone {
  const listed = CANONICAL_SPELLING.get(name.toLowerCase());
  if (listed !== undefined) return IANAZone.create(listed);
  let resolved = resolvedNames.get(name);
  if (resolved === undefined) {
    try {
      resolved = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
    } catch {
      // Not a zone: an invalid zone luxon does not keep.
      return new IANAZone(name);
    }
    if (resolvedNames.size >= RESOLVED_NAMES) resolvedNames.clear();
    resolvedNames.set(name, resolved);
  }
  return IANAZone.create(resolved);
}

const RESOLVED_NAMES = 1_000;
const resolvedNames = new Map<string, string>();
