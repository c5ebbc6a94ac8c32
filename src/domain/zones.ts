// Time zone names. Checking a name by building an Intl formatter costs ~75 µs, so the runtime's own
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

/** A valid zone name: listed, or one the runtime resolves (an alias such as US/Eastern, an offset such as +05:00). */
export function isZone(name: string): boolean {
  return isListedZone(name) || resolvedZone(name) !== null;
}

/** Names are matched case-insensitively: a listed zone in the list's spelling, any other as written. */
export function canonicalZoneSpelling(name: string): string {
  return CANONICAL_SPELLING.get(name.toLowerCase()) ?? name;
}

/**
 * The luxon zone to compute in for a name: a listed zone in the list's spelling, any other name
 * as the runtime resolves it (US/Eastern → America/New_York, +0500 → +05:00), so luxon's caches
 * hold at most the zones that exist, however a client spells them. A name that is no zone gives
 * an invalid zone luxon does not keep.
 */
export function luxonZone(name: string): IANAZone {
  const listed = CANONICAL_SPELLING.get(name.toLowerCase());
  if (listed !== undefined) return IANAZone.create(listed);
  const resolved = resolvedZone(name);
  return resolved === null ? new IANAZone(name) : IANAZone.create(resolved);
}

/**
 * Why a name cannot be a person's or a calling window's zone, or null when it can: a fixed UTC
 * offset (`+05:00`, `Etc/GMT+5`, `UTC-4`) or an abbreviation (`EST`, `GMT`, `Zulu`) never follows
 * daylight saving time, so "08:00-21:00 EST" would run until 21:59 in New York in July. `UTC`
 * itself is allowed only where `allowUtc` says so (a window's fixed zone: nobody's local time,
 * and nothing to miss). Bounded: a few string tests and at most one remembered resolution.
 */
export function fixedOffsetReason(name: string, o: { allowUtc: boolean }): string | null {
  const lower = name.trim().toLowerCase();
  if (o.allowUtc && lower === 'utc') return null;
  const resolved = isListedZone(name) ? canonicalZoneSpelling(name) : resolvedZone(name);
  const fixed =
    FIXED_ABBREVIATIONS.has(lower) ||
    /^[+\-\u2212]?\d|^(utc|gmt|ut)\s*[+\-\u2212]|^etc\//.test(lower) ||
    (resolved !== null && (resolved === 'UTC' || /^[+-]|^Etc\//.test(resolved)));
  if (!fixed) return null;
  return `Value error, '${name}' is a fixed UTC offset with no daylight saving time; give a geographic IANA zone such as America/New_York`;
}

/** Names that read like a region's time but are one fixed offset (Intl now resolves EST to America/Panama, never EDT). */
const FIXED_ABBREVIATIONS: ReadonlySet<string> = new Set([
  'est',
  'mst',
  'hst',
  'utc',
  'gmt',
  'uct',
  'ut',
  'zulu',
  'universal',
  'greenwich',
  'gmt0',
  'gmt+0',
  'gmt-0',
]);

/**
 * The zone the runtime resolves an unlisted name to, or null when it is none. Resolving builds a
 * formatter (~75 µs); names are read in any case, so the answer is remembered by the lower-cased
 * name, for the last RESOLVED_NAMES of them.
 */
function resolvedZone(name: string): string | null {
  if (name.length > 64) return null;
  const key = name.toLowerCase();
  let resolved = resolvedNames.get(key);
  if (resolved === undefined) {
    try {
      resolved = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
    } catch {
      resolved = null;
    }
    if (resolvedNames.size >= RESOLVED_NAMES) resolvedNames.clear();
    resolvedNames.set(key, resolved);
  }
  return resolved;
}

const RESOLVED_NAMES = 1_000;
const resolvedNames = new Map<string, string | null>();
