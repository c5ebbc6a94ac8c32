import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { normalizeSanitizedMetadata } from './metadata.ts';
import type { RawContact } from './create-batch-types.ts';
import { fastE164 } from './phone-rules.ts';
import type { ConsentRecord } from './consent.ts';

export interface NormalizedContact {
  /** 1-based position in the submitted array; maps back to the RawContact (e.g. its status). */
  index: number;
  externalId: string;
  name: string | null;
  phoneNumber: string;
  alternatePhone: string | null;
  metadata: Record<string, unknown>;
  /** The contact's consent record (consent.ts); absent or null without one. */
  consent?: ConsentRecord | null;
}

export interface ContactRejection {
  index: number;
  external_id: string;
  field: string;
  message: string;
}

// Checked in this order after key normalisation; the first valid number wins.
export const ALTERNATE_PHONE_KEYS = ['alternate_number', 'alternate_phone', 'alternate_phone_number', 'alt_phone_number'] as const;

// Only the punctuation people put in numbers: letters would let libphonenumber read
// extensions ("ext. 5") or vanity numbers that we cannot dial as given.
const PHONE_SHAPE = /^\+?[0-9\s\-().]+$/;
const E164_MAX_DIGITS = 15;

/**
 * E.164 or null. Numbers are always read as international ("digits with country code"), so a
 * missing '+' is added. Uses libphonenumber's default (min) metadata: isValid() checks country
 * code and length, not number ranges, which would reject freshly assigned ranges when stale.
 */
export function normalizePhone(raw: string): string | null {
  if (typeof raw !== 'string') return null;
  const trimmed = raw.trim();
  if (!PHONE_SHAPE.test(trimmed)) return null;
  const digits = digitsOf(trimmed);
  if (digits.length === 0 || digits.length > E164_MAX_DIGITS) return null;
  // Same verdict as the libphonenumber call below, without its per-call regex construction.
  const fast = fastE164(digits);
  // The submitted string when it already is the E.164 form: a 100k-contact batch keeps one copy.
  if (fast !== undefined) return fast === trimmed ? trimmed : fast;
  const parsed = parsePhoneNumberFromString(`+${digits}`);
  return parsed?.isValid() ? parsed.number : null;
}

/**
 * The contract's `Invalid phone number`, and for a number written without its country code that
 * is valid with +1 (`4155550182`), a hint saying so. Only invalid numbers pay the second check.
 */
export function invalidPhoneMessage(raw: string): string {
  const INVALID = 'Invalid phone number';
  if (typeof raw !== 'string' || raw.trim().startsWith('+')) return INVALID;
  const withCode = normalizePhone(`+1${raw.trim()}`);
  return withCode === null ? INVALID : `${INVALID} (no country code? ${withCode} is valid: write numbers as +<country code><number>)`;
}

/** The ASCII digits of `s`, in order (a loop: the /\D/g replace was a tenth of a contact's check). */
function digitsOf(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 48 && c <= 57) out += s[i];
  }
  return out;
}

export interface NormalizeOptions {
  deduplicateByPhone: boolean;
  /** Only contacts[from, to) (default: all); indexes stay positions in the whole list. */
  from?: number;
  to?: number;
  /**
   * The first contact id seen with each number, carried from one range of the list to the next so
   * that ranges taken in order find the duplicates the whole list would.
   */
  firstOwnerOfPhone?: Map<string, string>;
}

export function normalizeContacts(contacts: RawContact[], opts: NormalizeOptions): { accepted: NormalizedContact[]; rejected: ContactRejection[] } {
  const accepted: NormalizedContact[] = [];
  const rejected: ContactRejection[] = [];
  const firstOwnerOfPhone = opts.firstOwnerOfPhone ?? new Map<string, string>();
  const to = Math.min(opts.to ?? contacts.length, contacts.length);

  // A plain loop: per-contact closures are measurably slow at 100k contacts.
  for (let i = opts.from ?? 0; i < to; i++) {
    const contact = contacts[i];
    const index = i + 1;
    const phoneNumber = normalizePhone(contact.phoneNumber);
    let problem: string | null = phoneNumber === null ? invalidPhoneMessage(contact.phoneNumber) : null;
    if (phoneNumber !== null && contact.metadataProblem !== null) {
      rejected.push({ index, external_id: contact.contactId, field: 'metadata', message: sentence(contact.metadataProblem) });
      continue;
    }
    if (phoneNumber !== null && opts.deduplicateByPhone) {
      const owner = firstOwnerOfPhone.get(phoneNumber);
      if (owner !== undefined) problem = `Duplicate phone number (same as contact ${owner})`;
      else firstOwnerOfPhone.set(phoneNumber, contact.contactId);
    }
    if (phoneNumber === null || problem !== null) {
      rejected.push({ index, external_id: contact.contactId, field: 'phone_number', message: problem! });
      continue;
    }

    // A checked contact's metadata is already sanitised (create-batch-contacts.ts).
    const metadata = normalizeSanitizedMetadata(contact.metadata);
    const normalized: NormalizedContact = {
      index,
      externalId: contact.contactId,
      name: contact.name,
      phoneNumber,
      alternatePhone: alternatePhoneFrom(metadata, phoneNumber),
      metadata,
    };
    if (contact.consent) normalized.consent = contact.consent;
    accepted.push(normalized);
  }

  return { accepted, rejected };
}

const sentence = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

function alternatePhoneFrom(metadata: Record<string, unknown>, primary: string): string | null {
  for (const key of ALTERNATE_PHONE_KEYS) {
    const value = metadata[key];
    const text = typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : value;
    if (typeof text !== 'string') continue;
    const phone = normalizePhone(text);
    // Retrying the number that just failed would only repeat the failure.
    if (phone !== null && phone !== primary) return phone;
  }
  return null;
}
