// Contacts given as one JSON value (camelCase keys) rather than field by field: the type checks
// an input type would make, in one plain pass, with the contract's wording. At 100k contacts a
// GraphQL list of input objects costs ~4 µs a contact to coerce; this costs a small fraction.
import { literalReason, type IssuePath, type PathIssue } from './field-issue.ts';
import { isPlainRecord } from './metadata.ts';
import { CONTACT_STATUSES, CREATE_BATCH_FIELD_ORDER, type ContactStatus } from './create-batch-fields.ts';
import type { ContactRequest } from './create-batch-types.ts';
import { CappedIssues } from './capped-issues.ts';
import type { ConsentRequest } from './consent.ts';

export const REASON_STRING = 'Input should be a valid string';
export const REASON_DICT = 'Input should be a valid dictionary';
export const REASON_LIST = 'Input should be a valid list';
export const REASON_REQUIRED = 'Field required';

export interface ContactListReading {
  /** One entry per item; `undefined` for an item that is not an object. */
  contacts: Array<Partial<ContactRequest> | undefined>;
  /** The first MAX_LISTED_ISSUES in field order, then a line counting the rest. */
  issues: PathIssue[];
}

/** Where each field of a contact is found in an item: the domain's names, or a surface's spelling. */
export type ContactKeys = Readonly<Record<'contactId' | 'name' | 'phoneNumber' | 'metadata' | 'status' | 'timezone' | 'consent', string>>;

export const CONTACT_KEYS: ContactKeys = {
  contactId: 'contactId',
  name: 'name',
  phoneNumber: 'phoneNumber',
  metadata: 'metadata',
  status: 'status',
  timezone: 'timezone',
  consent: 'consent',
};

// Marks a list this reader returned without issues, so a second reading of the same list (the REST
// facade reads the body, then GraphQL parses the same value as its variable) is skipped. A symbol
// can't come from JSON, so a client can't mark a list it sends.
const READ = Symbol('contact list read');

/** True when `list` is a reading of this reader that had no issues. */
export function isReadContactList(list: unknown): list is ContactRequest[] {
  return Array.isArray(list) && (list as unknown as Record<symbol, unknown>)[READ] === true;
}

/**
 * Issues are named by the domain's field names whatever `keys` the items use. The list's length is
 * the caller's to check first (contactCountProblem): this reads every item.
 */
export function readContactList(list: unknown, at: IssuePath, keys: ContactKeys = CONTACT_KEYS): ContactListReading {
  const issues = new CappedIssues(CREATE_BATCH_FIELD_ORDER);
  if (!Array.isArray(list)) return { contacts: [], issues: [{ path: at, reason: REASON_LIST }] };
  const contacts: ContactListReading['contacts'] = new Array(list.length);
  // Plain loops and no per-contact closures or arrays: this runs for every contact of a batch.
  for (let i = 0; i < list.length; i++) {
    const item: unknown = list[i];
    if (!isPlainRecord(item)) {
      issues.add([...at, i], REASON_DICT);
      continue;
    }
    contacts[i] = {
      contactId: readText(item, 'contactId', keys.contactId, true, at, i, issues) ?? undefined,
      name: readText(item, 'name', keys.name, false, at, i, issues),
      phoneNumber: readText(item, 'phoneNumber', keys.phoneNumber, true, at, i, issues) ?? undefined,
      metadata: own(item, keys.metadata),
      status: readStatus(own(item, keys.status), at, i, issues),
      timezone: readText(item, 'timezone', keys.timezone, false, at, i, issues),
      consent: readConsent(own(item, keys.consent), at, i, issues),
    };
  }
  if (issues.count === 0) Object.defineProperty(contacts, READ, { value: true });
  return { contacts, issues: issues.list() };
}

const own = (item: Record<string, unknown>, key: string): unknown => (Object.hasOwn(item, key) ? item[key] : undefined);

/** The string, null when an optional one is absent, undefined after an issue. */
function readText(item: Record<string, unknown>, field: string, key: string, required: boolean, at: IssuePath, i: number, issues: CappedIssues) {
  const value = own(item, key);
  if (typeof value === 'string') return value;
  if (value === undefined && required) issues.add([...at, i, field], REASON_REQUIRED);
  else if (value == null && !required) return null;
  else issues.add([...at, i, field], REASON_STRING);
  return undefined;
}

function readStatus(value: unknown, at: IssuePath, i: number, issues: CappedIssues): ContactStatus | null | undefined {
  if (value == null) return null;
  if (CONTACT_STATUSES.includes(value as ContactStatus)) return value as ContactStatus;
  issues.add([...at, i, 'status'], literalReason(CONTACT_STATUSES));
  return undefined;
}

/** The consent object's fields as strings (their values are the domain's to check: consent.ts). */
function readConsent(value: unknown, at: IssuePath, i: number, issues: CappedIssues): ConsentRequest | null | undefined {
  if (value == null) return null;
  if (!isPlainRecord(value)) {
    issues.add([...at, i, 'consent'], REASON_DICT);
    return undefined;
  }
  const consent: ConsentRequest = {};
  let ok = true;
  for (const key of ['source', 'timestamp', 'text', 'reference'] as const) {
    const v = own(value, key);
    if (v == null) continue;
    if (typeof v === 'string') consent[key] = v;
    else {
      issues.add([...at, i, 'consent', key], REASON_STRING);
      ok = false;
    }
  }
  return ok ? consent : undefined;
}
