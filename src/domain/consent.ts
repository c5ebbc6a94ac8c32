// A contact's consent record (docs/campaigns.md "Consent records"): where the consent was given,
// when, and its wording or a pointer to the stored proof. Kept with the call so that every dial
// can be traced to the consent it relied on; it also exempts the contact from the national
// do-not-call registry where the account says so (registry.ts).
import { charLength } from './limits.ts';
import { parseInstant } from './retry-policy.ts';
import { isStoredYear } from './schedule.ts';
import type { PathIssue } from './field-issue.ts';

export const MAX_CONSENT_SOURCE_LENGTH = 64;
/** The consent's wording as shown to the person (e.g. a web form's checkbox text). */
export const MAX_CONSENT_TEXT_LENGTH = 2_000;
/** Where the proof is kept (a URL, a recording or document id). */
export const MAX_CONSENT_REFERENCE_LENGTH = 500;
/** A consent time this far ahead of the server's clock is taken as clock skew; further is refused. */
export const CONSENT_CLOCK_SKEW_MS = 5 * 60_000;

/** Letters, digits and `_ . : / -` and spaces, starting with a letter or digit: a label, never a formula or markup. */
export const CONSENT_SOURCE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9 _.:/-]*$/;
/** Suggested sources; any label of the pattern is accepted (the account's own vocabulary). */
export const CONSENT_SOURCES = ['web_form', 'paper_form', 'verbal_recorded', 'ivr', 'sms', 'email', 'existing_customer', 'other'] as const;

/** As the surfaces give it: strings (REST JSON, GraphQL String). */
export interface ConsentRequest {
  source?: string | null;
  timestamp?: string | null;
  text?: string | null;
  reference?: string | null;
}

export interface ConsentRecord {
  source: string;
  at: Date;
  text: string | null;
  reference: string | null;
}

type ConsentField = keyof ConsentRequest;

/**
 * The record, or its problems at `consent.<field>` (paths relative to the contact). `value` has
 * already been type-checked as an object of optional strings (contact-list.ts, GraphQL's input).
 */
export function checkConsent(value: ConsentRequest, now: Date | undefined): { ok: true; value: ConsentRecord } | { ok: false; issues: PathIssue[] } {
  const issues: PathIssue[] = [];
  const fail = (field: ConsentField, reason: string) => void issues.push({ path: ['consent', field], reason });
  const text = (field: ConsentField, max: number, required: boolean): string | null => {
    const v = value[field];
    if (v == null || (!required && v.trim() === '')) {
      if (required) fail(field, 'Field required');
      return null;
    }
    const length = charLength(v, max);
    if (required && length < 1) fail(field, 'String should have at least 1 character');
    else if (length > max) fail(field, `String should have at most ${max} characters`);
    else return v;
    return null;
  };
  const source = text('source', MAX_CONSENT_SOURCE_LENGTH, true);
  if (source !== null && !CONSENT_SOURCE_PATTERN.test(source)) {
    fail('source', "Value error, a label of letters, digits, spaces and _ . : / -, starting with a letter or digit (e.g. 'web_form')");
  }
  const stamp = text('timestamp', 40, true);
  let at: Date | null = null;
  if (stamp !== null) {
    at = parseInstant(stamp);
    if (at === null || !isStoredYear(at.getUTCFullYear())) {
      fail('timestamp', 'Value error, Invalid datetime, expected ISO 8601 with a time zone (e.g. 2026-03-01T14:30:00Z)');
    } else if (now && at.getTime() > now.getTime() + CONSENT_CLOCK_SKEW_MS) {
      fail('timestamp', 'Value error, consent cannot be given in the future');
    }
  }
  const wording = text('text', MAX_CONSENT_TEXT_LENGTH, false);
  const reference = text('reference', MAX_CONSENT_REFERENCE_LENGTH, false);
  if (issues.length || source === null || at === null) return { ok: false, issues };
  return { ok: true, value: { source, at, text: wording, reference } };
}
