import SchemaBuilder from '@pothos/core';
import PrismaPlugin from '@pothos/plugin-prisma';
import RelayPlugin from '@pothos/plugin-relay';
import ComplexityPlugin from '@pothos/plugin-complexity';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import { AppError } from '../errors.ts';
import type PrismaTypes from '../generated/pothos-types.ts';
import { getDatamodel } from '../generated/pothos-types.ts';
import type { GraphQLContext } from './context.ts';
import { complexityError, fieldCost, queryLimits, UNPAGED_LIST_SIZE } from './plugins/query-cost.ts';
import type { PrismaClient } from '../generated/prisma/client.ts';
import type { ContactRequest } from '../domain/create-batch-types.ts';
import { MAX_NODE_IDS } from '../domain/global-ids.ts';
import { decodeGlobalId, encodeGlobalId, nodesComplexity, resolveNode, resolveNodes } from './node-resolution.ts';

export const builder = new SchemaBuilder<{
  PrismaTypes: PrismaTypes;
  Context: GraphQLContext;
  /** admin: the operator's ADMIN_TOKEN. API-key fields authenticate through ctx.account(). */
  AuthScopes: { admin: boolean };
  Scalars: {
    DateTime: { Input: Date; Output: Date | string };
    JSON: { Input: unknown; Output: unknown };
    CallBatchContactList: { Input: ContactRequest[]; Output: never };
  };
  DefaultFieldNullability: false;
}>({
  plugins: [ScopeAuthPlugin, ComplexityPlugin, RelayPlugin, PrismaPlugin],
  scopeAuth: {
    authScopes: (ctx) => ({ admin: ctx.isAdmin }),
    unauthorizedError: () => new AppError('FORBIDDEN', 'This operation requires the admin token'),
  },
  defaultFieldNullability: false,
  // Global ids are the objects' own ids (node-resolution.ts); node/nodes load through the request's loaders.
  relay: {
    encodeGlobalID: encodeGlobalId,
    decodeGlobalID: decodeGlobalId,
    nodeQueryOptions: {
      description: "A batch, call, agent or prompt version of the account by its id; null when the id is unknown, malformed or another account's",
      resolve: (_root, { id }, ctx) => resolveNode(ctx, id),
    },
    nodesQueryOptions: {
      description: `Like node, for at most ${MAX_NODE_IDS} ids at once, answered in their order`,
      complexity: nodesComplexity,
      resolve: (_root, { ids }, ctx) => resolveNodes(ctx, ids) as never,
    },
  },
  // Cost ≈ objects fetched (see plugins/query-cost.ts, which also refuses before execution);
  // limits come from config (GRAPHQL_MAX_*).
  complexity: {
    defaultComplexity: 1,
    defaultListMultiplier: UNPAGED_LIST_SIZE,
    fieldComplexity: fieldCost,
    // No limits (so no second walk of the document) once query-cost.ts has checked this operation.
    limit: (ctx) => (ctx.costChecked ? {} : queryLimits(ctx.deps.config)),
    complexityError: (kind, r) =>
      complexityError(kind, r, {
        complexity: r.maxComplexity ?? Infinity,
        depth: r.maxDepth ?? Infinity,
        breadth: r.maxBreadth ?? Infinity,
        lookups: Infinity,
      }),
  },
  prisma: {
    // The client differs per app instance (tests open many databases), so it comes from the context.
    client: (ctx) => ctx.deps.db.prisma as unknown as PrismaClient,
    dmmf: getDatamodel(),
    exposeDescriptions: false,
    filterConnectionTotalCount: true,
    onUnusedQuery: null,
  },
});

builder.queryType({});
builder.mutationType({});
