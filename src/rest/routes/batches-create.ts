// POST (non-idempotent) and PUT (idempotent) /api/v1/public/call-batches. The route reads the body
// into the typed create input; value checks, business rules and idempotency live in the service.
import type { RestRoute, RouteInput } from '../router.ts';
import type { BatchCreateResultFieldsFragment, RestCreateCallBatchMutation } from '../../codegen/graphql.ts';
import { createResultOut } from '../mappers.ts';
import type { PathIssue } from '../../domain/field-issue.ts';
import { readCreateBatchBody, restDetail } from '../create-batch-body.ts';
import { ref } from '../openapi/json-schema.ts';
import { createReplayExample, createRequestExample, createResultExample, idempotentCreateRequestExample } from '../openapi/examples.ts';
import type { RouteDoc } from '../openapi/route-doc.ts';

const PATH = '/api/v1/public/call-batches';

const CREATED = 'Call batch created successfully';
const CREATED_WITH_ERRORS = 'Call batch created with validation errors';
const EXISTS = 'Call batch already exists for this idempotency key';

function respond(r: BatchCreateResultFieldsFragment) {
  if (r.idempotent) {
    return { status: 200, message: EXISTS, data: createResultOut(r) };
  }
  const message = r.rejectedContacts > 0 ? CREATED_WITH_ERRORS : CREATED;
  return { status: 201, message, data: createResultOut(r) };
}

function createInput(input: RouteInput, idempotent: boolean) {
  const { contacts, ...request } = readCreateBatchBody(input.body, {
    idempotent,
    maxCallDurationSeconds: input.account.maxCallDurationSeconds,
    maxBatchSize: input.account.maxBatchSize,
  });
  return { input: { ...request, contactList: contacts } };
}

const bodyDetail = (issue: PathIssue, input: RouteInput) => restDetail(issue, input.body);

const CREATE_DOC = {
  tag: 'Batches',
  data: ref('CreateResult'),
  example: createResultExample,
  // 404: an agent or prompt version not on the account; 422 detail: every contact rejected, a voice
  // or DID number not on the account, more contacts than max_batch_size, a refused callback_url.
  errors: ['NOT_FOUND', 'UNPROCESSABLE'],
  detailExamples: { 404: 'Agent not found: Demo Agent', 422: 'All contacts are invalid' },
} satisfies Partial<RouteDoc>;

export const batchesCreateRoutes: RestRoute[] = [
  {
    method: 'POST',
    path: PATH,
    operation: 'RestCreateCallBatch',
    variables: (input) => createInput(input, false),
    detail: bodyDetail,
    respond: (data: RestCreateCallBatchMutation) => respond(data.createCallBatch),
    doc: {
      ...CREATE_DOC,
      operationId: 'createCallBatch',
      summary: 'Create a batch (not idempotent: each POST creates one)',
      description: 'Contacts that fail validation are dropped and reported in validation_errors; the batch is created with the rest (201).',
      body: { shape: 'CreateBatchRequest', example: createRequestExample },
      success: [{ status: 201, messages: [CREATED, CREATED_WITH_ERRORS] }],
    },
  },
  {
    method: 'PUT',
    path: PATH,
    operation: 'RestCreateCallBatch',
    variables: (input) => createInput(input, true),
    detail: bodyDetail,
    respond: (data: RestCreateCallBatchMutation) => respond(data.createCallBatch),
    doc: {
      ...CREATE_DOC,
      operationId: 'putCallBatch',
      summary: 'Create a batch idempotently (preferred)',
      description:
        'Keyed by idempotency_key within the account: the first use creates the batch (201, idempotent false); a repeat returns ' +
        "the original create result unchanged (200, idempotent true) and ignores the retry's contacts and settings, even when they " +
        'differ. Its `status` is the one the create returned (`pending`), whatever the batch has done since: GET the batch for its current status.',
      body: { shape: 'IdempotentCreateBatchRequest', example: idempotentCreateRequestExample },
      success: [
        { status: 201, messages: [CREATED, CREATED_WITH_ERRORS] },
        { status: 200, messages: [EXISTS], example: createReplayExample },
      ],
    },
  },
];
