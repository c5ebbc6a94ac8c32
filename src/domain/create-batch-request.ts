// The create request as the domain sees it, whichever surface it came from, and the rules its
// values must meet. Value types are the surface's job (GraphQL's input types, the REST facade's
// lax reader); the checks here are worded as the contract's (pydantic v2) messages, which legacy
// clients parse, and reported at surface-neutral paths in the contract's field order.
import { literalReason, type FieldOrder, type IssuePath, type PathIssue } from './field-issue.ts';
import { CappedIssues } from './capped-issues.ts';
import { exceedsDepth, isPlainRecord, MAX_METADATA_DEPTH, metadataSizeProblem, sanitizedJson, sanitizeJson } from './metadata.ts';
import {
  BATCH_METADATA_LIMITS,
  charLength,
  CONTACT_METADATA_LIMITS,
  MAX_INT,
  MAX_NAME_LENGTH,
  MAX_PHONE_NUMBER_LENGTH,
  MAX_TIMEZONE_LENGTH,
  type MetadataLimits,
} from './limits.ts';
import { snakeCase } from './text-forms.ts';
import { computeScheduledAt, extractZoneName, isStoredYear, isValidScheduleDate, isValidScheduleTime, parseTimezoneLabel, STORED_YEARS_REASON } from './schedule.ts';
import {
  DEFAULT_RETRY_DELAY_SECONDS,
  DEFAULT_RETRY_ON,
  isRetryOutcome,
  MAX_ATTEMPTS_LIMIT,
  parseInstant,
  RETRY_DELAY_MAX_SECONDS,
  RETRY_DELAY_MIN_SECONDS,
  type RetryPolicy,
} from './retry-policy.ts';
import { ATTEMPT_OUTCOMES, type AttemptOutcome } from './attempt-outcome.ts';
import { complianceProfilesProblems, isComplianceProfile } from './compliance/profiles.ts';
import type { ComplianceProfile } from './compliance/rules-v1.ts';
import { callingWindowProblems, normalizeWindow, RECIPIENT_ZONE, type CallingWindow } from './calling-window.ts';
import { isListedZone, isZone } from './zones.ts';
import { checkConsent, type ConsentRecord, type ConsentRequest } from './consent.ts';

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

export interface ContactRequest {
  contactId: string;
  name?: string | null;
  phoneNumber: string;
  metadata?: unknown;
  status?: ContactStatus | null;
  /** IANA zone of the contact: its calling window must be open here as well as in every zone of the number dialled (a geographic zone; fixed offsets such as EST are refused). */
  timezone?: string | null;
  /** The contact's consent record (consent.ts): source, ISO timestamp, and its wording or a reference. */
  consent?: ConsentRequest | null;
}

/** The retry policy as requested; absent fields take their defaults. */
export interface RetryRequest {
  maxAttempts: number;
  on?: string[] | null;
  delaySeconds?: number | null;
}

/** A calling window as requested: `days` absent means every day, `timezone` absent means `recipient`. */
export interface CallingWindowRequest {
  start: string;
  end: string;
  days?: string[] | null;
  timezone?: string | null;
}

/** A create request with well-typed values; absent optional fields are null or undefined. */
export interface CreateBatchRequest {
  agentId?: string | null;
  agentName?: string | null;
  versionId?: string | null;
  versionName?: string | null;
  voice?: string | null;
  didNumberId?: string | null;
  interruption: boolean;
  useAlternateNumber: boolean;
  startMode: StartMode;
  scheduleDate: string;
  scheduleTime: string;
  scheduleTimezone: string;
  concurrency?: number | null;
  callbackUrl?: string | null;
  deduplicateByPhone?: boolean | null;
  recordingEnabled?: boolean | null;
  maxDurationSecondsPerCall?: number | null;
  metadata?: unknown;
  contacts: ContactRequest[];
  idempotencyKey?: string | null;
  retry?: RetryRequest | null;
  /** A Date from GraphQL; REST's text, checked here so both surfaces word its problems alike. */
  expiresAt?: Date | string | null;
  callingWindow?: CallingWindowRequest | null;
  /** Compliance profiles the batch opts into, besides the account's (compliance/rules-v1.ts). */
  complianceProfiles?: readonly string[] | null;
}

