import type http from 'node:http';
import { WebSocketServer } from 'ws';
import { useServer } from 'graphql-ws/use/ws';
import type { ExecutionArgs } from 'graphql';
import type { AppDeps } from '../deps.ts';
import { AppError } from '../errors.ts';
import { bearerToken } from '../services/api-keys.ts';
import { authenticateFrom } from '../services/rate-limit-guard.ts';
import { nodeClientAddress } from '../http/client-address.ts';
import type { Yoga } from './yoga.ts';

type Enveloped = ReturnType<Yoga['getEnveloped']>;

/** The key comes from connection_init `{ authorization: "Bearer sk_…" }` or the upgrade request's header. */
function authorizationOf(params: Record<string, unknown> | undefined, req: http.IncomingMessage): string | null {
  const fromParams = params?.authorization ?? params?.Authorization;
  if (typeof fromParams === 'string') return fromParams;
  return req.headers.authorization ?? null;
}

/**
 * graphql-ws (graphql-transport-ws protocol) on /graphql, executing through yoga.getEnveloped so
 * WebSocket operations get the same context, auth and plugins as HTTP. The API key is checked once
 * at connection_init; a bad key closes the socket with 4401, a disabled account with 4403.
 */
export function attachWebSocketServer(server: http.Server, yoga: Yoga, deps: AppDeps): () => Promise<void> {
  const wss = new WebSocketServer({ server, path: '/graphql' });
  useServer<Record<string, unknown>, { request: http.IncomingMessage; authorization?: string | null }>(
    {
      onConnect: async (ctx) => {
        const authorization = authorizationOf(ctx.connectionParams, ctx.extra.request);
        try {
          // Same failed-attempt budget per client address as HTTP (4429 once it is spent).
          await authenticateFrom(deps, bearerToken(authorization), nodeClientAddress(ctx.extra.request, deps.config.TRUST_PROXY));
        } catch (e) {
          const code = e instanceof AppError ? e.code : 'UNAUTHENTICATED';
          if (code === 'RATE_LIMITED') ctx.extra.socket.close(4429, 'Too many requests');
          else if (code === 'FORBIDDEN') ctx.extra.socket.close(4403, 'Forbidden');
          else ctx.extra.socket.close(4401, 'Invalid API key');
          return false;
        }
        ctx.extra.authorization = authorization;
        return true;
      },
      execute: (args) => (args.rootValue as Enveloped).execute(args as ExecutionArgs),
      subscribe: (args) => (args.rootValue as Enveloped).subscribe(args as ExecutionArgs),
      onSubscribe: async (ctx, _id, params) => {
        const headers: Record<string, string> = {};
        if (ctx.extra.authorization) headers.authorization = ctx.extra.authorization;
        const request = new Request('http://websocket.local/graphql', { headers });
        const enveloped = yoga.getEnveloped({ request, params });
        const document = enveloped.parse(params.query);
        const errors = enveloped.validate(enveloped.schema, document);
        if (errors.length) return errors;
        return {
          schema: enveloped.schema,
          document,
          operationName: params.operationName,
          variableValues: params.variables,
          contextValue: await enveloped.contextFactory(),
          rootValue: enveloped,
        };
      },
    },
    wss,
  );
  return () =>
    new Promise<void>((resolve) => {
      for (const client of wss.clients) client.terminate();
      wss.close(() => resolve());
    });
}
