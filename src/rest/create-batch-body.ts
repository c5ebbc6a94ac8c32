// The create request's JSON body read as the original service's pydantic model read it: snake_case
// names, booleans and integers coerced laxly from other JSON types, strings never coerced, null
// as absent for optional fields. It becomes the domain's typed request; a body with type problems
// is refused with the domain's value problems beside them, every detail in the contract's order.
import { complianceProfilesProblems } from '../domain/compliance/profiles.ts';
import { checkCreateBatchRequest, EXPIRES_AT_FORMAT_REASON } from '../domain/create-batch-request.ts';
import { contactCountProblem, CREATE_BATCH_FIELD_ORDER, START_MODES } from '../domain/create-batch-fields.ts';
import type { CreateBatchRequest, CreateBatchRequestDraft } from '../domain/create-batch-types.ts';
import { isRetryOutcome, parseInstant } from '../domain/retry-policy.ts';
import { ATTEMPT_OUTCOMES } from '../domain/attempt-outcome.ts';
import { WEEKDAYS } from '../domain/calling-window.ts';
import { BATCH_OPTION_NAMES, batchOption } from '../domain/batch-options.ts';

/** A list of 100,000 bad outcomes is reported by its first few. */
const MAX_LISTED_ON_ISSUES = 10;
import { readContactList, REASON_DICT, REASON_LIST, REASON_REQUIRED, REASON_STRING, type ContactKeys } from '../domain/contact-list.ts';
import { formatIssue, literalReason, type IssuePath, type PathIssue } from '../domain/field-issue.ts';
import { CappedIssues } from '../domain/capped-issues.ts';
import { laxBoolean, laxInteger } from '../domain/lax-scalars.ts';
import { isPlainRecord } from '../domain/metadata.ts';
import { MAX_INT } from '../domain/limits.ts';
import { snakeCase } from '../domain/text-forms.ts';
import { requestValidation, unprocessable } from '../errors.ts';

export interface CreateBodyOptions {
  /** PUT: `idempotency_key` is required; POST ignores it. */
  idempotent: boolean;
  /** The account's max_call_duration_seconds, for the value checks of a refused body. */
  maxCallDurationSeconds: number;
  /** The account's max_batch_size: a longer contact list is refused before any contact is read. */
  maxBatchSize?: number;
}

const own = (obj: Record<string, unknown>, key: string): unknown => (Object.hasOwn(obj, key) ? obj[key] : undefined);

/** A published sample sends `did_number`; it is read only when `did_number_id` is not given. */
function didNumberKey(body: Record<string, unknown>): string {
  return own(body, 'did_number_id') == null ? 'did_number' : 'did_number_id';
}

/** The body's name for a domain field: snake_case, and the alias the body used for the DID. */
export function restFieldName(body: unknown): (field: string) => string {
  const did = isPlainRecord(body) ? didNumberKey(body) : 'did_number_id';
  return (field) => (field === 'didNumberId' ? did : snakeCase(field));
}

/** The contract's `<field path>: <reason>` detail for an issue found in this body. */
export function restDetail(issue: PathIssue, body: unknown): string {
  return formatIssue(issue, restFieldName(body), 'body');
}

/** The typed request, or throws the contract's 422 listing the body's problems (capped-issues.ts). */
export function readCreateBatchBody(body: unknown, opts: CreateBodyOptions): CreateBatchRequest {
  if (!isPlainRecord(body)) throw requestValidation([`body: ${REASON_DICT}`]);
  const contacts = own(body, 'contacts');
  const tooMany = Array.isArray(contacts) ? contactCountProblem(contacts.length, opts.maxBatchSize) : null;
  if (tooMany) throw unprocessable(tooMany);
  const r = new LaxReader(body);
  const draft: CreateBatchRequestDraft = {
    agentId: r.text('agentId'),
    agentName: r.text('agentName'),
    versionId: r.text('versionId'),
    versionName: r.text('versionName'),
    voice: r.text('voice'),
    didNumberId: r.text('didNumberId', false, didNumberKey(body)),
    interruption: r.boolean('interruption', true) ?? undefined,
    useAlternateNumber: r.boolean('useAlternateNumber', true) ?? undefined,
    startMode: r.literal('startMode', START_MODES) ?? undefined,
    scheduleDate: r.text('scheduleDate', true) ?? undefined,
    scheduleTime: r.text('scheduleTime', true) ?? undefined,
    scheduleTimezone: r.text('scheduleTimezone', true) ?? undefined,
    concurrency: r.integer('concurrency'),
    callbackUrl: r.text('callbackUrl'),
    deduplicateByPhone: r.boolean('deduplicateByPhone', false),
    recordingEnabled: r.boolean('recordingEnabled', false),
    maxDurationSecondsPerCall: r.integer('maxDurationSecondsPerCall'),
    metadata: own(body, 'metadata'),
    contacts: r.contacts(),
    idempotencyKey: opts.idempotent ? (r.text('idempotencyKey', true) ?? undefined) : null,
    retry: r.retry(),
    expiresAt: r.instant('expiresAt'),
    callingWindow: r.callingWindow(),
    complianceProfiles: r.complianceProfiles(),
    ...r.options(),
  };
  if (r.issues.count === 0 && !r.beyondInt) return draft as CreateBatchRequest;
  const checked = checkCreateBatchRequest(draft, { maxCallDurationSeconds: opts.maxCallDurationSeconds, refused: r.refused });
  if (!checked.ok) r.issues.addAll(checked.issues);
  throw requestValidation(r.issues.list().map((i) => restDetail(i, body)));
}

