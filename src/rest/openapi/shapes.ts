// The contract's shapes as JSON Schema, one per shape, each typed against the output of the one
// mapper that produces it (services/representations.ts, the routes' own mappers): a field added,
// renamed or dropped there does not compile until its schema here follows.
import { COMPLIANCE_PROFILES, COMPLIANCE_RULES_VERSION } from '../../domain/compliance/rules-v1.ts';
import type { BatchDetails, CallingWindowOut, CallRecord, ConsentOut, RetryOut } from '../../services/representations.ts';
import { CONSENT_SOURCE_PATTERN, CONSENT_SOURCES, MAX_CONSENT_REFERENCE_LENGTH, MAX_CONSENT_SOURCE_LENGTH, MAX_CONSENT_TEXT_LENGTH } from '../../domain/consent.ts';
import { OPENING_HORIZON_DAYS, RECIPIENT_ZONE, WEEKDAYS } from '../../domain/calling-window.ts';
import {
  DEFAULT_RETRY_DELAY_SECONDS,
  DEFAULT_RETRY_ON,
  MAX_ATTEMPTS_LIMIT,
  RETRY_DELAY_MAX_SECONDS,
  RETRY_DELAY_MIN_SECONDS,
} from '../../domain/retry-policy.ts';
import { ATTEMPT_OUTCOMES } from '../../domain/attempt-outcome.ts';
import { BATCH_STATUSES } from '../../domain/batch-state.ts';
import { CALL_STATUSES, TRANSCRIPT_STATUSES } from '../../domain/call-state.ts';
import { CONTACT_STATUSES, IDEMPOTENCY_KEY_MAX_LENGTH, PHONE_NUMBER_MIN_LENGTH, START_MODES } from '../../domain/create-batch-fields.ts';
import {
  MAX_NAME_LENGTH,
  MAX_PHONE_NUMBER_LENGTH,
  MAX_SUPPRESSION_REASON_LENGTH,
  MAX_SUPPRESSIONS_PER_REQUEST,
  MAX_TIMEZONE_LENGTH,
} from '../../domain/limits.ts';
import type { AccountOut, AddSuppressionsOut, BatchListItem, CreateResult, Pagination, SuppressionOut } from '../mappers.ts';
import type { ShapeName } from './route-doc.ts';
import type { ComplianceReportOut, DialAuditEntryOut, DialAuditOut } from '../compliance-mappers.ts';
import { DIAL_ALLOWED_BY } from '../../domain/dial-audit.ts';
import { BLOCKED_STAGES } from '../../services/batches/compliance-report.ts';
import { MAX_WARNING_CONTACTS, WARNING_CODES } from '../../domain/create-warnings.ts';
import { MAX_LISTED_REJECTIONS } from '../../errors.ts';
import { bool, closed, count, int, type JsonSchema, nullable, oneOfStrings, ref, str, timestamp } from './json-schema.ts';

const batchStatus = oneOfStrings(BATCH_STATUSES, 'Batch status');
const callStatus = oneOfStrings(CALL_STATUSES, 'Call status');
const batchId = str('Batch id, `sched_<id>`', { pattern: '^sched_' });
const agentId = str('Agent id, `agt-<id>`');
const versionId = str('Prompt version id, `pmt-<id>`');
const name = (description: string) => str(description, { maxLength: MAX_NAME_LENGTH });
// additionalProperties stated: without it generated clients type an object with no properties as `Record<string, never>`.
const metadata = (description: string): JsonSchema => nullable({ type: 'object', additionalProperties: true, description });

type ValidationErrorOut = CreateResult['validation_errors'][number];
type Limits = AccountOut['limits'];

