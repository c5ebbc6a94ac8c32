import type http from 'node:http';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { useServer } from 'graphql-ws/use/ws';
import { GraphQLError, type ExecutionArgs, type GraphQLFormattedError } from 'graphql';
import type { ApiDeps } from '../http/app-services.ts';
import { AppError } from '../errors.ts';
import { unavailableFor } from '../db/unreachable.ts';
import { bearerToken } from '../services/auth/api-keys.ts';
import { authenticateFrom } from '../http/authenticate-request.ts';
import { nodeClientAddress } from '../http/client-address.ts';
import type { LiveSessions, SessionRefusal } from './live-sessions.ts';
import { newRequestScope } from '../http/request-scope.ts';
import { MAX_JSON_NESTING } from '../http/body.ts';
import { jsonShapeFault } from '../http/json-shape.ts';
import type { Yoga } from './yoga.ts';
import type { SocketOperation } from './socket-pump.ts';

/** WebSocket close code 1013 (Try Again Later, RFC 6455 registry): the database cannot be reached now. */
const WS_TRY_AGAIN_LATER = 1013;
const UNAVAILABLE_CLOSE_REASON = 'Service temporarily unavailable';

type Enveloped = ReturnType<Yoga['getEnveloped']>;

type SocketExtra = {
  request: http.IncomingMessage;
  authorization?: string | null;
  untrack?: () => void;
};

/** A socket past a cap of open subscriptions and sockets is closed with 4429 and one of these. */
const CAP_CLOSE_REASONS: Record<SessionRefusal['cap'], string> = {
  key: 'Too many sockets and subscriptions for this API key',
  account: 'Too many sockets and subscriptions for this account',
  process: 'Too many sockets and subscriptions on this server',
};

/** The key comes from connection_init `{ authorization: "Bearer sk_…" }` or the upgrade request's header. */
function authorizationOf(params: Record<string, unknown> | undefined, req: http.IncomingMessage): string | null {
  const fromParams = params?.authorization ?? params?.Authorization;
  if (typeof fromParams === 'string') return fromParams;
  return req.headers.authorization ?? null;
}

/** Open sockets per client address, counted at upgrade (before any authentication). */
function connectionCounter(max: number) {
  const open = new Map<string, number>();
  return {
    admits: (address: string) => (open.get(address) ?? 0) < max,
    opened(address: string, socket: WebSocket) {
      open.set(address, (open.get(address) ?? 0) + 1);
      socket.once('close', () => {
        const n = (open.get(address) ?? 1) - 1;
        if (n > 0) open.set(address, n);
        else open.delete(address);
      });
    },
  };
}

/**
 * An error as a socket sends it: `extensions.http` (the status and headers of the GraphQL-over-HTTP
 * answer) is HTTP's, and Yoga drops it from HTTP and SSE answers alike.
 */
function socketErrors(errors: readonly GraphQLError[]): GraphQLFormattedError[] {
  return errors.map((e) => {
    const json = typeof e.toJSON === 'function' ? e.toJSON() : (e as GraphQLFormattedError);
    if (!json.extensions || !('http' in json.extensions)) return json;
    const { http: _http, ...extensions } = json.extensions;
    const { extensions: _all, ...rest } = json;
    return Object.keys(extensions).length ? { ...rest, extensions } : rest;
  });
}

/**
 * A frame over the size cap or otherwise malformed is the client's mistake, which `ws` reports as a
 * socket error (it has already closed the socket with 1009/1002). graphql-ws prints every socket
 * error with its stack to stderr as an internal one, so a client could flood the logs: those
 * errors are logged at debug level instead; anything else still goes to graphql-ws.
 */
function quietProtocolErrors(socket: WebSocket, logger: ApiDeps['logger']): void {
  const theirs = socket.listeners('error') as Array<(err: Error) => void>;
  socket.removeAllListeners('error');
  socket.on('error', (err: Error & { code?: string }) => {
    if (err.code?.startsWith('WS_ERR_')) logger.debug({ code: err.code }, 'websocket protocol error from client');
    else for (const listener of theirs) listener.call(socket, err);
  });
}

/**
 * graphql-ws reads each message with JSON.parse: one past the JSON shape limits (nesting, keys of
 * an object, objects and arrays; http/json-shape.ts) closes the socket with 4400 before it is
 * parsed, as a message graphql-ws can't read does.
 */
function refuseMessageShapes(socket: WebSocket): void {
  const theirs = socket.listeners('message') as Array<(data: RawData, isBinary: boolean) => void>;
  socket.removeAllListeners('message');
  socket.on('message', (data: RawData, isBinary: boolean) => {
    const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
    const shape = jsonShapeFault(bytes, MAX_JSON_NESTING);
    if (shape) return socket.close(4400, `Message ${shape}`.slice(0, 123));
    for (const listener of theirs) listener.call(socket, data, isBinary);
  });
}

/**
 * What one operation writes its messages with: true once the socket took one at once, false once
 * it is closing or closed. A socket with bytes still unsent (a slow reader) gives a promise of
 * either, settled once every message of the operation is written. No promise on the usual path, so
 * a fan-out stays one loop of writes (events/queue.ts's sink).
 */
export function operationWriter(socket: WebSocket): (message: string) => boolean | Promise<boolean> {
  let sent = 0;
  let written = 0;
  let failed = false;
  let waiting: ((ok: boolean) => void) | undefined;
  const onWritten = (err?: Error | null) => {
    written++;
    if (err) failed = true;
    if (waiting && (failed || written === sent)) {
      const w = waiting;
      waiting = undefined;
      w(!failed);
    }
  };
  return (message) => {
    if (failed || socket.readyState !== WebSocket.OPEN) return false;
    sent++;
    socket.send(message, onWritten);
    if (socket.bufferedAmount === 0) return true;
    return new Promise((resolve) => (waiting = resolve));
  };
}

