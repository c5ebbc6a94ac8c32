// The create request's contract outside its rules: the field order its problems are listed in,
// the enumerated values, and the limits on hostile input that every check (and the REST and
// OpenAPI surfaces) share. Its own module so the checker and the surfaces import it without a cycle.
import type { FieldOrder } from './field-issue.ts';
import { BATCH_OPTION_NAMES } from './batch-options.ts';

export type StartMode = 'manual' | 'immediate' | 'scheduled';
export const START_MODES: readonly StartMode[] = ['manual', 'immediate', 'scheduled'];
export type ContactStatus = 'pending' | 'queued';
export const CONTACT_STATUSES: readonly ContactStatus[] = ['pending', 'queued'];

/** Guard against hostile input in every string field without a tighter limit of its own. */
export const MAX_STRING_LENGTH = 10_000;
export const IDEMPOTENCY_KEY_MAX_LENGTH = 128;
export const PHONE_NUMBER_MIN_LENGTH = 8;
/** Distinct contact zones outside the runtime's list that one request may name (docs/api.md, Limits). */
export const MAX_UNLISTED_CONTACT_ZONES = 100;
/**
 * Contacts one create may carry whatever its account allows, checked before the account is read
 * (docs/api.md, Limits): a list is counted before any of its items is looked at.
 */
export const MAX_CONTACTS_PER_REQUEST = 1_000_000;

/**
 * Why a list of `count` contacts is refused before any of them is read (the account's
 * max_batch_size, in the contract's words, then the ceiling); null when the count fits.
 */
export function contactCountProblem(count: number, maxBatchSize?: number): string | null {
  if (maxBatchSize !== undefined && count > maxBatchSize) {
    return `Too many contacts: ${count} submitted, the account's max_batch_size is ${maxBatchSize}`;
  }
  if (count > MAX_CONTACTS_PER_REQUEST) return `Too many contacts: ${count} submitted, a request may carry at most ${MAX_CONTACTS_PER_REQUEST}`;
  return null;
}

/** The contract's field order, the order in which details are listed. */
export const CREATE_BATCH_FIELD_ORDER: FieldOrder = [
  [
    'agentId',
    'agentName',
    'versionId',
    'versionName',
    'voice',
    'didNumberId',
    'interruption',
    'useAlternateNumber',
    'startMode',
    'scheduleDate',
    'scheduleTime',
    'scheduleTimezone',
    'concurrency',
    'callbackUrl',
    'deduplicateByPhone',
    'recordingEnabled',
    'maxDurationSecondsPerCall',
    'metadata',
    'contacts',
    'idempotencyKey',
    'retry',
    'expiresAt',
    'callingWindow',
    'complianceProfiles',
    ...BATCH_OPTION_NAMES,
  ],
  [
    'contactId',
    'name',
    'phoneNumber',
    'metadata',
    'status',
    'timezone',
    'consent',
    'source',
    'timestamp',
    'text',
    'reference',
    'maxAttempts',
    'on',
    'delaySeconds',
    'start',
    'end',
    'days',
  ],
];
