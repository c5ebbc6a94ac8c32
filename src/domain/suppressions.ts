// What may go on an account's do-not-call list: numbers read with the contacts' phone rules, so a
// number matches the calls it must stop whatever punctuation either was written with.
import { normalizePhone } from './contacts.ts';
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
