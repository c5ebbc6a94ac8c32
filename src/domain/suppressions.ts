// What may go on an account's do-not-call list: numbers read with the contacts' phone rules, so a
// number matches the calls it must stop whatever punctuation either was written with.
import { normalizePhone, type ContactRejection, type NormalizedContact } from './contacts.ts';
import type { PathIssue } from './field-issue.ts';
import { charLength, MAX_PHONE_NUMBER_LENGTH, MAX_SUPPRESSION_REASON_LENGTH, MAX_SUPPRESSIONS_PER_REQUEST } from './limits.ts';

export const SUPPRESSED_CONTACT_MESSAGE = "Phone number is on the account's do-not-call list";
/** The `disconnect_reason` of a call cancelled at dial time because its number was added to the list. */
export const SUPPRESSED_DISCONNECT_REASON = 'suppressed';

export type Checked<T> = { ok: true; value: T } | { ok: false; issues: PathIssue[] };

/** One number in E.164, or the reason it is refused. Bounded before libphonenumber sees it. */
export function suppressionNumber(raw: string): { number: string } | { reason: string } {
  if (charLength(raw, MAX_PHONE_NUMBER_LENGTH) > MAX_PHONE_NUMBER_LENGTH) {
    return { reason: `String should have at most ${MAX_PHONE_NUMBER_LENGTH} characters` };
  }
  const number = normalizePhone(raw);
  return number === null ? { reason: 'Invalid phone number' } : { number };
}

/** The numbers of an add request, E.164 and distinct, in the order given. */
export function checkSuppressionAdd(phoneNumbers: readonly string[], reason: string | null | undefined): Checked<string[]> {
  const issues: PathIssue[] = [];
  if (phoneNumbers.length === 0) issues.push({ path: ['phoneNumbers'], reason: 'List should have at least 1 item after validation, not 0' });
  if (phoneNumbers.length > MAX_SUPPRESSIONS_PER_REQUEST) {
    issues.push({
      path: ['phoneNumbers'],
      reason: `List should have at most ${MAX_SUPPRESSIONS_PER_REQUEST} items after validation, not ${phoneNumbers.length}`,
    });
  }
  if (reason != null && charLength(reason, MAX_SUPPRESSION_REASON_LENGTH) > MAX_SUPPRESSION_REASON_LENGTH) {
    issues.push({ path: ['reason'], reason: `String should have at most ${MAX_SUPPRESSION_REASON_LENGTH} characters` });
  }
  if (issues.length) return { ok: false, issues };
  const numbers = new Set<string>();
  phoneNumbers.forEach((raw, i) => {
    const r = suppressionNumber(raw);
    if ('reason' in r) issues.push({ path: ['phoneNumbers', i], reason: r.reason });
    else numbers.add(r.number);
  });
  return issues.length ? { ok: false, issues } : { ok: true, value: [...numbers] };
}

/**
 * Contacts whose number is on the list move to the rejections (in submission order, as the other
 * rejections); a listed alternate number is dropped from an accepted contact.
 */
export function withoutSuppressed(
  accepted: NormalizedContact[],
  rejected: ContactRejection[],
  suppressed: ReadonlySet<string>,
): { accepted: NormalizedContact[]; rejected: ContactRejection[] } {
  if (suppressed.size === 0) return { accepted, rejected };
  const kept: NormalizedContact[] = [];
  const refused: ContactRejection[] = [];
  for (const c of accepted) {
    if (suppressed.has(c.phoneNumber)) {
      refused.push({ index: c.index, external_id: c.externalId, field: 'phone_number', message: SUPPRESSED_CONTACT_MESSAGE });
      continue;
    }
    kept.push(c.alternatePhone !== null && suppressed.has(c.alternatePhone) ? { ...c, alternatePhone: null } : c);
  }
  return { accepted: kept, rejected: [...rejected, ...refused].sort((x, y) => x.index - y.index) };
}

/** The numbers of the accepted contacts the list is asked about: primaries and alternates. */
export function numbersToCheck(accepted: readonly NormalizedContact[]): string[] {
  const numbers: string[] = [];
  for (const c of accepted) {
    numbers.push(c.phoneNumber);
    if (c.alternatePhone !== null) numbers.push(c.alternatePhone);
  }
  return numbers;
}
