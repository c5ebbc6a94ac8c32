// The create request's contacts, checked in order: all at once, or a range at a time while the
// create writes the chunks before (ContactsCheck).
import type { IssuePath } from './field-issue.ts';
import { sanitizedJson } from './metadata.ts';
import { CONTACT_METADATA_LIMITS, MAX_NAME_LENGTH, MAX_PHONE_NUMBER_LENGTH } from './limits.ts';
import { checkConsent } from './consent.ts';
import { PHONE_NUMBER_MIN_LENGTH } from './create-batch-fields.ts';
import type { ContactRequest, CreateBatchRequestDraft, RawContact } from './create-batch-types.ts';
import { ROOT, ValueChecker } from './create-batch-value-checker.ts';

export const EMPTY_CONTACTS_REASON = 'List should have at least 1 item after validation, not 0';

/** Checks a request's contacts in order, a range at a time, as checkCreateBatchRequest does all at once. */
export class ContactsCheck {
  // One checker for every range: its cap on distinct unlisted zones counts the whole list.
  private readonly c = new ValueChecker();
  private checkedTo = 0;

  constructor(
    private readonly list: ReadonlyArray<Partial<ContactRequest> | undefined>,
    private readonly contacts: RawContact[],
    private readonly now: Date | undefined,
  ) {}

  /** Checks the contacts before index `to` not yet checked; false once any contact has failed. */
  upTo(to: number): boolean {
    const end = Math.min(to, this.list.length);
    for (let i = this.checkedTo; i < end; i++) {
      const item = this.list[i];
      if (item === undefined) this.c.incomplete = true;
      else this.contacts[i] = checkContact(this.c, item, ['contacts', i], this.now);
    }
    this.checkedTo = Math.max(this.checkedTo, end);
    return this.c.issues.count === 0 && !this.c.incomplete;
  }

  /** Checks every contact left; false when any failed. */
  all(): boolean {
    return this.upTo(this.list.length);
  }
}

export function checkContacts(c: ValueChecker, list: CreateBatchRequestDraft['contacts'], now: Date | undefined): RawContact[] | null {
  if (list === undefined) return null;
  if (list.length === 0) return c.fail(ROOT, 'contacts', EMPTY_CONTACTS_REASON);
  const contacts: RawContact[] = new Array(list.length);
  // A plain loop: per-contact closures are measurably slow at 100k contacts.
  for (let i = 0; i < list.length; i++) {
    const item = list[i];
    if (item === undefined) c.incomplete = true;
    else contacts[i] = checkContact(c, item, ['contacts', i], now);
  }
  return contacts;
}

function checkContact(c: ValueChecker, item: Partial<ContactRequest>, at: IssuePath, now: Date | undefined): RawContact {
  const contactId = c.text(at, 'contactId', c.present(item.contactId), { min: 1, max: MAX_NAME_LENGTH })!;
  const name = c.text(at, 'name', item.name ?? undefined, { max: MAX_NAME_LENGTH });
  const phoneNumber = c.text(at, 'phoneNumber', c.present(item.phoneNumber), { min: PHONE_NUMBER_MIN_LENGTH, max: MAX_PHONE_NUMBER_LENGTH })!;
  const sized = c.sizedMetadata(at, 'metadata', item.metadata, CONTACT_METADATA_LIMITS);
  // A contact whose metadata is too large is rejected on its own (validation_errors); its
  // metadata is neither walked further, nor copied, nor kept.
  const metadataProblem = sized?.problem ?? null;
  const metadata = sized && !metadataProblem ? (sanitizedJson(sized.value) as Record<string, unknown>) : {};
  const timezone = c.contactZone(at, 'timezone', item.timezone ?? undefined);
  const contact: RawContact = { contactId, name, phoneNumber, metadata, metadataProblem, status: item.status ?? 'pending', timezone };
  if (item.consent != null) {
    const checked = checkConsent(item.consent, now);
    if (checked.ok) contact.consent = checked.value;
    else for (const issue of checked.issues) c.fail([...at, ...issue.path.slice(0, -1)], String(issue.path.at(-1)), issue.reason);
  }
  return contact;
}