/** Where the contract spells each field of a contact. */
const SNAKE_CONTACT_KEYS: ContactKeys = {
  contactId: 'contact_id',
  name: 'name',
  phoneNumber: 'phone_number',
  metadata: 'metadata',
  status: 'status',
  timezone: 'timezone',
  consent: 'consent',
};

const ABSENT = Symbol('absent');

/** Reads the body's fields by domain name, recording type issues; a refused field reads as undefined. */
class LaxReader {
  readonly issues = new CappedIssues(CREATE_BATCH_FIELD_ORDER);
  /** Top-level fields with a type problem, listed or only counted. */
  readonly refused = new Set<string>();
  /** An integer too large for GraphQL's Int: only the domain's range check can word its detail. */
  beyondInt = false;

  constructor(private readonly body: Record<string, unknown>) {}

  private fail(field: string, reason: string): undefined {
    this.add([field], reason);
    return undefined;
  }

  private add(path: IssuePath, reason: string): void {
    this.refused.add(String(path[0]));
    this.issues.add(path, reason);
  }

  /** ABSENT for a missing field (recorded if required) or an optional null; else the value to type-check. */
  private take(field: string, required: boolean, key = snakeCase(field)): unknown {
    const value = own(this.body, key);
    if (value === undefined || (value === null && !required)) {
      if (required) this.fail(field, REASON_REQUIRED);
      return ABSENT;
    }
    return value;
  }

  text(field: string, required = false, key?: string): string | null | undefined {
    const value = this.take(field, required, key);
    if (value === ABSENT) return required ? undefined : null;
    return typeof value === 'string' ? value : this.fail(field, REASON_STRING);
  }

  boolean(field: string, required: boolean): boolean | null | undefined {
    const value = this.take(field, required);
    if (value === ABSENT) return required ? undefined : null;
    const b = laxBoolean(value);
    return b.ok ? b.value : this.fail(field, b.reason);
  }

  integer(field: string): number | null | undefined {
    const value = this.take(field, false);
    if (value === ABSENT) return null;
    const n = laxInteger(value);
    if (!n.ok) return this.fail(field, n.reason);
    if (Math.abs(n.value) > MAX_INT) this.beyondInt = true;
    return n.value;
  }

  literal<T extends string>(field: string, allowed: readonly T[], required = true): T | null | undefined {
    const value = this.take(field, required);
    if (value === ABSENT) return required ? undefined : null;
    return allowed.includes(value as T) ? (value as T) : this.fail(field, literalReason(allowed));
  }

  /** ISO text, checked here because GraphQL's DateTime would refuse a bad one in its own words. */
  instant(field: string): string | null | undefined {
    const text = this.text(field);
    if (text == null) return text;
    return parseInstant(text) ? text : this.fail(field, EXPIRES_AT_FORMAT_REASON);
  }

  /** The batch options (domain/batch-options.ts), each read as its kind; a refused one is undefined. */
  options(): CreateBatchRequestDraft {
    const draft: Record<string, unknown> = {};
    for (const name of BATCH_OPTION_NAMES) {
      const spec = batchOption(name);
      switch (spec.kind) {
        case 'text':
          draft[name] = this.text(name);
          break;
        case 'choice':
          draft[name] = this.literal(name, spec.values, false);
      }
    }
    return draft as CreateBatchRequestDraft;
  }