/**
 * A request whose surface found type problems: a refused field is left out (undefined), and its
 * other values are checked all the same, so one answer lists every problem.
 */
export type CreateBatchRequestDraft = {
  [K in keyof CreateBatchRequest]?: K extends 'contacts'
    ? Array<Partial<ContactRequest> | undefined>
    : K extends 'retry'
      ? Partial<RetryRequest> | null | undefined
      : K extends 'callingWindow'
        ? Partial<CallingWindowRequest> | null | undefined
        : CreateBatchRequest[K] | undefined;
};

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
  ],
  ['contactId', 'name', 'phoneNumber', 'metadata', 'status', 'timezone', 'consent', 'source', 'timestamp', 'text', 'reference', 'maxAttempts', 'on', 'delaySeconds', 'start', 'end', 'days'],
];

export interface RawContact {
  contactId: string;
  name: string | null;
  phoneNumber: string;
  /** Without forbidden keys at any depth (sanitizedJson): the submitted value, or a copy. Only read. */
  metadata: Record<string, unknown>;
  /** Why the metadata is refused (too large): the contact is rejected, not the request. */
  metadataProblem: string | null;
  status: ContactStatus;
  timezone: string | null;
  /** Present only when the contact gave one. */
  consent?: ConsentRecord;
}

export interface CreateBatchInput {
  agentId: string | null;
  agentName: string | null;
  versionId: string | null;
  versionName: string | null;
  voice: string | null;
  didNumberId: string | null;
  interruption: boolean;
  useAlternateNumber: boolean;
  startMode: StartMode;
  scheduleDate: string;
  scheduleTime: string;
  timezone: string;
  scheduledAt: Date;
  concurrency: number | null;
  callbackUrl: string | null;
  deduplicateByPhone: boolean;
  recordingEnabled: boolean | null;
  maxDurationSecondsPerCall: number | null;
  metadata: Record<string, unknown>;
  contacts: RawContact[];
  idempotencyKey: string | null;
  retry: RetryPolicy | null;
  expiresAt: Date | null;
  callingWindow: CallingWindow | null;
  /** The batch's own profiles, each once; the account's are added at create. */
  complianceProfiles: ComplianceProfile[];
}

const ROOT: IssuePath = [];

export type CheckResult = { ok: true; value: CreateBatchInput } | { ok: false; issues: PathIssue[] };

export interface CheckOptions {
  /** The account's max_call_duration_seconds caps max_duration_seconds_per_call. */
  maxCallDurationSeconds?: number;
  /** Top-level fields the surface already refused (a type problem): no rule reports them again. */
  refused?: ReadonlySet<string>;
  /** The moment `expires_at` must be later than. */
  now?: Date;
  /** The server's RETRY_MIN_DELAY_SECONDS (default 60). */
  retryMinDelaySeconds?: number;
}

/**
 * The request's own fields checked now and its contacts left to `contacts`, which checks them a
 * range at a time into the value's (at first empty) list: the create writes the first chunks while
 * the later ones are checked. A contact that fails refuses the whole request, in the words of
 * checkCreateBatchRequest (which the caller then runs).
 */
export function checkCreateBatchFields(request: CreateBatchRequestDraft, opts: CheckOptions = {}): { result: CheckResult; contacts: ContactsCheck } {
  const list = request.contacts ?? [];
  const result = checkRequest(request, opts, (c, value) => {
    if (value === undefined) return null;
    if (value.length === 0) return c.fail(ROOT, 'contacts', EMPTY_CONTACTS_REASON);
    return new Array<RawContact>(value.length);
  });
  return { result, contacts: new ContactsCheck(list, result.ok ? result.value.contacts : [], opts.now) };
}

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

type ContactsReader = (c: ValueChecker, list: CreateBatchRequestDraft['contacts']) => RawContact[] | null;

export function checkCreateBatchRequest(request: CreateBatchRequestDraft, opts: CheckOptions = {}): CheckResult {
  return checkRequest(request, opts, (c, list) => checkContacts(c, list, opts.now));
}

