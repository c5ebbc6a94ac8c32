// Request validation for POST/PUT /call-batches. Hand-written rather than a zod schema because
// legacy clients parse the details: each one must carry the original (pydantic v2) wording, and
// all of them must come out in the spec's field order.
import { laxBoolean, laxInteger } from './lax-scalars.ts';
import { exceedsDepth, isPlainRecord, MAX_METADATA_DEPTH, metadataSizeProblem, sanitizeJson } from './metadata.ts';
import {
  BATCH_METADATA_LIMITS,
  charLength,
  CONTACT_METADATA_LIMITS,
  MAX_NAME_LENGTH,
  MAX_PHONE_NUMBER_LENGTH,
  MAX_TIMEZONE_LENGTH,
  type MetadataLimits,
} from './limits.ts';
import {
  computeScheduledAt,
  extractZoneName,
  isValidScheduleDate,
  isValidScheduleTime,
  parseTimezoneLabel,
} from './schedule.ts';

export type StartMode = 'manual' | 'immediate' | 'scheduled';
export const START_MODES: readonly StartMode[] = ['manual', 'immediate', 'scheduled'];
export const CONTACT_STATUSES = ['pending', 'queued'] as const;

/** Guard against hostile input in every typed string field without a tighter limit of its own. */
export const MAX_STRING_LENGTH = 10_000;
export const IDEMPOTENCY_KEY_MAX_LENGTH = 128;
export const PHONE_NUMBER_MIN_LENGTH = 8;
// Integer columns are 32-bit; larger values cannot be stored, whatever the account limits say.
const MAX_INT = 2_147_483_647;

export interface RawContact {
  contactId: string;
  name: string | null;
  phoneNumber: string;
  metadata: Record<string, unknown>;
  /** Why the metadata is refused (too large): the contact is rejected, not the request. */
  metadataProblem: string | null;
  status: string;
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
}

export type ParseResult = { ok: true; value: CreateBatchInput } | { ok: false; details: string[] };

export function maxDurationDetail(limit: number): string {
  return `max_duration_seconds_per_call: Input should be less than or equal to ${limit}`;
}

export interface ParseOptions {
  requireIdempotencyKey: boolean;
  /** The account's max_call_duration_seconds: a larger max_duration_seconds_per_call is a detail too. */
  maxCallDurationSeconds?: number;
}

export function parseCreateBatchRequest(body: unknown, opts: ParseOptions): ParseResult {
  if (!isPlainRecord(body)) return { ok: false, details: ['body: Input should be a valid dictionary'] };
  const issues: string[] = [];
  const r = new FieldReader(body, '', issues);

  const [agentId, agentName] = oneOf(r, 'agent_id', 'agent_name');
  const [versionId, versionName] = oneOf(r, 'version_id', 'version_name');
  const voice = r.optionalText('voice', MAX_NAME_LENGTH);
  const didNumberId = readDidNumber(r);
  const interruption = r.boolean('interruption', true);
  const useAlternateNumber = r.boolean('use_alternate_number', true);
  const startMode = r.literal('start_mode', START_MODES, true);
  const scheduleDate = r.checked('schedule_date', isValidScheduleDate, 'Invalid date, expected YYYY-MM-DD');
  const scheduleTime = r.checked('schedule_time', isValidScheduleTime, 'Invalid time, expected HH:MM');
  const timezone = readTimezone(r);
  const concurrency = r.integer('concurrency', 1);
  // Stored and sent to exactly as checked (src/services/webhooks/url-safety.ts).
  const callbackUrl = r.optionalText('callback_url')?.trim() ?? null;
  const deduplicateByPhone = r.boolean('deduplicate_by_phone', false) ?? false;
  const recordingEnabled = r.boolean('recording_enabled', false);
  const maxDurationSecondsPerCall = r.integer('max_duration_seconds_per_call', 1, opts.maxCallDurationSeconds);
  const metadata = r.metadata('metadata', BATCH_METADATA_LIMITS) ?? {};
  const contacts = readContacts(r, issues);
  const idempotencyKey = opts.requireIdempotencyKey
    ? r.string('idempotency_key', { required: true, min: 1, max: IDEMPOTENCY_KEY_MAX_LENGTH })
    : null;

  if (issues.length > 0) return { ok: false, details: issues };
  return {
    ok: true,
    value: {
      agentId,
      agentName,
      versionId,
      versionName,
      voice,
      didNumberId,
      interruption: interruption!,
      useAlternateNumber: useAlternateNumber!,
      startMode: startMode!,
      scheduleDate: scheduleDate!,
      scheduleTime: scheduleTime!,
      timezone: timezone!,
      scheduledAt: computeScheduledAt(scheduleDate!, scheduleTime!, timezone!),
      concurrency,
      callbackUrl,
      deduplicateByPhone,
      recordingEnabled,
      maxDurationSecondsPerCall,
      metadata,
      contacts: contacts!,
      idempotencyKey,
    },
  };
}

