// The national do-not-call registry and reassigned-number results (docs/campaigns.md "National
// do-not-call registry"): the lines of their files, the compact form the registry is stored in,
// and what they do to a create's contacts. Pure: the database side is services/registry/.
import type { ContactRejection, NormalizedContact } from './contacts.ts';
import { parseInstant } from './retry-policy.ts';

/** A line longer than this (bytes, line end excluded) is a bad line; nothing longer is ever held. */
export const MAX_REGISTRY_LINE_BYTES = 64;
/** One request (or CLI part) of a registry or reassigned file, in bytes: the CLI splits files at line ends. */
export const MAX_REGISTRY_PART_BYTES = 16 * 1024 * 1024;
/** Numbers of one NPA-NXX (area code + exchange): a block is 10,000 bits = 1,250 bytes. */
export const BLOCK_NUMBERS = 10_000;
export const BLOCK_BYTES = BLOCK_NUMBERS / 8;
/** Bad lines named (by line number) in an import's answer; the rest are only counted. */
export const MAX_LISTED_BAD_LINES = 20;

export const REGISTRY_CONTACT_MESSAGE = 'Phone number is on the national do-not-call registry';
export const REASSIGNED_CONTACT_MESSAGE = "Phone number was reassigned on or after the contact's consent date";
/** The `disconnect_reason` of a call cancelled at dial time by the registry or a reassignment. */
export const REGISTRY_DISCONNECT_REASON = 'suppressed';

export type RegistryImportMode = 'add' | 'remove' | 'full';
export const REGISTRY_IMPORT_MODES: readonly RegistryImportMode[] = ['add', 'remove', 'full'];

/**
 * A registry line: the 10-digit number (`2015550123`, the registry's download format), also written
 * `201,5550123` (area code and number), `201-555-0123`, `(201) 555-0123`, `+12015550123` or
 * `12015550123`. Area code and exchange start with 2-9, as every NANP number's do. Returns the
 * number, or null for a bad line. Reads bytes: an import of 10^8 lines makes no string per line.
 */
export function parseRegistryBytes(bytes: Uint8Array, start: number, end: number): number | null {
  // The download format itself (ten digits, perhaps a CR): no separators to skip.
  const len = end - start;
  if (len === 10 || (len === 11 && bytes[end - 1] === 13)) {
    let n = 0;
    let i = start;
    for (; i < start + 10; i++) {
      const d = bytes[i] - 48;
      if (d < 0 || d > 9) break;
      n = n * 10 + d;
    }
    if (i === start + 10) return bytes[start] >= 50 && bytes[start + 3] >= 50 ? n : null;
  }
  return parseLooseRegistryBytes(bytes, start, end);
}

function parseLooseRegistryBytes(bytes: Uint8Array, start: number, end: number): number | null {
  let n = 0;
  let digits = 0;
  let first = -1;
  let fourth = -1;
  for (let i = start; i < end; i++) {
    const c = bytes[i];
    if (c >= 48 && c <= 57) {
      if (++digits > 11) return null;
      n = n * 10 + (c - 48);
      if (digits === 1) first = c - 48;
    } else if (!(c === 44 || c === 45 || c === 32 || c === 9 || c === 13 || c === 40 || c === 41 || c === 46 || (c === 43 && digits === 0))) {
      return null;
    }
  }
  if (digits === 11) {
    if (first !== 1) return null;
    n -= 10_000_000_000;
  } else if (digits !== 10) return null;
  const npa = Math.floor(n / 10_000_000);
  fourth = Math.floor(n / 1_000_000) % 10;
  if (npa < 200 || fourth < 2) return null;
  return n;
}

/** parseRegistryBytes of a string (tests, single numbers). */
export function parseRegistryNumber(line: string): number | null {
  const bytes = new TextEncoder().encode(line);
  return parseRegistryBytes(bytes, 0, bytes.length);
}

/** A reassigned-number line: `<number>,<YYYY-MM-DD>` (the number as parseRegistryNumber reads it). */
export function parseReassignedLine(line: string): { number: number; reassignedOn: string } | null {
  const comma = line.lastIndexOf(',');
  if (comma < 0) return null;
  const number = parseRegistryNumber(line.slice(0, comma));
  const day = line.slice(comma + 1).trim();
  if (number === null || !/^\d{4}-\d{2}-\d{2}$/.test(day) || parseInstant(`${day}T00:00:00Z`) === null) return null;
  return { number, reassignedOn: day };
}