function checkRequest(request: CreateBatchRequestDraft, opts: CheckOptions, readContacts: ContactsReader): CheckResult {
  const c = new ValueChecker();
  const [agentId, agentName] = oneOf(c, request, opts.refused, 'agentId', 'agentName');
  const [versionId, versionName] = oneOf(c, request, opts.refused, 'versionId', 'versionName');
  const voice = c.optionalText(ROOT, 'voice', request.voice, MAX_NAME_LENGTH);
  const didNumberId = c.optionalText(ROOT, 'didNumberId', request.didNumberId, MAX_NAME_LENGTH);
  const scheduleDate = checkScheduleDate(c, c.formatted(ROOT, 'scheduleDate', c.present(request.scheduleDate), isValidScheduleDate, 'Invalid date, expected YYYY-MM-DD'));
  const scheduleTime = c.formatted(ROOT, 'scheduleTime', c.present(request.scheduleTime), isValidScheduleTime, 'Invalid time, expected HH:MM');
  const timezone = checkTimezone(c, c.present(request.scheduleTimezone));
  const concurrency = c.integer(ROOT, 'concurrency', request.concurrency, 1);
  // Stored and sent to exactly as checked (src/services/webhooks/url-safety.ts).
  const callbackUrl = c.optionalText(ROOT, 'callbackUrl', request.callbackUrl)?.trim() ?? null;
  const maxDuration = c.integer(ROOT, 'maxDurationSecondsPerCall', request.maxDurationSecondsPerCall, 1, opts.maxCallDurationSeconds);
  const metadata = c.metadata(ROOT, 'metadata', request.metadata, BATCH_METADATA_LIMITS) ?? {};
  const contacts = readContacts(c, c.present(request.contacts));
  const idempotencyKey = request.idempotencyKey == null ? null : c.text(ROOT, 'idempotencyKey', request.idempotencyKey, { min: 1, max: IDEMPOTENCY_KEY_MAX_LENGTH });
  const retry = checkRetry(c, request.retry, opts.retryMinDelaySeconds ?? RETRY_DELAY_MIN_SECONDS);
  const expiresAt = checkExpiresAt(c, request.expiresAt, opts.now);
  const callingWindow = checkCallingWindow(c, request.callingWindow);
  const complianceProfiles = checkComplianceProfiles(c, request.complianceProfiles);

  const interruption = c.present(request.interruption);
  const useAlternateNumber = c.present(request.useAlternateNumber);
  const startMode = c.present(request.startMode);
  // A draft whose surface reported a problem is never accepted, even when its values pass.
  if (c.issues.count > 0 || c.incomplete) return { ok: false, issues: c.issues.list() };
  return {
    ok: true,
    value: {
      agentId,
      agentName,
      versionId,
      versionName,
      voice,
      didNumberId,
      interruption,
      useAlternateNumber,
      startMode,
      scheduleDate: scheduleDate!,
      scheduleTime: scheduleTime!,
      timezone: timezone!,
      scheduledAt: computeScheduledAt(scheduleDate!, scheduleTime!, timezone!),
      concurrency,
      callbackUrl,
      deduplicateByPhone: request.deduplicateByPhone ?? false,
      recordingEnabled: request.recordingEnabled ?? null,
      maxDurationSecondsPerCall: maxDuration,
      metadata,
      contacts: contacts!,
      idempotencyKey,
      retry,
      expiresAt,
      callingWindow,
      complianceProfiles,
    },
  };
}

function checkComplianceProfiles(c: ValueChecker, list: readonly string[] | null | undefined): ComplianceProfile[] {
  if (list == null) return [];
  const problems = complianceProfilesProblems(list);
  for (const [index, reason] of problems) c.fail(index === null ? ROOT : ['complianceProfiles'], index === null ? 'complianceProfiles' : String(index), reason);
  return problems.length > 0 ? [] : list.filter(isComplianceProfile);
}

function checkRetry(c: ValueChecker, retry: CreateBatchRequestDraft['retry'], minDelay: number): RetryPolicy | null {
  if (retry == null) return null;
  const at: IssuePath = ['retry'];
  const maxAttempts = retry.maxAttempts == null ? c.fail(at, 'maxAttempts', 'Field required') : c.integer(at, 'maxAttempts', retry.maxAttempts, 1, MAX_ATTEMPTS_LIMIT);
  const delaySeconds = c.integer(at, 'delaySeconds', retry.delaySeconds, minDelay, RETRY_DELAY_MAX_SECONDS) ?? DEFAULT_RETRY_DELAY_SECONDS;
  const on = retry.on == null ? DEFAULT_RETRY_ON : checkRetryOn(c, retry.on);
  if (maxAttempts === null || on === null) return null;
  return { maxAttempts, on, delaySeconds };
}