/** Like a pydantic model validator: only complains when both fields are well-typed but absent. */
function oneOf(r: FieldReader, idKey: string, nameKey: string): [string | null, string | null] {
  const before = r.issueCount;
  const id = r.optionalText(idKey, MAX_NAME_LENGTH);
  const name = r.optionalText(nameKey, MAX_NAME_LENGTH);
  if (r.issueCount === before && id === null && name === null) {
    r.fail(idKey, `Value error, ${idKey} or ${nameKey} is required`);
  }
  return [id, name];
}

// A published sample sends `did_number`; it is read only when `did_number_id` is not given.
function readDidNumber(r: FieldReader): string | null {
  if (r.isGiven('did_number_id')) return r.optionalText('did_number_id', MAX_NAME_LENGTH);
  return r.optionalText('did_number', MAX_NAME_LENGTH);
}

function readTimezone(r: FieldReader): string | null {
  const label = r.string('schedule_timezone', { required: true, max: MAX_TIMEZONE_LENGTH });
  if (label === null) return null;
  const zone = parseTimezoneLabel(label);
  if (zone === null) r.fail('schedule_timezone', `Value error, Unknown time zone '${extractZoneName(label) ?? label}'`);
  return zone;
}

function readContacts(r: FieldReader, issues: string[]): RawContact[] | null {
  const list = r.list('contacts');
  if (list === null) return null;
  if (list.length === 0) return r.fail('contacts', 'List should have at least 1 item after validation, not 0');
  return list.map((item, i) => {
    if (!isPlainRecord(item)) {
      issues.push(`contacts.${i}: Input should be a valid dictionary`);
      return null as unknown as RawContact; // never returned: an issue was recorded
    }
    const c = new FieldReader(item, `contacts.${i}.`, issues);
    const contactId = c.string('contact_id', { required: true, min: 1, max: MAX_NAME_LENGTH })!;
    const name = c.string('name', { max: MAX_NAME_LENGTH });
    const phoneNumber = c.string('phone_number', { required: true, min: PHONE_NUMBER_MIN_LENGTH, max: MAX_PHONE_NUMBER_LENGTH })!;
    const sized = c.sizedMetadata('metadata', CONTACT_METADATA_LIMITS);
    // A contact whose metadata is too large is rejected on its own (validation_errors); its
    // metadata is neither walked further, nor copied, nor kept.
    const metadataProblem = sized?.problem ?? null;
    const metadata = sized?.value && !metadataProblem ? (sanitizeJson(sized.value) as Record<string, unknown>) : {};
    const status = c.literal('status', CONTACT_STATUSES, false) ?? 'pending';
    return { contactId, name, phoneNumber, metadata, metadataProblem, status };
  });
}

/**
 * Reads one object's fields, pushing "<path>: <reason>" on failure. Every reader returns null
 * both for an absent optional field and for a failure; callers that must tell the two apart
 * compare issueCount. An explicit null counts as absent for optional fields, but is a type
 * error for required ones (pydantic does not treat null as missing).
 */
class FieldReader {
  constructor(
    private readonly obj: Record<string, unknown>,
    private readonly prefix: string,
    private readonly issues: string[],
  ) {}

  get issueCount(): number {
    return this.issues.length;
  }

  fail(key: string, reason: string): null {
    this.issues.push(`${this.prefix}${key}: ${reason}`);
    return null;
  }

  isGiven(key: string): boolean {
    return this.get(key) != null;
  }

