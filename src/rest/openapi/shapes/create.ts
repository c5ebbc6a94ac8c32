// The create: its request (with and without an idempotency key), a contact, and its result with the
// rejected contacts and warnings.
import { COMPLIANCE_PROFILES, COMPLIANCE_RULES_VERSION } from '../../../domain/compliance/rules-v1.ts';
import {
  CONSENT_SOURCE_PATTERN,
  CONSENT_SOURCES,
  MAX_CONSENT_REFERENCE_LENGTH,
  MAX_CONSENT_SOURCE_LENGTH,
  MAX_CONSENT_TEXT_LENGTH,
} from '../../../domain/consent.ts';
import { OPENING_HORIZON_DAYS, RECIPIENT_ZONE } from '../../../domain/calling-window.ts';
import {
  DEFAULT_RETRY_DELAY_SECONDS,
  DEFAULT_RETRY_ON,
  MAX_ATTEMPTS_LIMIT,
  RETRY_DELAY_MAX_SECONDS,
  RETRY_DELAY_MIN_SECONDS,
} from '../../../domain/retry-policy.ts';
import { ATTEMPT_OUTCOMES } from '../../../domain/attempt-outcome.ts';
import { CONTACT_STATUSES, IDEMPOTENCY_KEY_MAX_LENGTH, PHONE_NUMBER_MIN_LENGTH, START_MODES } from '../../../domain/create-batch-fields.ts';
import { MAX_NAME_LENGTH, MAX_PHONE_NUMBER_LENGTH, MAX_TIMEZONE_LENGTH } from '../../../domain/limits.ts';
import { MAX_WARNING_CONTACTS, WARNING_CODES } from '../../../domain/create-warnings.ts';
import type { CreateResult } from '../../mappers.ts';
import { bool, closed, count, int, type JsonSchema, nullable, oneOfStrings, ref, str, timestamp } from '../json-schema.ts';
import { agentId, batchId, batchStatus, callingWindowShape, versionId } from './fields.ts';
import { optionRequestShapes } from './batch-options.ts';

const name = (description: string) => str(description, { maxLength: MAX_NAME_LENGTH });
// additionalProperties stated: without it generated clients type an object with no properties as `Record<string, never>`.
const metadata = (description: string): JsonSchema => nullable({ type: 'object', additionalProperties: true, description });

type ValidationErrorOut = CreateResult['validation_errors'][number];

export const validationError = closed<ValidationErrorOut>({
  index: int("The contact's 1-based position in `contacts`", { minimum: 1 }),
  external_id: str("The contact's contact_id"),
  field: str('The offending field'),
  message: str('Why it was rejected'),
});

type CreateWarningOut = CreateResult['warnings'][number];

export const createWarning = closed<CreateWarningOut>(
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

export const createResult = closed<CreateResult>({
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

export const contact: JsonSchema = {
  type: 'object',
  required: ['contact_id', 'phone_number'],
  properties: {
    contact_id: str('Your id for the contact; returned as external_id', { minLength: 1, maxLength: MAX_NAME_LENGTH }),
    name: nullable(name('Display name')),
    phone_number: str('Digits with country code; a number that cannot be dialled rejects this contact only', {
      minLength: PHONE_NUMBER_MIN_LENGTH,
      maxLength: MAX_PHONE_NUMBER_LENGTH,
    }),
    metadata: metadata('Key-value data for the agent; keys such as `Phone Number` and `phoneNumber` are treated alike'),
    status: nullable(oneOfStrings(CONTACT_STATUSES, 'Initial status; default pending')),
    timezone: nullable(
      str(
        'IANA zone of the contact: its calling window must be open here as well as in every zone of the number dialled (a geographic zone; fixed offsets such as EST are refused)',
        { maxLength: 64, examples: ['America/Chicago'] },
      ),
    ),
    consent: nullable({
      type: 'object',
      description:
        'The contact\'s consent record (docs/campaigns.md "Consent records"): stored with the call, returned on its reads and in the CSV export',
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
  did_number_id: nullable(
    name(
      "Caller-ID number to dial every call from (its id or the number); omitted: each dial's number is chosen from the account's caller-ID pool (local presence)",
    ),
  ),
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
    description:
      'Try a call again after these attempt outcomes (docs/campaigns.md); absent: each contact is dialled once (plus its alternate number)',
    required: ['max_attempts'],
    properties: {
      max_attempts: int('Dials per call at most, the alternate number included', { minimum: 1, maximum: MAX_ATTEMPTS_LIMIT }),
      on: {
        type: 'array',
        minItems: 1,
        items: oneOfStrings(ATTEMPT_OUTCOMES),
        description: `Default ${DEFAULT_RETRY_ON.join(', ')}`,
      },
      delay_seconds: int(`Wait after an attempt; default ${DEFAULT_RETRY_DELAY_SECONDS}`, {
        minimum: RETRY_DELAY_MIN_SECONDS,
        maximum: RETRY_DELAY_MAX_SECONDS,
      }),
    },
  }),
  expires_at: nullable(
    str('ISO 8601 instant with a zone, in the future: a call not placed by then ends cancelled (disconnect_reason `expired`)', {
      examples: ['2026-12-01T18:00:00Z'],
    }),
  ),
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
  ...optionRequestShapes(),
};

const REQUIRED = ['interruption', 'use_alternate_number', 'start_mode', 'schedule_date', 'schedule_time', 'schedule_timezone', 'contacts'];
/** One branch of "give the id or the name": the field required, with its type, so generated clients type it (not `unknown`). */
const givenBy = (field: string): JsonSchema => ({
  title: `by ${field}`,
  type: 'object',
  required: [field],
  properties: { [field]: createRequestFields[field] },
});
const agentAndVersion = [{ anyOf: [givenBy('agent_id'), givenBy('agent_name')] }, { anyOf: [givenBy('version_id'), givenBy('version_name')] }];

export const createRequest: JsonSchema = {
  type: 'object',
  description:
    'Give agent_id or agent_name, and version_id or version_name (an id wins when both are given). Unknown fields are ignored. `did_number` is read as did_number_id when that is absent.',
  required: REQUIRED,
  allOf: agentAndVersion,
  properties: createRequestFields,
};

export const idempotentCreateRequest: JsonSchema = {
  ...createRequest,
  required: [...REQUIRED, 'idempotency_key'],
  properties: {
    ...createRequestFields,
    idempotency_key: str('Scoped to the account: a repeat returns the original batch', { minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX_LENGTH }),
  },
};