const callRecord = closed<CallRecord>(
  {
    call_id: str('Call id, `call_<id>`', { pattern: '^call_' }),
    batch_id: batchId,
    contact_id: str("The caller's contact id"),
    external_id: str('Same value as contact_id'),
    phone_number: str('The number dialled (the alternate one when it was used)'),
    agent_id: agentId,
    agent_name: str(),
    version_id: versionId,
    version_name: str(),
    voice: str('Voice used'),
    status: callStatus,
    call_status: { ...callStatus, description: 'Same value as status' },
    transcript_status: nullable(oneOfStrings(TRANSCRIPT_STATUSES, 'null for a call not yet made')),
    duration_seconds: nullable(count('Total call duration')),
    answer_duration_seconds: nullable(count('Duration after answer')),
    timestamp: nullable(timestamp()),
    created_at: timestamp(),
    completed_at: nullable(timestamp()),
    hangup_by: nullable(oneOfStrings(['agent', 'user', 'system'], 'Who ended the call')),
    disconnect_reason: nullable(str('Why the call ended, e.g. `normal`, `agent_hangup`')),
    summary: nullable(str('AI-generated call summary')),
    outcomes: nullable({
      type: 'object',
      // Every analyser here writes strings; a value stored another way is passed through as stored.
      description: "AI-extracted outcomes, string values keyed by the agent's configured outcome keys",
      additionalProperties: true,
    }),
    recording_available: nullable(bool('Whether a recording exists')),
    recording_url: nullable(str('Signed, expiring link to the recording')),
    llm_transcript: nullable(str('Full call transcript')),
    attempts: count('Dials made so far, the alternate number included'),
    next_attempt_at: nullable(timestamp('When a waiting call is next tried: its retry, its calling window opening, or the frequency cap letting it through; null otherwise')),
    timezone: nullable(str('The zones its calling window is judged in, comma-separated (a number can have several); null without a window')),
    retry_reason: nullable(oneOfStrings(['no_answer', 'busy', 'failed', 'voicemail'], 'Why a call waiting for a retry waits: how its last attempt ended; null unless it waits for one')),
    primary_phone_number: str("The contact's primary number: `phone_number` is the number dialled, the alternate one when it was used"),
    consent: nullable(
      closed<ConsentOut>(
        {
          source: str('Where consent was given (e.g. web_form)'),
          timestamp: timestamp('When consent was given'),
          text: nullable(str('The wording consented to')),
          reference: nullable(str('Where the proof is kept')),
        },
        "The contact's consent record as given at create (docs/campaigns.md \"Consent records\"); null without one",
      ),
    ),
  },
  'A call of a batch, with its AI results once analysed.',
);

/** The five counters whose sum is the accepted contacts, in both batch shapes. */
const batchCounters = { queued: count(), in_progress: count(), completed: count(), failed: count(), cancelled: count() };

const batchDetails = closed<BatchDetails>(
  {
    batch_id: batchId,
    agent_id: agentId,
    version_id: versionId,
    status: batchStatus,
    start_mode: oneOfStrings(START_MODES),
    scheduled_at: timestamp('schedule_date + schedule_time in the zone, as UTC'),
    timezone: str('Plain IANA zone name'),
    concurrency: int(undefined, { minimum: 1 }),
    total_contacts: count('Contacts submitted'),
    accepted_contacts: count('Contacts that passed validation'),
    rejected_contacts: count('Dropped at creation, never dispatched'),
    callbacks: count('Webhook deliveries made for this batch'),
    ...batchCounters,
    created_at: timestamp(),
    started_at: nullable(timestamp('null before start')),
    completed_at: nullable(timestamp('null until completion')),
    retry: nullable(ref('RetryPolicy')),
    expires_at: nullable(timestamp('No call is placed after this; null: never expires')),
    calling_window: nullable(ref('CallingWindow')),
    enforced_calling_window: nullable(ref('CallingWindow')),
  },
  'queued + in_progress + completed + failed + cancelled = accepted_contacts.',
);

const retryPolicy = closed<RetryOut>(
  {
    max_attempts: int('Dials per call at most, the alternate number included', { minimum: 1, maximum: MAX_ATTEMPTS_LIMIT }),
    on: { type: 'array', items: oneOfStrings(ATTEMPT_OUTCOMES), description: 'Attempt outcomes that are tried again' },
    delay_seconds: int('Wait after an attempt before the next', { minimum: 0, maximum: RETRY_DELAY_MAX_SECONDS }),
  },
  'When and how often a call is tried again (docs/campaigns.md).',
);

