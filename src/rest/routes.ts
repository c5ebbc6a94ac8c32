// The REST contract as a route table: method + path → named GraphQL operation → envelope.
// One module per area; each route's operation lives in operations/*.graphql.
import type { RestRoute } from './router.ts';
import { accountRoutes } from './routes/account.ts';
import { batchOperationRoutes } from './routes/batch-operations.ts';
import { batchesCreateRoutes } from './routes/batches-create.ts';
import { batchesReadRoutes } from './routes/batches-read.ts';
import { batchExportRoutes } from './routes/batch-export.ts';
import { suppressionRoutes } from './routes/suppressions.ts';
import { complianceRoutes } from './routes/compliance.ts';

export const routes: RestRoute[] = [
  ...accountRoutes,
  ...batchOperationRoutes,
  ...batchesCreateRoutes,
  ...batchesReadRoutes,
  ...batchExportRoutes,
  ...suppressionRoutes,
  ...complianceRoutes,
];
