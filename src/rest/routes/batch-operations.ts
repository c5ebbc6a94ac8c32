// Batch operations beyond the contract: POST /call-batches/{id}/start|pause|resume|cancel. Each
// answers with the batch details in the same shape as GET /call-batches/{id}.
import type { RestRoute, RouteInput } from '../router.ts';
import { batchDetails } from '../../services/representations.ts';
import type {
  RestCancelBatchMutation,
  RestPauseBatchMutation,
  RestResumeBatchMutation,
  RestStartBatchMutation,
} from '../../codegen/graphql.ts';

const BASE = '/api/v1/public/call-batches/:batch_id';

const idVariable = ({ params }: RouteInput) => ({ id: params.batch_id });

export const batchOperationRoutes: RestRoute[] = [
  {
    method: 'POST',
    path: `${BASE}/start`,
    operation: 'RestStartBatch',
    bodyOptional: true,
    variables: idVariable,
    respond: (data: RestStartBatchMutation) => ({
      message: 'Call batch started successfully',
      data: batchDetails(data.startBatch),
    }),
  },
  {
    method: 'POST',
    path: `${BASE}/pause`,
    operation: 'RestPauseBatch',
    bodyOptional: true,
    variables: idVariable,
    respond: (data: RestPauseBatchMutation) => ({
      message: 'Call batch paused successfully',
      data: batchDetails(data.pauseBatch),
    }),
  },
  {
    method: 'POST',
    path: `${BASE}/resume`,
    operation: 'RestResumeBatch',
    bodyOptional: true,
    variables: idVariable,
    respond: (data: RestResumeBatchMutation) => ({
      message: 'Call batch resumed successfully',
      data: batchDetails(data.resumeBatch),
    }),
  },
  {
    method: 'POST',
    path: `${BASE}/cancel`,
    operation: 'RestCancelBatch',
    bodyOptional: true,
    variables: idVariable,
    respond: (data: RestCancelBatchMutation) => ({
      message: 'Call batch cancelled successfully',
      data: batchDetails(data.cancelBatch),
    }),
  },
];