const callingWindowShape = {
  start: str('Local HH:MM, inclusive', { examples: ['09:00'] }),
  end: str('Local HH:MM, exclusive; after start (no overnight windows); 24:00 is the end of the day', { examples: ['20:00', '24:00'] }),
  days: { type: 'array', items: oneOfStrings(WEEKDAYS), description: 'Days of the week it opens on' },
  timezone: str(`An IANA zone, or "${RECIPIENT_ZONE}": each contact's zones from its number (or its own timezone), open only when open in all of them`),
} as const;

const callingWindow = closed<CallingWindowOut>(
  callingWindowShape,
  "Local hours and days in which calls are placed (docs/campaigns.md); the account's enforced window, if any, narrows it.",
);

const batchListItem = closed<BatchListItem>({
  batch_id: batchId,
  agent_id: agentId,
  version_id: versionId,
  status: batchStatus,
  total_contacts: count(),
  ...batchCounters,
  created_at: timestamp(),
});

const validationError = closed<ValidationErrorOut>({
  index: int("The contact's 1-based position in `contacts`", { minimum: 1 }),
  external_id: str("The contact's contact_id"),
  field: str('The offending field'),
  message: str('Why it was rejected'),
});

type CreateWarningOut = CreateResult['warnings'][number];

const createWarning = closed<CreateWarningOut>(
  {
    code: oneOfStrings(WARNING_CODES, 'What the warning is about (docs/campaigns.md "Create warnings")'),
    message: str('What will happen, and what to change'),
    contact_count: nullable(count('Contacts concerned in all; null for a warning about the batch')),
    contacts: {
      type: 'array',
      maxItems: MAX_WARNING_CONTACTS,
      description: `The first ${MAX_WARNING_CONTACTS} contacts concerned, in submission order`,
      items: closed<CreateWarningOut['contacts'][number]>({
        index: int("The contact's 1-based position in `contacts`", { minimum: 1 }),
        external_id: str("The contact's contact_id"),
      }),
    },
    contacts_left_out: count('Contacts concerned but not listed'),
  },
  'Beside the contract: something the create accepted that will not call as the request reads. One per code.',
);

const createResult = closed<CreateResult>({
  batch_id: batchId,
  agent_id: agentId,
  version_id: versionId,
  status: { ...batchStatus, description: '`pending` for every create' },
  start_mode: oneOfStrings(START_MODES),
  total_contacts: count('Contacts submitted'),
  accepted_contacts: count('Contacts that passed validation'),
  rejected_contacts: count('Contacts dropped at creation'),
  validation_errors: { type: 'array', items: ref('ValidationError'), description: 'Empty when none were rejected' },
  concurrency: int('Effective concurrency', { minimum: 1 }),
  created_at: timestamp(),
  idempotent: bool('true when an existing batch is returned for a repeated idempotency_key'),
  warnings: {
    type: 'array',
    items: ref('CreateWarning'),
    maxItems: WARNING_CODES.length,
    description: "Beside the contract's fields: at most one per code, empty when none; a replay returns the create's own",
  },
});

const pagination = closed<Pagination>({
  page: int('Current page, 1-indexed', { minimum: 1 }),
  limit: int('Page size in effect', { minimum: 1 }),
  total: count('Total matching items'),
  has_more: bool('Whether further pages exist'),
});

const limits = closed<Limits>({
  max_batch_size: int('Contacts per batch'),
  max_concurrent_calls: int(),
  max_call_duration_seconds: int(),
  rate_limit_per_minute: int('Requests per minute'),
});

const account = closed<AccountOut>({
  account_id: str(),
  name: str(),
  email: str(),
  limits: ref('Limits'),
});

