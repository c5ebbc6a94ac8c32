// Per-operation rate limiting for GraphQL: every operation authenticates before it is parsed (HTTP)
// or executed (WebSocket, REST facade), whether or not a resolver later asks for the account. With
// a valid key it spends one unit of the account's budget; with a wrong one, one unit of the client
// address's failed-authentication budget; without a key (introspection, `__typename`), one unit of
// the address's anonymous budget. Every HTTP response reports the account's budget.
import type { Plugin } from 'graphql-yoga';
import type { ApiDeps } from '../../http/app-services.ts';
import { AppError } from '../../errors.ts';
import { bearerToken } from '../../services/auth/api-keys.ts';
import { rateLimitHeaders } from '../../services/auth/rate-limit.ts';
import { authenticateRequest } from '../../http/authenticate-request.ts';
import type { RequestScope, ServerContext } from '../../http/request-scope.ts';
import { isAdminToken } from '../../services/auth/admin-token.ts';
import type { GraphQLContext } from '../context.ts';

/**
 * Authenticates ahead of execution; only a RATE_LIMITED outcome is returned (to refuse the
 * operation). Other auth failures stay with the resolvers that need an account, as before:
 * the outcome is memoised per request, so they see the same error without a second check.
 */
async function rateLimitRefusal(deps: ApiDeps, request: Request, scope: RequestScope, isAdmin?: boolean): Promise<AppError | null> {
  const token = bearerToken(request.headers.get('authorization'));
  if (isAdmin ?? isAdminToken(deps, token)) return null;
  try {
    await authenticateRequest(deps, scope, token);
    return null;
  } catch (e) {
    return e instanceof AppError && e.code === 'RATE_LIMITED' ? e : null;
  }
}

export function useRateLimit(deps: ApiDeps): Plugin<GraphQLContext, ServerContext> {
  return {
    async onParams({ request, context, setResult }) {
      const refusal = await rateLimitRefusal(deps, request, context.scope);
      if (refusal) setResult({ errors: [refusal] });
    },
    async onExecute({ args, setResultAndStopExecution }) {
      const ctx = args.contextValue;
      const refusal = await rateLimitRefusal(deps, ctx.request, ctx.scope, ctx.isAdmin);
      if (refusal) setResultAndStopExecution({ errors: [refusal] });
    },
    async onSubscribe({ args, setResultAndStopExecution }) {
      const ctx = args.contextValue;
      const refusal = await rateLimitRefusal(deps, ctx.request, ctx.scope, ctx.isAdmin);
      if (refusal) setResultAndStopExecution({ errors: [refusal] });
    },
    onResponse({ serverContext, response }) {
      const state = serverContext.scope?.rateLimit;
      if (state) for (const [name, value] of Object.entries(rateLimitHeaders(state))) response.headers.set(name, value);
    },
  };
}