function checkRetryOn(c: ValueChecker, on: string[]): AttemptOutcome[] | null {
  if (on.length === 0) return c.fail(['retry'], 'on', 'List should have at least 1 item after validation, not 0');
  if (on.length > ATTEMPT_OUTCOMES.length * 4) return c.fail(['retry'], 'on', `List should have at most ${ATTEMPT_OUTCOMES.length * 4} items after validation, not ${on.length}`);
  const before = c.issues.count;
  on.forEach((v, i) => {
    if (!isRetryOutcome(v)) c.fail(['retry', 'on'], String(i), literalReason(ATTEMPT_OUTCOMES));
  });
  if (c.issues.count > before) return null;
  return ATTEMPT_OUTCOMES.filter((o) => on.includes(o));
}

/** A well-formed date in the years the service stores exactly (schedule.ts, MIN_STORED_YEAR). */
function checkScheduleDate(c: ValueChecker, date: string | null): string | null {
  if (date === null || isStoredYear(Number(date.slice(0, 4)))) return date;
  return c.fail(ROOT, 'scheduleDate', `Value error, ${STORED_YEARS_REASON}`);
}

export const EXPIRES_AT_FORMAT_REASON = 'Value error, Invalid datetime, expected ISO 8601 with a time zone (e.g. 2026-12-01T18:00:00Z)';

function checkExpiresAt(c: ValueChecker, value: Date | string | null | undefined, now: Date | undefined): Date | null {
  if (value == null) return null;
  const at = typeof value === 'string' ? parseInstant(value) : value;
  if (at === null) return c.fail(ROOT, 'expiresAt', EXPIRES_AT_FORMAT_REASON);
  if (now && at.getTime() <= now.getTime()) return c.fail(ROOT, 'expiresAt', 'Value error, expires_at must be in the future');
  return at;
}

function checkCallingWindow(c: ValueChecker, w: CreateBatchRequestDraft['callingWindow']): CallingWindow | null {
  if (w == null) return null;
  const timezone = w.timezone ?? RECIPIENT_ZONE;
  const problems = callingWindowProblems({ ...w, timezone });
  for (const [field, reason] of problems) {
    const [name, index] = field.split('.');
    c.fail(index === undefined ? ['callingWindow'] : ['callingWindow', name], index ?? name, reason);
  }
  return problems.length > 0 ? null : normalizeWindow({ start: w.start!, end: w.end!, days: w.days, timezone });
}

/** Like a pydantic model validator: complains only when both fields are well-typed and absent. */
function oneOf(
  c: ValueChecker,
  request: CreateBatchRequestDraft,
  refused: ReadonlySet<string> | undefined,
  idKey: 'agentId' | 'versionId',
  nameKey: 'agentName' | 'versionName',
) {
  const before = c.issues.count;
  const id = c.optionalText(ROOT, idKey, request[idKey], MAX_NAME_LENGTH);
  const name = c.optionalText(ROOT, nameKey, request[nameKey], MAX_NAME_LENGTH);
  const typed = !refused?.has(idKey) && !refused?.has(nameKey);
  if (typed && c.issues.count === before && id === null && name === null) {
    c.fail(ROOT, idKey, `Value error, ${snakeCase(idKey)} or ${snakeCase(nameKey)} is required`);
  }
  return [id, name] as const;
}

function checkTimezone(c: ValueChecker, label: string | undefined): string | null {
  const text = c.text(ROOT, 'scheduleTimezone', label, { max: MAX_TIMEZONE_LENGTH });
  if (text === null) return null;
  const zone = parseTimezoneLabel(text);
  if (zone === null) c.fail(ROOT, 'scheduleTimezone', `Value error, Unknown time zone '${extractZoneName(text) ?? text}'`);
  return zone;
}

const EMPTY_CONTACTS_REASON = 'List should have at least 1 item after validation, not 0';

