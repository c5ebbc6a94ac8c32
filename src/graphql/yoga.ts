import { createYoga, maskError, type YogaServerInstance } from 'graphql-yoga';
import { unavailableFor } from '../db/unreachable.ts';
import type { ApiDeps } from '../http/app-services.ts';
import { createContext, type GraphQLContext } from './context.ts';
import { schema } from './schema.ts';
import { useRateLimit } from './plugins/rate-limit.ts';
import { useInputGuard } from './plugins/input-guard.ts';
import { useQueryCost } from './plugins/query-cost.ts';
import { useEndRevokedSubscriptions } from './plugins/end-revoked-subscriptions.ts';
import { useHideOperatorSchema } from './plugins/hide-operator-schema.ts';
import type { LiveSessions } from './live-sessions.ts';
import type { Graphiql } from '../http/graphiql.ts';
import type { ServerContext } from '../http/request-scope.ts';
import type { TrustedDocuments } from '../http/trusted-documents.ts';
import { useTrustedDocuments } from './plugins/trusted-documents.ts';
import { useCompiledDocuments } from './plugins/compiled-documents.ts';
import { useBoundedErrors } from './plugins/bounded-errors.ts';
import { boundedParseCaches } from './parse-cache.ts';
import { useContactCountLimit } from './plugins/contact-count.ts';
import type { DocumentNode } from 'graphql';

export type Yoga = YogaServerInstance<ServerContext, GraphQLContext>;

/** `compiled`: the documents run compiled by graphql-jit (the REST facade's, plugins/compiled-documents.ts). */
export function createYogaServer(
  deps: ApiDeps,
  sessions: LiveSessions,
  graphiql: Graphiql,
  trusted: TrustedDocuments,
  compiled: Iterable<DocumentNode> = [],
): Yoga {
  return createYoga<ServerContext, GraphQLContext>({
    schema,
    graphqlEndpoint: '/graphql',
    graphiql: { title: 'Call batch service', defaultQuery: '{ me { id name limits { maxBatchSize } } }' },
    // From the installed package, not from a CDN (src/http/graphiql.ts).
    renderGraphiQL: (opts) => graphiql.render(opts),
    // Anything that is not an AppError is masked ("Unexpected error.") and logged, on both surfaces;
    // an unreachable database is the 503 UNAVAILABLE with Retry-After instead (REST reads it too).
    maskedErrors: { maskError: (error, message, isDev) => unavailableFor(error) ?? maskError(error, message, isDev) },
    logging: deps.logger.child({ component: 'yoga' }) as never,
    landingPage: false,
    // CORS for every path (REST and GraphQL alike) is handled in src/http/cors.ts.
    cors: false,
    // Off: the front door (src/http/front-door.ts) reads every GraphQL body under its cap before
    // Yoga sees it and hands Yoga those bytes. Yoga's own cap re-read them through a web stream
    // pipeline, a fifth of a small query's CPU.
    maxRequestBodySize: false,
    // Bounded by the heap it holds, not by entries (Yoga's default: 1,024 texts of any size).
    parserAndValidationCache: boundedParseCaches(deps.config.GRAPHQL_PARSE_CACHE_BYTES),
    // Order matters: the operation is counted against the rate limit even when refused later.
    plugins: [
      // Its hooks see every result, also one a later plugin ends early.
      useBoundedErrors(),
      useRateLimit(deps),
      useTrustedDocuments(schema, trusted),
      // Before the input guard's walk of every variable and before coercion.
      useContactCountLimit(schema),
      useInputGuard(),
      useQueryCost(deps.config),
      useEndRevokedSubscriptions(sessions, deps.config.MAX_SUBSCRIPTIONS_PER_KEY),
      useHideOperatorSchema(schema),
      // Last: the hooks above run first, on every document alike.
      useCompiledDocuments(schema, compiled),
    ],
    context: ({ request, scope }) => createContext(deps, request, scope),
  });
}
