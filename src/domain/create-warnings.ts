// What a create accepted but the client should know (issue 33, "warnings, not silence"): contacts
// that will not be called as the request reads, and batch settings that protect nobody. Not
// errors: the batch is created, the warnings ride beside the contract's fields (REST
// `data.warnings`, GraphQL `CreateCallBatchPayload.warnings`) and are kept with the batch so an
// idempotent replay returns them. Bounded: one entry per code (a fixed, small set), each listing
// at most MAX_WARNING_CONTACTS contacts in submission order and counting the rest, so a million
// contacts with a dropped alternate cost a few kilobytes and one comparison each past the cap.
import type { PathIssue } from './field-issue.ts';

export const WARNING_CODES = [
  'no_protective_window',
  'fixed_zone_window_other_zones',
  'window_never_opens',
  'window_opens_after_expiry',
  'alternate_window_never_opens',
  'alternate_on_do_not_call_list',
  'alternate_invalid',
  'agent_cannot_detect_opt_outs',
] as const;
export type WarningCode = (typeof WARNING_CODES)[number];

/** Contacts a warning lists; the others are counted in `contactsLeftOut`. */
export const MAX_WARNING_CONTACTS = 100;

export interface WarningContact {
  /** 1-based position in the submitted list, as validation_errors' index. */
  index: number;
  externalId: string;
}

export interface CreateWarning {
  code: WarningCode;
  message: string;
  /** Contacts concerned in all; null for a warning about the batch. */
  contactCount: number | null;
  /** The first MAX_WARNING_CONTACTS of them, in submission order. */
  contacts: WarningContact[];
  contactsLeftOut: number;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

/** The message of each contact warning, by how many contacts it concerns. */
const CONTACT_MESSAGES: Partial<Record<WarningCode, (n: number) => string>> = {
  fixed_zone_window_other_zones: (n) =>
    `The calling window has a fixed time zone, and ${plural(n, 'contact')} ${n === 1 ? 'is' : 'are'} in other zones: they are called at the window's hours there, not at their own local hours; use "timezone": "recipient" to call each in their own time`,
  window_never_opens: (n) =>
    `${plural(n, 'contact')} rejected: the calling window does not open within the scheduling horizon in all of ${n === 1 ? 'its' : 'their'} time zones (see validation_errors)`,
  window_opens_after_expiry: (n) =>
    `${plural(n, 'contact')}' calling window first opens at or after expires_at: ${n === 1 ? 'it' : 'they'} will expire without being called`,
  alternate_window_never_opens: (n) =>
    `${plural(n, 'alternate number')} ${n === 1 ? 'is' : 'are'} never dialled: the calling window does not open within the scheduling horizon in all of ${n === 1 ? 'its' : 'their'} zones (and the contact's), or no zone is known for ${n === 1 ? 'it' : 'them'}`,
  alternate_on_do_not_call_list: (n) =>
    `${plural(n, 'alternate number')} ${n === 1 ? 'is' : 'are'} on the account's do-not-call list and will not be dialled (the primary number is called)`,
  alternate_invalid: (n) => `${plural(n, 'contact')}' alternate number is invalid or the same as the primary number and will not be dialled`,
};

export const NO_PROTECTIVE_WINDOW_MESSAGE =
  'No calling window applies (none on the batch, no account default or enforced window, no compliance profile): calls may be placed at any hour of the recipient\'s day, e.g. 03:00 local; give a calling_window such as {"start": "08:00", "end": "21:00", "timezone": "recipient"}';
export const AGENT_CANNOT_DETECT_OPT_OUTS_MESSAGE =
  "The batch's agent cannot detect opt-outs: it names no optOutOutcomeKey and its optOutDetection is off, so a contact who asks not to be called again is not put on the do-not-call list";

/** Collects a create's warnings as contacts are screened; `list()` gives them in code order. */
export class CreateWarnings {
  private readonly contacts = new Map<WarningCode, { listed: WarningContact[]; count: number }>();
  private readonly batch = new Map<WarningCode, string>();

  /** A contact concerned by `code`; contacts arrive in submission order. */
  contact(code: WarningCode, index: number, externalId: string): void {
    let entry = this.contacts.get(code);
    if (!entry) this.contacts.set(code, (entry = { listed: [], count: 0 }));
    entry.count++;
    if (entry.listed.length < MAX_WARNING_CONTACTS) entry.listed.push({ index, externalId });
  }

  /** A warning about the batch as a whole. */
  about(code: WarningCode, message: string): void {
    this.batch.set(code, message);
  }

  list(): CreateWarning[] {
    const out: CreateWarning[] = [];
    for (const code of WARNING_CODES) {
      const message = this.batch.get(code);
      if (message !== undefined) out.push({ code, message, contactCount: null, contacts: [], contactsLeftOut: 0 });
      const entry = this.contacts.get(code);
      if (entry) {
        // Chunks may report out of order (rejections are found per step): listed in submission order.
        const listed = [...entry.listed].sort((a, b) => a.index - b.index);
        out.push({
          code,
          message: CONTACT_MESSAGES[code]!(entry.count),
          contactCount: entry.count,
          contacts: listed,
          contactsLeftOut: entry.count - listed.length,
        });
      }
    }
    return out;
  }
}

/**
 * A scheduled batch whose start is at or after its `expires_at` could never dial: refused (422) as
 * a request-validation problem of `expires_at` rather than accepted and expired unseen. expires_at
 * is this service's own field (the contract has none), so refusing it changes no contract case.
 * Manual batches have no start to compare; immediate ones start now, before a future expiry.
 */
export function startAfterExpiryIssue(startMode: string, scheduledAt: Date, expiresAt: Date | null): PathIssue | null {
  if (startMode !== 'scheduled' || expiresAt === null || scheduledAt.getTime() < expiresAt.getTime()) return null;
  return {
    path: ['expiresAt'],
    reason: `Value error, expires_at must be after the scheduled start (${scheduledAt.toISOString()}): the batch would expire before it dials`,
  };
}