const contact: JsonSchema = {
  type: 'object',
  required: ['contact_id', 'phone_number'],
  properties: {
    contact_id: str("Your id for the contact; returned as external_id", { minLength: 1, maxLength: MAX_NAME_LENGTH }),
    name: nullable(name('Display name')),
    phone_number: str('Digits with country code; a number that cannot be dialled rejects this contact only', {
      minLength: PHONE_NUMBER_MIN_LENGTH,
      maxLength: MAX_PHONE_NUMBER_LENGTH,
    }),
    metadata: metadata('Key-value data for the agent; keys such as `Phone Number` and `phoneNumber` are treated alike'),
    status: nullable(oneOfStrings(CONTACT_STATUSES, 'Initial status; default pending')),
    timezone: nullable(str("IANA zone of the contact: its calling window must be open here as well as in every zone of the number dialled (a geographic zone; fixed offsets such as EST are refused)", { maxLength: 64, examples: ['America/Chicago'] })),
    consent: nullable({
      type: 'object',
      description: 'The contact\'s consent record (docs/campaigns.md "Consent records"): stored with the call, returned on its reads and in the CSV export',
      required: ['source', 'timestamp'],
      properties: {
        source: str('Where consent was given: letters, digits, spaces and _ . : / -, starting with a letter or digit', {
          minLength: 1,
          maxLength: MAX_CONSENT_SOURCE_LENGTH,
          pattern: CONSENT_SOURCE_PATTERN.source,
          examples: [...CONSENT_SOURCES],
        }),
        timestamp: str('When consent was given: ISO 8601 with a time zone, not in the future', { format: 'date-time' }),
        text: nullable(str('The wording consented to', { maxLength: MAX_CONSENT_TEXT_LENGTH })),
        reference: nullable(str('Where the proof is kept (URL, document or recording id)', { maxLength: MAX_CONSENT_REFERENCE_LENGTH })),
      },
    }),
  },
};

const LAX = 'Also accepted: 0/1 and the strings true/false/yes/no/on/off/t/f/y/n/1/0 in any case.';

const createRequestFields: Record<string, JsonSchema> = {
  agent_id: name('Agent id (`agt-<id>`); or give agent_name'),
  agent_name: name('Agent name; or give agent_id'),
  version_id: name('Prompt version id (`pmt-<id>`); or give version_name'),
  version_name: name('Prompt version name; or give version_id'),
  voice: nullable(name("Voice name; default: the agent's voice")),
  did_number_id: nullable(name("Caller-ID number to dial from (its id or the number); default: the account's oldest")),
  interruption: { ...bool(`Interruption handling (only where the account allows it). ${LAX}`) },
  use_alternate_number: bool(`Try the contact's alternate number when the primary fails. ${LAX}`),
  start_mode: oneOfStrings(START_MODES),
  schedule_date: str('YYYY-MM-DD; sets dispatch time only for start_mode scheduled', { examples: ['2026-11-24'] }),
  schedule_time: str('HH:MM', { examples: ['09:00'] }),
  schedule_timezone: str('`Area/City (ABBR, UTC±hh:mm)` or a plain IANA zone name', {
    maxLength: MAX_TIMEZONE_LENGTH,
    examples: ['America/New_York (EST, UTC-05:00)'],
  }),
  concurrency: nullable(int("Maximum concurrent calls; default: the account's batch concurrency", { minimum: 1 })),
  callback_url: nullable(str('http(s) URL that receives signed webhooks for this batch', { maxLength: 2048 })),
  deduplicate_by_phone: nullable(bool('Reject later contacts with a number already in the batch; default false')),
  recording_enabled: nullable(bool("Record calls; default: the agent's setting")),
  max_duration_seconds_per_call: nullable(int("At most the account's max_call_duration_seconds", { minimum: 1 })),
  metadata: metadata('Custom key-value metadata for the batch (16 KiB as JSON)'),
  contacts: { type: 'array', minItems: 1, items: ref('Contact'), description: "At least 1, at most the account's max_batch_size" },
  retry: nullable({
    type: 'object',
    description: 'Try a call again after these attempt outcomes (docs/campaigns.md); absent: each contact is dialled once (plus its alternate number)',
    required: ['max_attempts'],
    properties: {
      max_attempts: int('Dials per call at most, the alternate number included', { minimum: 1, maximum: MAX_ATTEMPTS_LIMIT }),
      on: {
        type: 'array',
        minItems: 1,
        items: oneOfStrings(ATTEMPT_OUTCOMES),
        description: `Default ${DEFAULT_RETRY_ON.join(', ')}`,
      },
      delay_seconds: int(`Wait after an attempt; default ${DEFAULT_RETRY_DELAY_SECONDS}`, { minimum: RETRY_DELAY_MIN_SECONDS, maximum: RETRY_DELAY_MAX_SECONDS }),
    },
  }),
  expires_at: nullable(str('ISO 8601 instant with a zone, in the future: a call not placed by then ends cancelled (disconnect_reason `expired`)', { examples: ['2026-12-01T18:00:00Z'] })),
  calling_window: nullable({
    type: 'object',
    description: `Place calls only in these local hours (docs/campaigns.md); absent: the account's default window, if any. A contact whose window does not open within ${OPENING_HORIZON_DAYS} days is rejected.`,
    required: ['start', 'end'],
    properties: {
      ...callingWindowShape,
      days: { ...callingWindowShape.days, minItems: 1, description: 'Default every day' },
      timezone: { ...callingWindowShape.timezone, description: `${callingWindowShape.timezone.description}; default "${RECIPIENT_ZONE}"` },
    },
  }),
  compliance_profiles: nullable({
    type: 'array',
    maxItems: COMPLIANCE_PROFILES.length,
    uniqueItems: true,
    items: oneOfStrings(COMPLIANCE_PROFILES),
    description: `Beside the contract: compliance profiles for this batch's calls (docs/campaigns.md "Compliance profiles", rule table ${COMPLIANCE_RULES_VERSION}), added to the account's (or the service default, us_tcpa); the most restrictive rule wins`,
  }),
};

