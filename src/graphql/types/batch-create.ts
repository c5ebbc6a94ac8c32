// Batch creation on the GraphQL surface, also the mutation the REST facade's create runs.
import { ComplianceProfileEnum } from './compliance-profile.ts';
import { GraphQLError } from 'graphql';
import { builder } from '../builder.ts';
import { isReadContactList, readContactList } from '../../domain/contact-list.ts';
import { CONSENT_SOURCES, MAX_CONSENT_REFERENCE_LENGTH, MAX_CONSENT_SOURCE_LENGTH, MAX_CONSENT_TEXT_LENGTH } from '../../domain/consent.ts';
import type { ContactRejection } from '../../domain/contacts.ts';
import { contactCountProblem, CREATE_BATCH_FIELD_ORDER } from '../../domain/create-batch-fields.ts';
import type { ContactRequest, CreateBatchRequest } from '../../domain/create-batch-types.ts';
import { formatIssue } from '../../domain/field-issue.ts';
import { CappedIssues } from '../../domain/capped-issues.ts';
import { requestValidation } from '../../errors.ts';
import { createBatch, type CreateBatchResult } from '../../services/batches/create-batch.ts';
import { MAX_WARNING_CONTACTS, WARNING_CODES, type CreateWarning, type WarningContact } from '../../domain/create-warnings.ts';
import { CallBatchType } from './batch.ts';
import { batchOptionInputFields } from './batch-options.ts';
import { CallingWindowInput } from './calling-window.ts';
import {
  DEFAULT_RETRY_DELAY_SECONDS,
  DEFAULT_RETRY_ON,
  MAX_ATTEMPTS_LIMIT,
  RETRY_DELAY_MAX_SECONDS,
  RETRY_DELAY_MIN_SECONDS,
} from '../../domain/retry-policy.ts';
import { ATTEMPT_OUTCOMES } from '../../domain/attempt-outcome.ts';

/** Names the schema's contact lists are found by before execution (plugins/contact-count.ts). */
export const CONTACT_INPUT_TYPE = 'CallBatchContactInput';
export const CONTACT_LIST_TYPE = 'CallBatchContactList';

const ContactValidationError = builder.objectRef<ContactRejection>('ContactValidationError').implement({
  description: 'A contact dropped at creation',
  fields: (t) => ({
    index: t.exposeInt('index', { description: '1-based position of the contact in the submitted list' }),
    externalId: t.exposeString('external_id', { description: "The contact's contact_id" }),
    field: t.exposeString('field'),
    message: t.exposeString('message'),
  }),
});

const CreateWarningContact = builder.objectRef<WarningContact>('CreateWarningContact').implement({
  description: 'A contact a create warning concerns',
  fields: (t) => ({
    index: t.exposeInt('index', { description: '1-based position of the contact in the submitted list' }),
    externalId: t.exposeString('externalId', { description: "The contact's contact_id" }),
  }),
});

const CreateWarningType = builder.objectRef<CreateWarning>('CreateWarning').implement({
  description: `What a create accepted but will not do as the request reads (docs/campaigns.md "Create warnings"): one per code, at most ${MAX_WARNING_CONTACTS} contacts listed each`,
  fields: (t) => ({
    code: t.exposeString('code', { description: `One of ${WARNING_CODES.join(', ')}` }),
    message: t.exposeString('message'),
    contactCount: t.exposeInt('contactCount', { nullable: true, description: 'Contacts concerned in all; null for a warning about the batch' }),
    contacts: t.field({
      type: [CreateWarningContact],
      description: `The first ${MAX_WARNING_CONTACTS} contacts concerned, in submission order`,
      resolve: (w) => w.contacts,
    }),
    contactsLeftOut: t.exposeInt('contactsLeftOut', { description: 'Contacts concerned but not listed' }),
  }),
});

