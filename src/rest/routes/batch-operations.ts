// Batch operations beyond the contract: POST /call-batches/{id}/start|pause|resume|cancel. Each
// answers with the batch details in the same shape as GET /call-batches/{id}.
import type { RestRoute, RouteInput } from '../router.ts';
import { batchDetails } from '../../services/representations.ts';
import { ref } from '../openapi/json-schema.ts';
import { batchDetailsExample } from '../openapi/examples.ts';
import type { RouteDoc } from '../openapi/route-doc.ts';
import type { RestCancelBatchMutation, RestPauseBatchMutation, RestResumeBatchMutation, RestStartBatchMutation } from '../../codegen/graphql.ts';

const BASE = '/api/v1/public/call-batches/:batch_id';

const idVariable = ({ params }: RouteInput) => ({ id: params.batch_id });

const MESSAGES = {
  start: 'Call batch started successfully',
  pause: 'Call batch paused successfully',
  resume: 'Call batch resumed successfully',
  cancel: 'Call batch cancelled successfully',
};

const SUMMARIES = {
  start: 'Start a manual or scheduled batch now (paused/pending → queued)',
  pause: 'Pause a running batch; calls in flight finish',
  resume: 'Resume a paused batch',
  cancel: 'Cancel a batch: calls not yet dialled become cancelled',
};

function doc(op: keyof typeof MESSAGES): RouteDoc {
  return {
    operationId: `${op}Batch`,
    tag: 'Batch operations',
    summary: SUMMARIES[op],
    description:
      "Beyond the published contract. Takes no body. Answers the batch details, as GET /call-batches/{batch_id}. An operation the batch's state does not allow is 409 INVALID_STATE.",
    success: [{ status: 200, messages: [MESSAGES[op]] }],
    data: ref('BatchDetails'),
    example: batchDetailsExample,
    errors: ['NOT_FOUND', 'CONFLICT'],
  };
}

export const batchOperationRoutes: RestRoute[] = [
  {
    method: 'POST',
    path: `${BASE}/start`,
    operation: 'RestStartBatch',
    bodyOptional: true,
    variables: idVariable,
    respond: (data: RestStartBatchMutation) => ({
      message: MESSAGES.start,
      data: batchDetails(data.startBatch),
    }),
    doc: doc('start'),
  },
  {
    method: 'POST',
    path: `${BASE}/pause`,
    operation: 'RestPauseBatch',
    bodyOptional: true,
    variables: idVariable,
    respond: (data: RestPauseBatchMutation) => ({
      message: MESSAGES.pause,
      data: batchDetails(data.pauseBatch),
    }),
    doc: doc('pause'),
  },
  {
    method: 'POST',
    path: `${BASE}/resume`,
    operation: 'RestResumeBatch',
    bodyOptional: true,
    variables: idVariable,
    respond: (data: RestResumeBatchMutation) => ({
      message: MESSAGES.resume,
      data: batchDetails(data.resumeBatch),
    }),
    doc: doc('resume'),
  },
  {
    method: 'POST',
    path: `${BASE}/cancel`,
    operation: 'RestCancelBatch',
    bodyOptional: true,
    variables: idVariable,
    respond: (data: RestCancelBatchMutation) => ({
      message: MESSAGES.cancel,
      data: batchDetails(data.cancelBatch),
    }),
    doc: doc('cancel'),
  },
];