const REQUIRED = ['interruption', 'use_alternate_number', 'start_mode', 'schedule_date', 'schedule_time', 'schedule_timezone', 'contacts'];
/** One branch of "give the id or the name": the field required, with its type, so generated clients type it (not `unknown`). */
const givenBy = (field: string): JsonSchema => ({
  title: `by ${field}`,
  type: 'object',
  required: [field],
  properties: { [field]: createRequestFields[field] },
});
const agentAndVersion = [
  { anyOf: [givenBy('agent_id'), givenBy('agent_name')] },
  { anyOf: [givenBy('version_id'), givenBy('version_name')] },
];

const createRequest: JsonSchema = {
  type: 'object',
  description:
    'Give agent_id or agent_name, and version_id or version_name (an id wins when both are given). Unknown fields are ignored. `did_number` is read as did_number_id when that is absent.',
  required: REQUIRED,
  allOf: agentAndVersion,
  properties: createRequestFields,
};

const idempotentCreateRequest: JsonSchema = {
  ...createRequest,
  required: [...REQUIRED, 'idempotency_key'],
  properties: {
    ...createRequestFields,
    idempotency_key: str('Scoped to the account: a repeat returns the original batch', { minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX_LENGTH }),
  },
};

// Closed, with two optional fields beside `detail` that only the create's "All contacts are
// invalid" carries: why each contact was rejected (the contract's text stays as it is).
const detailError: JsonSchema = {
  type: 'object',
  description: "The contract's detail form: authentication failures, not found, business rules.",
  required: ['detail'],
  properties: {
    detail: str(),
    rejected_contacts: count('Only with `All contacts are invalid`: contacts rejected (all of them)'),
    validation_errors: {
      type: 'array',
      items: ref('ValidationError'),
      maxItems: MAX_LISTED_REJECTIONS,
      description: `Only with \`All contacts are invalid\`: why, the first ${MAX_LISTED_REJECTIONS.toLocaleString('en-US')} rejections in submission order (the create result's elements)`,
    },
  },
  additionalProperties: false,
};

const suppression = closed<SuppressionOut>({
  phone_number: str('E.164'),
  reason: nullable(str(undefined, { maxLength: MAX_SUPPRESSION_REASON_LENGTH })),
  source: str('`api` (an API key), `cli` (the operator token), or `call:<call_id>` for an opt-out'),
  created_at: timestamp(),
});