const CreateCallBatchPayload = builder.objectRef<CreateBatchResult>('CreateCallBatchPayload').implement({
  description: "The contract's Create result",
  fields: (t) => ({
    batchId: t.exposeString('batchId'),
    agentId: t.exposeString('agentId'),
    versionId: t.exposeString('versionId'),
    status: t.exposeString('status', { description: 'Always `pending`, as every create sample of the contract shows' }),
    startMode: t.exposeString('startMode'),
    totalContacts: t.exposeInt('totalContacts'),
    acceptedContacts: t.exposeInt('acceptedContacts'),
    rejectedContacts: t.exposeInt('rejectedContacts'),
    validationErrors: t.field({ type: [ContactValidationError], resolve: (r) => r.validationErrors }),
    warnings: t.field({
      type: [CreateWarningType],
      description:
        "Beside the contract's fields: contacts or settings that will not call as the request reads (empty when none); an idempotent replay returns the create's own",
      resolve: (r) => r.warnings,
    }),
    concurrency: t.exposeInt('concurrency', { description: 'Effective concurrency' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    idempotent: t.exposeBoolean('idempotent', {
      description: 'true when an existing batch was returned for a repeated idempotency key',
    }),
    batch: t.field({
      type: CallBatchType,
      description: 'The batch as it is now',
      resolve: async (r, _a, ctx) => ctx.deps.db.prisma.batch.findUniqueOrThrow({ where: { id: r.batchId } }),
    }),
  }),
});

const StartModeEnum = builder.enumType('CallBatchStartMode', { values: ['manual', 'immediate', 'scheduled'] as const });
const ContactStatusEnum = builder.enumType('CallBatchContactStatus', { values: ['pending', 'queued'] as const });

const ContactConsentInput = builder.inputType('ContactConsentInput', {
  description: 'A contact\'s consent record (docs/campaigns.md "Consent records"): stored with its call, returned on it and in the CSV export.',
  fields: (t) => ({
    source: t.string({
      required: true,
      description: `Where consent was given: a label of at most ${MAX_CONSENT_SOURCE_LENGTH} letters, digits, spaces and _ . : / - (e.g. ${CONSENT_SOURCES.slice(0, 4).join(', ')})`,
    }),
    timestamp: t.string({ required: true, description: 'When consent was given: ISO 8601 with a time zone, not in the future' }),
    text: t.string({ description: `The wording consented to, at most ${MAX_CONSENT_TEXT_LENGTH} characters` }),
    reference: t.string({
      description: `Where the proof is kept (URL, document or recording id), at most ${MAX_CONSENT_REFERENCE_LENGTH} characters`,
    }),
  }),
});

const CallBatchContactInput = builder.inputType(CONTACT_INPUT_TYPE, {
  fields: (t) => ({
    contactId: t.string({ required: true }),
    name: t.string(),
    phoneNumber: t.string({ required: true }),
    metadata: t.field({ type: 'JSON', description: 'Keys are normalised (e.g. `First Name` -> `first_name`)' }),
    status: t.field({ type: ContactStatusEnum, description: 'Initial call status; default `queued` unless `pending`' }),
    timezone: t.string({
      description:
        'IANA zone of the contact: its calling window must be open here as well as in every zone of the number dialled (a geographic zone; fixed offsets such as EST are refused)',
    }),
    consent: t.field({ type: ContactConsentInput, description: "The contact's consent record" }),
  }),
});

// Enough to say what is wrong without echoing a 100k-contact list back; a last part counts the rest.
const MAX_LISTED_ISSUES = 20;

const CallBatchContactList = builder.scalarType(CONTACT_LIST_TYPE, {
  description:
    'The contacts as one JSON array of `CallBatchContactInput`-shaped objects, type-checked in one pass: for large batches, much cheaper than `contacts` (which GraphQL checks field by field). Its problems are reported as those of `contacts` (`contacts.<index>.<field>`).',
  serialize: () => {
    throw new GraphQLError('CallBatchContactList is an input scalar');
  },
  parseValue: (value) => {
    // The REST facade's body reader already read this very list.
    if (isReadContactList(value)) return value;
    // The account's max_batch_size was checked before execution; without an account, the ceiling.
    const tooMany = Array.isArray(value) ? contactCountProblem(value.length) : null;
    if (tooMany) throw new GraphQLError(tooMany);
    const { contacts, issues } = readContactList(value, ['contacts']);
    if (issues.length) {
      const listed = new CappedIssues(CREATE_BATCH_FIELD_ORDER, MAX_LISTED_ISSUES);
      listed.addAll(issues);
      throw new GraphQLError(
        listed
          .list()
          .map((i) => formatIssue(i))
          .join('; '),
      );
    }
    // The reader recorded an issue for every missing or mistyped field, so none is left.
    return contacts as ContactRequest[];
  },
  parseLiteral: () => {
    throw new GraphQLError('CallBatchContactList takes a variable, not a literal; use `contacts` inline');
  },
});

const RetryOutcomeEnum = builder.enumType('CallAttemptOutcome', {
  description: 'How an attempt can end without reaching the person',
  values: ATTEMPT_OUTCOMES,
});

const CallBatchRetryInput = builder.inputType('CallBatchRetryInput', {
  description: 'Try a call again after these outcomes (docs/campaigns.md)',
  fields: (t) => ({
    maxAttempts: t.int({ required: true, description: `Dials per call at most, the alternate number included (1-${MAX_ATTEMPTS_LIMIT})` }),
    on: t.field({ type: [RetryOutcomeEnum], description: `Default ${DEFAULT_RETRY_ON.join(', ')}` }),
    delaySeconds: t.int({
      description: `Wait before the next attempt, ${RETRY_DELAY_MIN_SECONDS}-${RETRY_DELAY_MAX_SECONDS} (default ${DEFAULT_RETRY_DELAY_SECONDS})`,
    }),
  }),
});

const CreateCallBatchInput = builder.inputType('CreateCallBatchInput', {
  description: "The contract's create request in camelCase. With idempotencyKey it behaves as PUT, without it as POST.",
  fields: (t) => ({
    agentId: t.string(),
    agentName: t.string(),
    versionId: t.string(),
    versionName: t.string(),
    voice: t.string(),
    didNumberId: t.string({ description: 'DID number id, or the number itself' }),
    interruption: t.boolean({ required: true }),
    useAlternateNumber: t.boolean({ required: true }),
    startMode: t.field({ type: StartModeEnum, required: true }),
    scheduleDate: t.string({ required: true, description: 'YYYY-MM-DD' }),
    scheduleTime: t.string({ required: true, description: 'HH:MM' }),
    scheduleTimezone: t.string({ required: true, description: 'IANA zone, optionally followed by "(ABBR, UTC±hh:mm)"' }),
    concurrency: t.int(),
    callbackUrl: t.string(),
    deduplicateByPhone: t.boolean(),
    recordingEnabled: t.boolean(),
    maxDurationSecondsPerCall: t.int(),
    metadata: t.field({ type: 'JSON' }),
    contacts: t.field({ type: [CallBatchContactInput], description: 'The contacts; give this or `contactList`' }),
    contactList: t.field({ type: CallBatchContactList, description: 'The contacts as one value; give this or `contacts`' }),
    idempotencyKey: t.string({ description: '1 to 128 characters; scoped to the account' }),
    retry: t.field({ type: CallBatchRetryInput, description: 'Retry policy; without it each contact is dialled once (plus its alternate number)' }),
    expiresAt: t.field({ type: 'DateTime', description: 'A call not placed by then is never placed (it ends cancelled, disconnectReason expired)' }),
    callingWindow: t.field({
      type: CallingWindowInput,
      description:
        "Local hours and days in which calls are placed; without it, the account's default window (if any). The account's enforced window narrows it.",
    }),
    complianceProfiles: t.field({
      type: [ComplianceProfileEnum],
      description:
        "Compliance profiles for this batch's calls besides the account's (or the service default): their rules narrow the windows, the most restrictive wins",
    }),
    ...batchOptionInputFields(t),
  }),
});

type TypedInput = typeof CreateCallBatchInput.$inferInput;

/** The domain's request: the contacts from whichever of the two fields holds them. */
function requestOf({ contacts, contactList, ...fields }: TypedInput): CreateBatchRequest {
  if (contacts && contactList) throw requestValidation(['contactList: Give contacts or contactList, not both']);
  const given = contacts ?? contactList;
  if (!given) throw requestValidation(['contacts: Field required']);
  return { ...fields, contacts: given };
}

builder.mutationFields((t) => ({
  createCallBatch: t.field({
    type: CreateCallBatchPayload,
    description:
      'Creates a call batch. With idempotencyKey: the first use creates (idempotent false), any repeat returns the original result (idempotent true).',
    args: { input: t.arg({ type: CreateCallBatchInput, required: true }) },
    resolve: async (_r, { input }, ctx) => {
      const account = await ctx.account();
      const mark = ctx.scope.timing?.mark;
      mark?.('graphql');
      return createBatch(ctx.deps, account, requestOf(input), { mark });
    },
  }),
}));