/** A line with no digit at all (a header such as `phone_number,reassigned_on`, or a blank): skipped, not bad. */
export function isHeaderOrBlank(line: string): boolean {
  return !/\d/.test(line);
}

/** The block (NPA-NXX as an integer) and bit of a 10-digit number. */
export const blockOf = (number: number) => Math.floor(number / BLOCK_NUMBERS);
export const bitOf = (number: number) => number % BLOCK_NUMBERS;

/** Sets `number`'s bit in its block's bytes; bit 0 is the first byte's high bit, as PostgreSQL's bit(n) reads it. */
export function setBit(block: Uint8Array, bit: number): void {
  block[bit >> 3] |= 0x80 >> (bit & 7);
}

export function hasBit(block: Uint8Array, bit: number): boolean {
  return (block[bit >> 3] & (0x80 >> (bit & 7))) !== 0;
}

/** What the registry says about one contact's numbers at create, as the lookup found it. */
export interface RegistryVerdicts {
  /** Numbers on the registry. */
  listed: ReadonlySet<string>;
  /** reassignedKey(number, consent time) of numbers reassigned on or after that consent's date. */
  reassigned: ReadonlySet<string>;
}

/** Two contacts may share a number with different consent dates: the verdict is per pair. */
export const reassignedKey = (number: string, consentAt: string) => `${number} ${consentAt}`;

/** The numbers the registry can hold: US-shaped +1 numbers. */
export const isRegistryShaped = (e164: string) => /^\+1[2-9]\d{2}[2-9]\d{6}$/.test(e164);

/**
 * Contacts whose primary number the registry refuses move to the rejections (in submission order);
 * a refused alternate is dropped. The registry refuses a listed number unless the account exempts
 * contacts with consent and this contact has one; a reassignment after the consent refuses the
 * number whatever the account's setting (the consent was someone else's).
 */
export function withoutRegistryRefused(
  accepted: NormalizedContact[],
  rejected: ContactRejection[],
  verdicts: RegistryVerdicts,
  consentExempt: boolean,
): { accepted: NormalizedContact[]; rejected: ContactRejection[] } {
  if (verdicts.listed.size === 0 && verdicts.reassigned.size === 0) return { accepted, rejected };
  const refusal = (c: NormalizedContact, number: string): string | null => {
    if (c.consent && verdicts.reassigned.has(reassignedKey(number, c.consent.at.toISOString()))) return REASSIGNED_CONTACT_MESSAGE;
    if (verdicts.listed.has(number) && !(consentExempt && c.consent)) return REGISTRY_CONTACT_MESSAGE;
    return null;
  };
  const kept: NormalizedContact[] = [];
  const refused: ContactRejection[] = [];
  for (const c of accepted) {
    const message = refusal(c, c.phoneNumber);
    if (message !== null) {
      refused.push({ index: c.index, external_id: c.externalId, field: 'phone_number', message });
      continue;
    }
    kept.push(c.alternatePhone !== null && refusal(c, c.alternatePhone) !== null ? { ...c, alternatePhone: null } : c);
  }
  if (refused.length === 0 && kept.every((c, i) => c === accepted[i])) return { accepted, rejected };
  return { accepted: kept, rejected: [...rejected, ...refused].sort((x, y) => x.index - y.index) };
}

/** The registry-shaped numbers of the accepted contacts, each with its contact's consent time (null without one). */
export function registryQuestions(accepted: readonly NormalizedContact[]): { numbers: string[]; since: (string | null)[] } {
  const numbers: string[] = [];
  const since: (string | null)[] = [];
  for (const c of accepted) {
    const at = c.consent ? c.consent.at.toISOString() : null;
    if (isRegistryShaped(c.phoneNumber)) {
      numbers.push(c.phoneNumber);
      since.push(at);
    }
    if (c.alternatePhone !== null && isRegistryShaped(c.alternatePhone)) {
      numbers.push(c.alternatePhone);
      since.push(at);
    }
  }
  return { numbers, since };
}
