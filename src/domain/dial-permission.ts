// Whether a number may be dialled now under the calling windows that apply to it: the one place
// that decides it, for the first dial, a retry, the alternate number and a call adopted from
// another worker, and the place a create puts each call in its window. Pure.
//
// The zones a dial is judged in are every zone that can apply to the person at that number: the
// zones of the number dialled (its prefix's, or every zone of its area code when the table does
// not list its exchange: number-zones.ts) AND the contact's own zone when the contact gave one. A
// `recipient` window must be open in all of them; a window that names a fixed zone must also be
// open in that zone. When in doubt the most restrictive reading wins: a contact's zone narrows the
// number's, never replaces them, and the alternate number is judged in its own zones, not the
// primary's.
import { nextOpening, usesRecipientZone, type CallingWindow } from './calling-window.ts';
import { zonesForNumber, type NumberZones } from './number-zones.ts';

export interface DialQuestion {
  /** E.164 of the number to dial: the primary or the alternate. */
  number: string;
  /** The contact's own zone (the create's `timezone`), or null. */
  contactZone: string | null;
  /** The batch's window (its own or the account's default) and the account's enforced one. */
  windows: readonly CallingWindow[];
  now: Date;
}

export type DialAnswer =
  | { allowed: true; zones: string[]; closesAt: Date | null }
  /**
   * `calling_window`: closed now, open again at `opensAt` until `closesAt`; `never_opens`: not
   * within the 15-day horizon; `no_zone`: neither the number nor the contact gives a zone.
   */
  | { allowed: false; reason: 'calling_window' | 'never_opens' | 'no_zone'; zones: string[]; opensAt: Date | null; closesAt: Date | null };

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

export function dialPermission(table: NumberZones, q: DialQuestion): DialAnswer {
  if (q.windows.length === 0) return { allowed: true, zones: [], closesAt: null };
  // A fixed-zone window alone needs no recipient zone; a `recipient` one cannot be judged without.
  const zones = usesRecipientZone(q.windows) ? zonesOfDial(table, q.number, q.contactZone) : [];
  if (zones === null) return { allowed: false, reason: 'no_zone', zones: [], opensAt: null, closesAt: null };
  const opening = nextOpening(q.windows, zones, q.now);
  if (opening === null) return { allowed: false, reason: 'never_opens', zones, opensAt: null, closesAt: null };
  if (opening.opensAt.getTime() <= q.now.getTime()) return { allowed: true, zones, closesAt: opening.closesAt };
  return { allowed: false, reason: 'calling_window', zones, opensAt: opening.opensAt, closesAt: opening.closesAt };
}
