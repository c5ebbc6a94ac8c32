// The rules a create request's values must meet, whichever surface it came from. Value types are
// the surface's job (GraphQL's input types, the REST facade's lax reader); the checks here are
// worded as the contract's (pydantic v2) messages, which legacy clients parse, and reported at
// surface-neutral paths in the contract's field order. The request's shapes are in
// create-batch-types.ts, its field order and limits in create-batch-fields.ts, its contacts'
// checks in create-batch-contacts.ts.
import { literalReason, type IssuePath, type PathIssue } from './field-issue.ts';
import { BATCH_METADATA_LIMITS, MAX_NAME_LENGTH, MAX_TIMEZONE_LENGTH } from './limits.ts';
import { snakeCase } from './text-forms.ts';
import {
  computeScheduledAt,
  extractZoneName,
  isStoredYear,
  isValidScheduleDate,
  isValidScheduleTime,
  parseTimezoneLabel,
  STORED_YEARS_REASON,
} from './schedule.ts';
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
import { IDEMPOTENCY_KEY_MAX_LENGTH } from './create-batch-fields.ts';
import { BATCH_OPTION_NAMES, batchOption, type BatchOptionName, type BatchOptions } from './batch-options.ts';
import { voicemailProblem } from './voicemail.ts';
import type { CreateBatchInput, CreateBatchRequestDraft, RawContact } from './create-batch-types.ts';
import { ROOT, ValueChecker } from './create-batch-value-checker.ts';
import { checkContacts, ContactsCheck, EMPTY_CONTACTS_REASON } from './create-batch-contacts.ts';

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
  const scheduleDate = checkScheduleDate(
    c,
    c.formatted(ROOT, 'scheduleDate', c.present(request.scheduleDate), isValidScheduleDate, 'Invalid date, expected YYYY-MM-DD'),
  );
  const scheduleTime = c.formatted(ROOT, 'scheduleTime', c.present(request.scheduleTime), isValidScheduleTime, 'Invalid time, expected HH:MM');
  const timezone = checkTimezone(c, c.present(request.scheduleTimezone));
  const concurrency = c.integer(ROOT, 'concurrency', request.concurrency, 1);
  // Stored and sent to exactly as checked (src/services/webhooks/url-safety.ts).
  const callbackUrl = c.optionalText(ROOT, 'callbackUrl', request.callbackUrl)?.trim() ?? null;
  const maxDuration = c.integer(ROOT, 'maxDurationSecondsPerCall', request.maxDurationSecondsPerCall, 1, opts.maxCallDurationSeconds);
  const metadata = c.metadata(ROOT, 'metadata', request.metadata, BATCH_METADATA_LIMITS) ?? {};
  const contacts = readContacts(c, c.present(request.contacts));
  const idempotencyKey =
    request.idempotencyKey == null ? null : c.text(ROOT, 'idempotencyKey', request.idempotencyKey, { min: 1, max: IDEMPOTENCY_KEY_MAX_LENGTH });
  const retry = checkRetry(c, request.retry, opts.retryMinDelaySeconds ?? RETRY_DELAY_MIN_SECONDS);
  const expiresAt = checkExpiresAt(c, request.expiresAt, opts.now);
  const callingWindow = checkCallingWindow(c, request.callingWindow);
  const complianceProfiles = checkComplianceProfiles(c, request.complianceProfiles);
  const options = checkBatchOptions(c, request, opts.refused);

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
      options,
    },
  };
}

/** Each option checked as its kind says (batch-options.ts), then the rules between options. */
function checkBatchOptions(c: ValueChecker, request: CreateBatchRequestDraft, refused: ReadonlySet<string> | undefined): BatchOptions {
  const options = {} as Record<BatchOptionName, unknown>;
  const before = c.issues.count;
  for (const name of BATCH_OPTION_NAMES) {
    const spec = batchOption(name);
    switch (spec.kind) {
      case 'text':
        options[name] = c.optionalText(ROOT, name, request[name], spec.maxLength);
        break;
      case 'choice': {
        const value = request[name];
        options[name] = value == null ? null : spec.values.includes(value) ? value : c.fail(ROOT, name, literalReason(spec.values));
      }
    }
  }
  const checked = options as BatchOptions;
  // Like a pydantic model validator: only when every option is well-typed and passed its own check.
  const problem = c.issues.count === before && !BATCH_OPTION_NAMES.some((n) => refused?.has(n)) ? voicemailProblem(checked) : null;
  if (problem) c.fail(ROOT, 'voicemailMessage', problem);
  return checked;
}

function checkComplianceProfiles(c: ValueChecker, list: readonly string[] | null | undefined): ComplianceProfile[] {
  if (list == null) return [];
  const problems = complianceProfilesProblems(list);
  for (const [index, reason] of problems)
    c.fail(index === null ? ROOT : ['complianceProfiles'], index === null ? 'complianceProfiles' : String(index), reason);
  return problems.length > 0 ? [] : list.filter(isComplianceProfile);
}

function checkRetry(c: ValueChecker, retry: CreateBatchRequestDraft['retry'], minDelay: number): RetryPolicy | null {
  if (retry == null) return null;
  const at: IssuePath = ['retry'];
  const maxAttempts =
    retry.maxAttempts == null ? c.fail(at, 'maxAttempts', 'Field required') : c.integer(at, 'maxAttempts', retry.maxAttempts, 1, MAX_ATTEMPTS_LIMIT);
  const delaySeconds = c.integer(at, 'delaySeconds', retry.delaySeconds, minDelay, RETRY_DELAY_MAX_SECONDS) ?? DEFAULT_RETRY_DELAY_SECONDS;
  const on = retry.on == null ? DEFAULT_RETRY_ON : checkRetryOn(c, retry.on);
  if (maxAttempts === null || on === null) return null;
  return { maxAttempts, on, delaySeconds };
}

function checkRetryOn(c: ValueChecker, on: string[]): AttemptOutcome[] | null {
  if (on.length === 0) return c.fail(['retry'], 'on', 'List should have at least 1 item after validation, not 0');
  if (on.length > ATTEMPT_OUTCOMES.length * 4)
    return c.fail(['retry'], 'on', `List should have at most ${ATTEMPT_OUTCOMES.length * 4} items after validation, not ${on.length}`);
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
