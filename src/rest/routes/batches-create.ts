// POST (non-idempotent) and PUT (idempotent) /api/v1/public/call-batches. The route reads the body
// into the typed create input; value checks, business rules and idempotency live in the service.
import type { RestRoute, RouteInput } from '../router.ts';
import type { BatchCreateResultFieldsFragment, RestCreateCallBatchMutation } from '../../codegen/graphql.ts';
import type { PathIssue } from '../../domain/field-issue.ts';
import { readCreateBatchBody, restDetail } from '../create-batch-body.ts';

const PATH = '/api/v1/public/call-batches';

/** The contract's Create result, field for field in the table's order. */
function createResultOut(r: BatchCreateResultFieldsFragment) {
  return {
    batch_id: r.batchId,
    agent_id: r.agentId,
    version_id: r.versionId,
    status: r.status,
    start_mode: r.startMode,
    total_contacts: r.totalContacts,
    accepted_contacts: r.acceptedContacts,
    rejected_contacts: r.rejectedContacts,
    validation_errors: r.validationErrors.map((e) => ({
      index: e.index,
      external_id: e.externalId,
      field: e.field,
      message: e.message,
    })),
    concurrency: r.concurrency,
    created_at: r.createdAt,
    idempotent: r.idempotent,
  };
}

function respond(r: BatchCreateResultFieldsFragment) {
  if (r.idempotent) {
    return { status: 200, message: 'Call batch already exists for this idempotency key', data: createResultOut(r) };
  }
  const message = r.rejectedContacts > 0 ? 'Call batch created with validation errors' : 'Call batch created successfully';
  return { status: 201, message, data: createResultOut(r) };
}

function createInput(input: RouteInput, idempotent: boolean) {
  const { contacts, ...request } = readCreateBatchBody(input.body, {
    idempotent,
    maxCallDurationSeconds: input.account.maxCallDurationSeconds,
  });
  return { input: { ...request, contactList: contacts } };
}

const bodyDetail = (issue: PathIssue, input: RouteInput) => restDetail(issue, input.body);

export const batchesCreateRoutes: RestRoute[] = [
  {
    method: 'POST',
    path: PATH,
    operation: 'RestCreateCallBatch',
    variables: (input) => createInput(input, false),
    detail: bodyDetail,
    respond: (data: RestCreateCallBatchMutation) => respond(data.createCallBatch),
  },
  {
    method: 'PUT',
    path: PATH,
    operation: 'RestCreateCallBatch',
    variables: (input) => createInput(input, true),
    detail: bodyDetail,
    respond: (data: RestCreateCallBatchMutation) => respond(data.createCallBatch),
  },
];
