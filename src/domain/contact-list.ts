// Contacts given as one JSON value (camelCase keys) rather than field by field: the type checks
// an input type would make, in one plain pass, with the contract's wording. At 100k contacts a
// GraphQL list of input objects costs ~4 µs a contact to coerce; this costs a small fraction.
import { literalReason, type IssuePath, type PathIssue } from './field-issue.ts';
import { isPlainRecord } from './metadata.ts';
import { CONTACT_STATUSES, type ContactRequest, type ContactStatus } from './create-batch-request.ts';

export const REASON_STRING = 'Input should be a valid string';
export const REASON_DICT = 'Input should be a valid dictionary';
export const REASON_LIST = 'Input should be a valid list';
export const REASON_REQUIRED = 'Field required';


export interface ContactListReading {
  /** One entry per item; `undefined` for an item that is not an object. */
  contacts: Array<Partial<ContactRequest> | undefined>;
  issues: PathIssue[];
}

export function readContactList(list: unknown, at: IssuePath): ContactListReading {
  const issues: PathIssue[] = [];
  if (!Array.isArray(list)) return { contacts: [], issues: [{ path: at, reason: REASON_LIST }] };
  const contacts: ContactListReading['contacts'] = new Array(list.length);
  // Plain loops and no per-contact closures or arrays: this runs for every contact of a batch.
  for (let i = 0; i < list.length; i++) {
    const item: unknown = list[i];
    if (!isPlainRecord(item)) {
      issues.push({ path: [...at, i], reason: REASON_DICT });
      continue;
    }
    contacts[i] = {
      contactId: readText(item, 'contactId', true, at, i, issues) ?? undefined,
      name: readText(item, 'name', false, at, i, issues),
      phoneNumber: readText(item, 'phoneNumber', true, at, i, issues) ?? undefined,
      metadata: item.metadata,
      status: readStatus(item.status, at, i, issues),
      timezone: readText(item, 'timezone', false, at, i, issues),
    };
  }
  return { contacts, issues };
}

/** The string, null when an optional one is absent, undefined after an issue. */
function readText(item: Record<string, unknown>, key: string, required: boolean, at: IssuePath, i: number, issues: PathIssue[]) {
  const value = item[key];
  if (typeof value === 'string') return value;
  if (value === undefined && required) issues.push({ path: [...at, i, key], reason: REASON_REQUIRED });
  else if (value == null && !required) return null;
  else issues.push({ path: [...at, i, key], reason: REASON_STRING });
  return undefined;
}

function readStatus(value: unknown, at: IssuePath, i: number, issues: PathIssue[]): ContactStatus | null | undefined {
  if (value == null) return null;
  if (CONTACT_STATUSES.includes(value as ContactStatus)) return value as ContactStatus;
  issues.push({ path: [...at, i, 'status'], reason: literalReason(CONTACT_STATUSES) });
  return undefined;
}