  /** The retry object under domain names; with a type problem in it, undefined (its issues recorded). */
  retry(): CreateBatchRequestDraft['retry'] {
    const value = this.take('retry', false);
    if (value === ABSENT) return null;
    if (!isPlainRecord(value)) return this.fail('retry', REASON_DICT);
    const before = this.issues.count;
    const int = (key: string, field: string) => {
      const v = own(value, key);
      if (v == null) return null;
      const n = laxInteger(v);
      if (!n.ok) return void this.add(['retry', field], n.reason);
      if (Math.abs(n.value) > MAX_INT) this.beyondInt = true;
      return n.value;
    };
    // GraphQL's input type requires max_attempts and holds `on` to its enum: refused here in the
    // contract's words, or GraphQL would refuse them in its own.
    if (own(value, 'max_attempts') == null) this.add(['retry', 'maxAttempts'], REASON_REQUIRED);
    const maxAttempts = int('max_attempts', 'maxAttempts');
    const delaySeconds = int('delay_seconds', 'delaySeconds');
    const on = own(value, 'on');
    if (on != null && !Array.isArray(on)) this.add(['retry', 'on'], REASON_LIST);
    else if (on) {
      for (let i = 0; i < on.length && this.issues.count - before < MAX_LISTED_ON_ISSUES; i++) {
        if (typeof on[i] !== 'string') this.add(['retry', 'on', i], REASON_STRING);
        else if (!isRetryOutcome(on[i])) this.add(['retry', 'on', i], literalReason(ATTEMPT_OUTCOMES));
      }
    }
    if (this.issues.count > before) return undefined;
    return { maxAttempts: maxAttempts ?? undefined, delaySeconds, on: on as string[] | null | undefined };
  }

  /** The calling window under domain names; with a type problem in it, undefined (its issues recorded). */
  callingWindow(): CreateBatchRequestDraft['callingWindow'] {
    const value = this.take('callingWindow', false);
    if (value === ABSENT) return null;
    if (!isPlainRecord(value)) return this.fail('callingWindow', REASON_DICT);
    const before = this.issues.count;
    const text = (key: string, required: boolean) => {
      const v = own(value, key);
      if (v == null) return void (required && this.add(['callingWindow', key], REASON_REQUIRED));
      return typeof v === 'string' ? v : void this.add(['callingWindow', key], REASON_STRING);
    };
    const start = text('start', true);
    const end = text('end', true);
    const timezone = text('timezone', false);
    const days = own(value, 'days');
    if (days != null && !Array.isArray(days)) this.add(['callingWindow', 'days'], REASON_LIST);
    else if (days) {
      for (let i = 0; i < days.length && this.issues.count - before < MAX_LISTED_ON_ISSUES; i++) {
        if (typeof days[i] !== 'string') this.add(['callingWindow', 'days', i], REASON_STRING);
        else if (!(WEEKDAYS as readonly string[]).includes(days[i])) this.add(['callingWindow', 'days', i], literalReason(WEEKDAYS));
      }
    }
    if (this.issues.count > before) return undefined;
    return { start, end, timezone, days: days as string[] | null | undefined };
  }

  /** The batch's compliance profiles: a list of names (their values are the domain's to check). */
  complianceProfiles(): CreateBatchRequestDraft['complianceProfiles'] {
    const value = this.take('complianceProfiles', false);
    if (value === ABSENT) return null;
    if (!Array.isArray(value)) return this.fail('complianceProfiles', REASON_LIST);
    // Checked here in the domain's words: GraphQL's enum would refuse an unknown name in its own.
    const before = this.issues.count;
    const problems = complianceProfilesProblems(value);
    for (const [index, reason] of problems.slice(0, MAX_LISTED_ON_ISSUES))
      this.add(index === null ? ['complianceProfiles'] : ['complianceProfiles', index], reason);
    if (this.issues.count > before) return undefined;
    return value as string[];
  }

  /** The contacts under their domain names, so one reader checks them for both surfaces. */
  contacts(): CreateBatchRequestDraft['contacts'] {
    const value = this.take('contacts', true);
    if (value === ABSENT) return undefined;
    const reading = readContactList(value, ['contacts'], SNAKE_CONTACT_KEYS);
    if (reading.issues.length > 0) this.refused.add('contacts');
    this.issues.addAll(reading.issues);
    return Array.isArray(value) ? reading.contacts : undefined;
  }
}
