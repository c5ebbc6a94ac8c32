// Batch creation on the GraphQL surface: a typed mutation for GraphQL clients and the REST
// facade's form, which hands over the contract's raw JSON body. Both call the same service.
import { builder } from '../builder.ts';
import type { ContactRejection } from '../../domain/contacts.ts';
import { AppError } from '../../errors.ts';
import { createBatch, type CreateBatchResult } from '../../services/batches/create-batch.ts';
import { CallBatchType } from './batch.ts';

const ContactValidationError = builder.objectRef<ContactRejection>('ContactValidationError').implement({
  description: 'A contact dropped at creation',
  fields: (t) => ({
    index: t.exposeInt('index', { description: '1-based position of the contact in the submitted list' }),
    externalId: t.exposeString('external_id', { description: "The contact's contact_id" }),
    field: t.exposeString('field'),
    message: t.exposeString('message'),
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

const CallBatchContactInput = builder.inputType('CallBatchContactInput', {
  fields: (t) => ({
    contactId: t.string({ required: true }),
    name: t.string(),
    phoneNumber: t.string({ required: true }),
    metadata: t.field({ type: 'JSON', description: 'Keys are normalised (e.g. `First Name` -> `first_name`)' }),
    status: t.field({ type: ContactStatusEnum, description: 'Initial call status; default `queued` unless `pending`' }),
  }),
});

const CreateCallBatchInput = builder.inputType('CreateCallBatchInput', {
  description: 'The contract\'s create request in camelCase. With idempotencyKey it behaves as PUT, without it as POST.',
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
    contacts: t.field({ type: [CallBatchContactInput], required: true }),
    idempotencyKey: t.string({ description: '1 to 128 characters; scoped to the account' }),
  }),
});

type TypedInput = typeof CreateCallBatchInput.$inferInput;

/** The typed input as the contract's snake_case body, so it meets exactly the REST validation. */
function toRequestBody(input: TypedInput): Record<string, unknown> {
  return {
    agent_id: input.agentId,
    agent_name: input.agentName,
    version_id: input.versionId,
    version_name: input.versionName,
    voice: input.voice,
    did_number_id: input.didNumberId,
    interruption: input.interruption,
    use_alternate_number: input.useAlternateNumber,
    start_mode: input.startMode,
    schedule_date: input.scheduleDate,
    schedule_time: input.scheduleTime,
    schedule_timezone: input.scheduleTimezone,
    concurrency: input.concurrency,
    callback_url: input.callbackUrl,
    deduplicate_by_phone: input.deduplicateByPhone,
    recording_enabled: input.recordingEnabled,
    max_duration_seconds_per_call: input.maxDurationSecondsPerCall,
    metadata: input.metadata,
    contacts: input.contacts.map((c) => ({
      contact_id: c.contactId,
      name: c.name,
      phone_number: c.phoneNumber,
      metadata: c.metadata,
      status: c.status,
    })),
    idempotency_key: input.idempotencyKey,
  };
}

const camel = (segment: string) => segment.replace(/_([a-z0-9])/g, (_m, ch: string) => ch.toUpperCase());

/** 'contacts.0.phone_number: reason' -> 'contacts.0.phoneNumber: reason', naming the typed input's fields. */
function camelizeDetail(detail: string): string {
  const at = detail.indexOf(': ');
  if (at < 0) return detail;
  return detail.slice(0, at).split('.').map(camel).join('.') + detail.slice(at);
}

builder.mutationFields((t) => ({
  createCallBatch: t.field({
    type: CreateCallBatchPayload,
    description:
      'Creates a call batch. With idempotencyKey: the first use creates (idempotent false), any repeat returns the original result (idempotent true).',
    args: { input: t.arg({ type: CreateCallBatchInput, required: true }) },
    resolve: async (_r, { input }, ctx) => {
      const account = await ctx.account();
      try {
        return await createBatch(ctx.deps, account, toRequestBody(input), {
          requireIdempotencyKey: input.idempotencyKey != null,
        });
      } catch (e) {
        if (e instanceof AppError && e.code === 'MISSING_PARAMETER') {
          throw new AppError(e.code, e.message, e.details.map(camelizeDetail), e.headers);
        }
        throw e;
      }
    },
  }),
  createCallBatchFromRequest: t.field({
    type: CreateCallBatchPayload,
    description:
      "The REST facade's form: `body` is the contract's snake_case JSON request, validated with the legacy wording. `idempotent` true is PUT (idempotency_key required), false is POST.",
    args: {
      body: t.arg({ type: 'JSON', required: true }),
      idempotent: t.arg.boolean({ required: true }),
    },
    resolve: async (_r, { body, idempotent }, ctx) =>
      createBatch(ctx.deps, await ctx.account(), body, { requireIdempotencyKey: idempotent }),
  }),
}));