  string(key: string, o: { required?: boolean; min?: number; max?: number } = {}): string | null {
    const value = this.take(key, o.required ?? false);
    if (value === undefined) return null;
    if (typeof value !== 'string') return this.fail(key, 'Input should be a valid string');
    const max = Math.min(o.max ?? MAX_STRING_LENGTH, MAX_STRING_LENGTH);
    const length = charLength(value, max);
    if (o.min !== undefined && length < o.min) {
      return this.fail(key, `String should have at least ${o.min} ${o.min === 1 ? 'character' : 'characters'}`);
    }
    if (length > max) return this.fail(key, `String should have at most ${max} characters`);
    return value;
  }

  /** Optional string where blank means "not given" (legacy forms send "" for unset fields). */
  optionalText(key: string, max?: number): string | null {
    const value = this.string(key, { max });
    return value !== null && value.trim() !== '' ? value : null;
  }

  /** Required string that must also pass a format check. */
  checked(key: string, isValid: (value: string) => boolean, message: string): string | null {
    const value = this.string(key, { required: true });
    if (value === null) return null;
    return isValid(value) ? value : this.fail(key, `Value error, ${message}`);
  }

  boolean(key: string, required: boolean): boolean | null {
    const value = this.take(key, required);
    if (value === undefined) return null;
    const b = laxBoolean(value);
    return b.ok ? b.value : this.fail(key, b.reason);
  }

  integer(key: string, min: number, max: number = MAX_INT): number | null {
    const raw = this.take(key, false);
    if (raw === undefined) return null;
    const n = laxInteger(raw);
    if (!n.ok) return this.fail(key, n.reason);
    const value = n.value;
    if (value < min) return this.fail(key, `Input should be greater than or equal to ${min}`);
    const limit = Math.min(max, MAX_INT);
    if (value > limit) return this.fail(key, `Input should be less than or equal to ${limit}`);
    return value;
  }

  literal<T extends string>(key: string, allowed: readonly T[], required: boolean): T | null {
    const value = this.take(key, required);
    if (value === undefined) return null;
    if (allowed.includes(value as T)) return value as T;
    return this.fail(key, `Input should be ${quotedAlternatives(allowed)}`);
  }

  list(key: string): unknown[] | null {
    const value = this.take(key, true);
    if (value === undefined) return null;
    return Array.isArray(value) ? value : this.fail(key, 'Input should be a valid list');
  }

  /** Optional JSON object within `limits`, copied without prototype-polluting keys. */
  metadata(key: string, limits: MetadataLimits): Record<string, unknown> | null {
    const sized = this.sizedMetadata(key, limits);
    if (sized?.problem) return this.fail(key, `Value error, ${sized.problem}`);
    return sized?.value ? (sanitizeJson(sized.value) as Record<string, unknown>) : null;
  }

  /**
   * Optional JSON object, not yet copied, with the way it breaks `limits` (left to the caller to
   * report). The size walk stops at the limits, so only a value within them is walked for depth.
   */
  sizedMetadata(key: string, limits: MetadataLimits): { value: Record<string, unknown>; problem: string | null } | null {
    const value = this.take(key, false);
    if (value === undefined) return null;
    if (!isPlainRecord(value)) return this.fail(key, 'Input should be a valid dictionary');
    const problem = metadataSizeProblem(value, limits);
    if (problem) return { value, problem };
    if (exceedsDepth(value, MAX_METADATA_DEPTH)) {
      return this.fail(key, `Value error, metadata is nested too deeply (max depth ${MAX_METADATA_DEPTH})`);
    }
    return { value, problem: null };
  }

  private get(key: string): unknown {
    return Object.hasOwn(this.obj, key) ? this.obj[key] : undefined;
  }

  /** The value to validate, or undefined when there is nothing to validate (reported if required). */
  private take(key: string, required: boolean): unknown {
    const value = this.get(key);
    if (value === undefined) {
      if (required) this.fail(key, 'Field required');
      return undefined;
    }
    // A null on a required field falls through to the typed check and fails there.
    return value === null && !required ? undefined : value;
  }
}

/** "'a', 'b' or 'c'" as in pydantic's literal_error. */
function quotedAlternatives(values: readonly string[]): string {
  const quoted = values.map((v) => `'${v}'`);
  return quoted.length === 1 ? quoted[0] : `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)}`;
}