const addSuppressionsRequest: JsonSchema = {
  type: 'object',
  description: 'Unknown fields are ignored. Numbers are read with the contacts\' phone rules and stored in E.164.',
  required: ['phone_numbers'],
  properties: {
    phone_numbers: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_SUPPRESSIONS_PER_REQUEST,
      items: str(undefined, { maxLength: MAX_PHONE_NUMBER_LENGTH }),
    },
    reason: nullable(str(undefined, { maxLength: MAX_SUPPRESSION_REASON_LENGTH })),
  },
};

const addSuppressionsResult = closed<AddSuppressionsOut>({
  added: count('Numbers newly put on the list'),
  already_listed: count('Distinct numbers of the request that were listed already'),
});

const dialAuditEntry = closed<DialAuditEntryOut>({
  attempt: int("1-based: the call's dial count with this dial", { minimum: 1 }),
  phone_number: str('The number dialled (E.164)'),
  alternate: bool("Whether the contact's alternate number was dialled"),
  dialled_at: timestamp(),
  allowed_by: oneOfStrings(DIAL_ALLOWED_BY, '`window_open`: every window open in every zone judged; `no_window`: no window set'),
  zones: {
    type: 'array',
    description: "Every zone judged (the number's, the contact's, any a window names), with the local time there at the dial",
    items: closed<DialAuditEntryOut['zones'][number]>({ zone: str('IANA zone'), local_time: str('ISO 8601 local time with its offset') }),
  },
  windows: { type: 'array', description: 'The calling windows checked', items: ref('CallingWindow') },
  window_closes_at: nullable(timestamp('When the window the dial was placed in closes; null without a window')),
  rules: { type: 'array', items: str(), description: 'Compliance profile rule ids applied' },
  rules_version: nullable(str("The rule table's version when a profile was in force")),
  lists: { type: 'array', items: str(), description: 'Lists the number was checked against' },
});

const dialAudit = closed<DialAuditOut>({
  call_id: str('Call id, `call_<id>`', { pattern: '^call_' }),
  batch_id: batchId,
  items: { type: 'array', maxItems: 50, items: ref('DialAuditEntry'), description: 'Oldest first' },
});

const complianceReport = closed<ComplianceReportOut>({
  batch_id: batchId,
  dials: count('Dials recorded'),
  unrestricted_dials: count('Dials made without any calling window'),
  dials_without_zone: count('Dials with no zone to place them in'),
  dials_by_local_hour: {
    type: 'array',
    maxItems: 2400,
    description: 'By zone and local hour; a dial judged in several zones counts in each',
    items: closed<ComplianceReportOut['dials_by_local_hour'][number]>({ zone: str('IANA zone'), hour: int('Local hour, 0-23', { minimum: 0, maximum: 23 }), dials: count() }),
  },
  truncated: bool('dials_by_local_hour left rows out'),
  blocked: {
    type: 'array',
    maxItems: 50,
    description: 'Calls held back or ended undialled',
    items: closed<ComplianceReportOut['blocked'][number]>({
      stage: oneOfStrings(BLOCKED_STAGES, '`ended` undialled, `waiting` held back now, `withheld` a claimed dial refused at the dial, `alternate` number not dialled'),
      reason: str('ended: suppressed, no_calling_window, expired; waiting and withheld: calling_window, frequency_cap; alternate: suppressed, calling_window, frequency_cap'),
      calls: count(),
    }),
  },
});

export const SHAPES: Record<ShapeName, JsonSchema> = {
  Account: account,
  Limits: limits,
  CreateBatchRequest: createRequest,
  IdempotentCreateBatchRequest: idempotentCreateRequest,
  Contact: contact,
  CreateResult: createResult,
  ValidationError: validationError,
  BatchDetails: batchDetails,
  BatchListItem: batchListItem,
  CallRecord: callRecord,
  Pagination: pagination,
  DetailError: detailError,
  CreateWarning: createWarning,
  Suppression: suppression,
  AddSuppressionsRequest: addSuppressionsRequest,
  AddSuppressionsResult: addSuppressionsResult,
  RetryPolicy: retryPolicy,
  CallingWindow: callingWindow,
  DialAudit: dialAudit,
  DialAuditEntry: dialAuditEntry,
  ComplianceReport: complianceReport,
};