function checkContacts(c: ValueChecker, list: CreateBatchRequestDraft['contacts'], now: Date | undefined): RawContact[] | null {
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

/**
 * Checks well-typed values, collecting "<path>: <reason>" issues. Each check returns null both for
 * an absent value (null or undefined: nothing to check) and for a failure.
 */
class ValueChecker {
  readonly issues = new CappedIssues(CREATE_BATCH_FIELD_ORDER);
  /** A required value was missing: its surface reported it, so the request cannot pass. */
  incomplete = false;
  /** Contact zone names outside the runtime's list, lower-cased. */
  private readonly unlistedZones = new Set<string>();

  present<T>(value: T | undefined): T {
    if (value === undefined) this.incomplete = true;
    return value as T;
  }

  fail(at: IssuePath, field: string, reason: string): null {
    this.issues.add([...at, field], reason);
    return null;
  }

  text(at: IssuePath, field: string, value: string | null | undefined, o: { min?: number; max?: number } = {}): string | null {
    if (value == null) return null;
    const max = Math.min(o.max ?? MAX_STRING_LENGTH, MAX_STRING_LENGTH);
    const length = charLength(value, max);
    if (o.min !== undefined && length < o.min) {
      return this.fail(at, field, `String should have at least ${o.min} ${o.min === 1 ? 'character' : 'characters'}`);
    }
    if (length > max) return this.fail(at, field, `String should have at most ${max} characters`);
    return value;
  }

  /**
   * A contact's own zone. A name outside the runtime's list may cost ~75 µs to check (zones.ts), so
   * a request names at most MAX_UNLISTED_CONTACT_ZONES distinct ones, told apart as Intl reads them:
   * in any case.
   */
  contactZone(at: IssuePath, field: string, value: string | undefined): string | null {
    const zone = this.text(at, field, value, { max: 64 });
    if (zone === null || isListedZone(zone)) return zone;
    const key = zone.toLowerCase();
    if (!this.unlistedZones.has(key) && this.unlistedZones.size >= MAX_UNLISTED_CONTACT_ZONES) {
      return this.fail(at, field, `Value error, more than ${MAX_UNLISTED_CONTACT_ZONES} distinct time zones that are not canonical IANA names (such as US/Eastern or +05:00)`);
    }
    this.unlistedZones.add(key);
    return isZone(zone) ? zone : this.fail(at, field, `Value error, Unknown time zone '${zone}'`);
  }

  /** Optional text where blank means "not given" (legacy forms send "" for unset fields). */
  optionalText(at: IssuePath, field: string, value: string | null | undefined, max?: number): string | null {
    const text = this.text(at, field, value, { max });
    return text !== null && text.trim() !== '' ? text : null;
  }

  formatted(at: IssuePath, field: string, value: string | undefined, isValid: (value: string) => boolean, message: string): string | null {
    const text = this.text(at, field, value);
    if (text === null) return null;
    return isValid(text) ? text : this.fail(at, field, `Value error, ${message}`);
  }

  integer(at: IssuePath, field: string, value: number | null | undefined, min: number, max: number = MAX_INT): number | null {
    if (value == null) return null;
    if (value < min) return this.fail(at, field, `Input should be greater than or equal to ${min}`);
    const limit = Math.min(max, MAX_INT);
    if (value > limit) return this.fail(at, field, `Input should be less than or equal to ${limit}`);
    return value;
  }

  /** Optional JSON object within `limits`, copied without prototype-polluting keys. */
  metadata(at: IssuePath, field: string, value: unknown, limits: MetadataLimits): Record<string, unknown> | null {
    const sized = this.sizedMetadata(at, field, value, limits);
    if (sized?.problem) return this.fail(at, field, `Value error, ${sized.problem}`);
    return sized ? (sanitizeJson(sized.value) as Record<string, unknown>) : null;
  }

  /**
   * Optional JSON object, not yet copied, with the way it breaks `limits` (left to the caller to
   * report). The size walk stops at the limits, so only a value within them is walked for depth.
   */
  sizedMetadata(at: IssuePath, field: string, value: unknown, limits: MetadataLimits): { value: Record<string, unknown>; problem: string | null } | null {
    if (value == null) return null;
    if (!isPlainRecord(value)) return this.fail(at, field, 'Input should be a valid dictionary');
    const problem = metadataSizeProblem(value, limits);
    if (problem) return { value, problem };
    if (exceedsDepth(value, MAX_METADATA_DEPTH)) {
      return this.fail(at, field, `Value error, metadata is nested too deeply (max depth ${MAX_METADATA_DEPTH})`);
    }
    return { value, problem: null };
  }
}