/**
 * graphql-ws (graphql-transport-ws protocol) on /graphql, executing through yoga.getEnveloped so
 * WebSocket operations get the same context, auth and plugins as HTTP. The API key is checked once
 * at connection_init (a bad key closes with 4401, a disabled account with 4403) and then every
 * CREDENTIAL_RECHECK_MS: a key that stops authenticating closes the socket with 4403. Frames,
 * sockets per address, the wait for connection_init and operations per socket are bounded.
 */
export function attachWebSocketServer(server: http.Server, yoga: Yoga, deps: ApiDeps, sessions: LiveSessions): () => Promise<void> {
  const { config } = deps;
  const counter = connectionCounter(config.WS_MAX_CONNECTIONS_PER_ADDRESS);
  const addressOf = (req: http.IncomingMessage) => nodeClientAddress(req, config.TRUST_PROXY) ?? 'unknown';
  const wss = new WebSocketServer({
    server,
    path: '/graphql',
    maxPayload: config.WS_MAX_PAYLOAD_BYTES,
    verifyClient: (info, done) => (counter.admits(addressOf(info.req)) ? done(true) : done(false, 429, 'Too many connections')),
  });
  wss.on('connection', (socket, req) => counter.opened(addressOf(req), socket));

  useServer<Record<string, unknown>, SocketExtra>(
    {
      connectionInitWaitTimeout: config.WS_INIT_TIMEOUT_MS,
      onConnect: async (ctx) => {
        const authorization = authorizationOf(ctx.connectionParams, ctx.extra.request);
        const token = bearerToken(authorization);
        let accountId: string;
        try {
          // Same failed-attempt budget per client address as HTTP (4429 once it is spent).
          accountId = (await authenticateFrom(deps, token, nodeClientAddress(ctx.extra.request, config.TRUST_PROXY))).id;
        } catch (e) {
          // The database is unreachable: the key may well be good (HTTP answers 503 + Retry-After).
          if (unavailableFor(e)) {
            ctx.extra.socket.close(WS_TRY_AGAIN_LATER, UNAVAILABLE_CLOSE_REASON);
            return false;
          }
          const code = e instanceof AppError ? e.code : 'UNAUTHENTICATED';
          if (code === 'RATE_LIMITED') ctx.extra.socket.close(4429, 'Too many requests');
          else if (code === 'FORBIDDEN') ctx.extra.socket.close(4403, 'Forbidden');
          else ctx.extra.socket.close(4401, 'Invalid API key');
          return false;
        }
        const refusal = sessions.refusal(token!, accountId, config);
        if (refusal) {
          ctx.extra.socket.close(4429, CAP_CLOSE_REASONS[refusal.cap]);
          return false;
        }
        ctx.extra.authorization = authorization;
        ctx.extra.untrack = sessions.track(token!, () => ctx.extra.socket.close(4403, 'Credentials revoked'), accountId);
        return true;
      },
      onClose: (ctx) => ctx.extra.untrack?.(),
      execute: (args) => (args.rootValue as Enveloped).execute(args as ExecutionArgs),
      subscribe: (args) => (args.rootValue as Enveloped).subscribe(args as ExecutionArgs),
      onNext: (_ctx, _id, _payload, _args, result) => (result.errors?.length ? { ...result, errors: socketErrors(result.errors) } : undefined),
      onError: (_ctx, _id, _payload, errors) => socketErrors(errors),
      // Anything wrong with one operation is answered on that operation; the socket and its other
      // subscriptions stay open.
      onSubscribe: async (ctx, id, params) => {
        // The operation being prepared is already listed.
        if (Object.keys(ctx.subscriptions).length > config.WS_MAX_OPERATIONS_PER_SOCKET) {
          return [
            new GraphQLError(`At most ${config.WS_MAX_OPERATIONS_PER_SOCKET} operations at once on one socket`, {
              extensions: { code: 'RATE_LIMITED' },
            }),
          ];
        }
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (ctx.extra.authorization) headers.authorization = ctx.extra.authorization;
        // POST: Yoga refuses mutations on any other method; the socket has no HTTP method of its own.
        const request = new Request('http://websocket.local/graphql', { method: 'POST', headers });
        try {
          // The key was checked at connection_init under the address budget; the scope is this operation's.
          const enveloped = yoga.getEnveloped({ request, params, scope: newRequestScope(undefined) });
          const document = enveloped.parse(params.query);
          const errors = enveloped.validate(enveloped.schema, document);
          if (errors.length) return errors;
          const socketOperation: SocketOperation = { id, send: operationWriter(ctx.extra.socket) };
          return {
            schema: enveloped.schema,
            document,
            operationName: params.operationName,
            variableValues: params.variables,
            contextValue: Object.assign(await enveloped.contextFactory(), { socketOperation }),
            rootValue: enveloped,
          };
        } catch (e) {
          if (e instanceof GraphQLError) return [e];
          const unavailable = unavailableFor(e);
          if (unavailable) return [new GraphQLError(unavailable.message, { extensions: { code: unavailable.code } })];
          deps.logger.error({ err: e }, 'websocket operation failed');
          return [new GraphQLError('Unexpected error.')];
        }
      },
    },
    wss,
  );
  wss.on('connection', (socket) => {
    quietProtocolErrors(socket, deps.logger);
    refuseMessageShapes(socket);
  });
  return () =>
    new Promise<void>((resolve) => {
      for (const client of wss.clients) client.terminate();
      wss.close(() => resolve());
    });
}
