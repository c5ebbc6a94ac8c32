// The create's warnings found while its contacts are screened (domain/create-warnings.ts), from
// what the screening has already computed for each chunk: the do-not-call answer for its numbers,
// the zones and openings of its zone sets. No statement of its own; per contact a few map lookups,
// and per distinct zone set one opening (shared with the placement) or one offset comparison.
import type { CallingWindow, WindowOpening, ZoneIntervals } from '../../domain/calling-window.ts';
import { nextOpening, recipientZonesOf, usesRecipientZone } from '../../domain/calling-window.ts';
import type { CallWindowPlacement } from '../../domain/call-windows.ts';
import { ALTERNATE_PHONE_KEYS, type ContactRejection, type NormalizedContact } from '../../domain/contacts.ts';
import type { CreateBatchInput } from '../../domain/create-batch-types.ts';
import { CreateWarnings } from '../../domain/create-warnings.ts';
import { judgedZones } from '../../domain/dial-permission.ts';
import { zoneKey, zonesForNumber, type NumberZones } from '../../domain/number-zones.ts';
import { luxonZone } from '../../domain/zones.ts';

/** call-windows.ts's neverOpensMessage begins so (a rejection, listed again as a warning). */
const NEVER_OPENS_PREFIX = 'The calling window does not open within';
const DAY_MS = 86_400_000;

export interface WarningScreen {
  warnings: CreateWarnings;
  input: CreateBatchInput;
  /** The batch's windows and the account's enforced one, those set. */
  windows: readonly CallingWindow[];
  now: Date;
  /** A number's zones; judgedZones copies what it is given, so a remembered array is safe to share. */
  zonesOf: (e164: string) => string[] | null;
  /** Openings by zone key for `now`, shared with the placement. */
  openings: Map<string, WindowOpening | null>;
  intervals: ZoneIntervals;
  /** Whether a fixed window's zone keeps other hours than each zone key's zones (memo). */
  otherHours: Map<string, boolean>;
}

const widths = new WeakMap<NumberZones, number>();

/**
 * zonesForNumber, remembered by the leading digits that decide it: the table's longest prefix is
 * 9 digits, so numbers sharing their first 9 (a NANP exchange block) share one lookup. A lookup
 * walks up to 16 prefixes (~10 µs); contact lists repeat exchanges, so a create pays it per block,
 * not per contact. Bounded: cleared past MAX_REMEMBERED numbers.
 */
export function rememberedZonesOf(table: NumberZones): (e164: string) => string[] | null {
  let width = widths.get(table);
  if (width === undefined) {
    width = 1;
    for (const key of Object.keys(table.table)) width = Math.max(width, key.length + 1);
    widths.set(table, width);
  }
  const w = width;
  const memo = new Map<string, string[] | null>();
  return (e164) => {
    const key = e164.slice(0, w);
    let zones = memo.get(key);
    if (zones === undefined) {
      if (memo.size >= MAX_REMEMBERED) memo.clear();
      zones = zonesForNumber(table, e164);
      memo.set(key, zones);
    }
    return zones;
  };
}
const MAX_REMEMBERED = 50_000;

/** Alternates the screening drops: on the do-not-call list, or invalid (before the list is applied). */
export function warnDroppedAlternates(w: WarningScreen, accepted: readonly NormalizedContact[], listed: ReadonlySet<string>): void {
  if (!w.input.useAlternateNumber) return;
  for (const c of accepted) {
    if (c.alternatePhone !== null) {
      // A listed primary rejects the contact: nothing of it is dialled, no warning needed.
      if (listed.has(c.alternatePhone) && !listed.has(c.phoneNumber)) w.warnings.contact('alternate_on_do_not_call_list', c.index, c.externalId);
    } else if (givesAlternate(c.metadata)) {
      w.warnings.contact('alternate_invalid', c.index, c.externalId);
    }
  }
}

/** A non-empty value under one of the alternate-number keys (normalizeContacts found none valid). */
function givesAlternate(metadata: Record<string, unknown>): boolean {
  for (const key of ALTERNATE_PHONE_KEYS) {
    const v = metadata[key];
    if ((typeof v === 'string' && v.trim() !== '') || typeof v === 'number') return true;
  }
  return false;
}

/** Window warnings of a chunk's placed contacts and of its rejections. */
export function warnWindows(
  w: WarningScreen,
  accepted: readonly NormalizedContact[],
  placements: readonly CallWindowPlacement[] | null,
  rejected: readonly ContactRejection[],
): void {
  if (w.windows.length === 0) return;
  for (const r of rejected) if (r.message.startsWith(NEVER_OPENS_PREFIX)) w.warnings.contact('window_never_opens', r.index, r.external_id);
  const recipient = usesRecipientZone(w.windows);
  const start = w.input.startMode === 'scheduled' ? Math.max(w.now.getTime(), w.input.scheduledAt.getTime()) : w.now.getTime();
  const expires = w.input.expiresAt?.getTime() ?? null;
  accepted.forEach((c, i) => {
    const own = w.input.contacts[c.index - 1]?.timezone ?? null;
    const placed = placements?.[i];
    if (expires !== null && placed) {
      const opens = Math.max(placed.nextAttemptAt?.getTime() ?? w.now.getTime(), start);
      if (opens >= expires) w.warnings.contact('window_opens_after_expiry', c.index, c.externalId);
    }
    if (recipient) {
      if (w.input.useAlternateNumber && c.alternatePhone !== null && !alternateOpens(w, c.alternatePhone, own)) {
        w.warnings.contact('alternate_window_never_opens', c.index, c.externalId);
      }
    } else if (keepsOtherHours(w, judgedZones(w.zonesOf(c.phoneNumber), own))) {
      w.warnings.contact('fixed_zone_window_other_zones', c.index, c.externalId);
    }
  });
}

/** The alternate number's windows open within the horizon in all of its zones (and the contact's). */
function alternateOpens(w: WarningScreen, alternate: string, own: string | null): boolean {
  const zones = judgedZones(w.zonesOf(alternate), own);
  if (zones === null) return false;
  const key = zoneKey(zones);
  if (!w.openings.has(key)) w.openings.set(key, nextOpening(w.windows, recipientZonesOf(w.windows, key), w.now, w.intervals));
  return w.openings.get(key) !== null;
}

/**
 * Some of the recipient's zones keep other hours than the window's fixed zone: a different UTC
 * offset at one of four instants a quarter-year apart (so daylight saving time on either
 * hemisphere counts). Unknown zones say nothing.
 */
function keepsOtherHours(w: WarningScreen, zones: string[] | null): boolean {
  if (zones === null) return false;
  const key = zoneKey(zones);
  const known = w.otherHours.get(key);
  if (known !== undefined) return known;
  const fixed = [...new Set(w.windows.map((x) => x.timezone))].map((z) => luxonZone(z));
  const instants = [0, 91, 182, 273].map((d) => w.now.getTime() + d * DAY_MS);
  const other = zones.some((z) => {
    const zone = luxonZone(z);
    return fixed.some((f) => instants.some((t) => zone.offset(t) !== f.offset(t)));
  });
  w.otherHours.set(key, other);
  return other;
}
