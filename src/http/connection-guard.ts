// What a connection may cost before its request is in: its headers within HTTP_HEADERS_TIMEOUT_MS,
// the whole request within HTTP_REQUEST_TIMEOUT_MS (Node answers 408 and closes), and at most
// MAX_CONNECTIONS_PER_ADDRESS open per client address, counted at accept, before any byte is read.
// A body's own pace is kept by its reader (src/http/body.ts).
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import type { Config } from '../config.ts';
import type { Metrics } from '../metrics.ts';
import { normalizeAddress } from './client-address.ts';

type GuardConfig = Pick<Config, 'HTTP_HEADERS_TIMEOUT_MS' | 'HTTP_REQUEST_TIMEOUT_MS' | 'MAX_CONNECTIONS_PER_ADDRESS' | 'TRUST_PROXY'>;

/** Node checks its timeouts on this interval (30 s by default, which would stretch a 10 s one to 40 s). */
const TIMEOUT_CHECK_MS = 1_000;

export function httpServerOptions(config: GuardConfig): http.ServerOptions {
  const headersTimeout = config.HTTP_HEADERS_TIMEOUT_MS;
  return {
    headersTimeout,
    // Node refuses a request timeout shorter than the headers' one.
    requestTimeout: Math.max(config.HTTP_REQUEST_TIMEOUT_MS, headersTimeout),
    connectionsCheckingInterval: Math.min(TIMEOUT_CHECK_MS, headersTimeout),
  };
}

/** Node's own answers to a client error, which a 'clientError' listener takes over. */
const CLIENT_ERROR_ANSWERS: Record<string, string> = {
  ERR_HTTP_REQUEST_TIMEOUT: '408 Request Timeout',
  HPE_HEADER_OVERFLOW: '431 Request Header Fields Too Large',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: '413 Payload Too Large',
};

export function guardConnections(server: http.Server, config: GuardConfig, metrics: Metrics): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // A response object on the socket: the request's headers were in, its body was not.
    const inFlight = (socket as Duplex & { _httpMessage?: http.ServerResponse | null })._httpMessage;
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') metrics.slowClients.inc({ phase: inFlight ? 'body' : 'headers' });
    if (socket.writable && !inFlight?.headersSent) {
      socket.write(`HTTP/1.1 ${CLIENT_ERROR_ANSWERS[err.code ?? ''] ?? '400 Bad Request'}\r\nConnection: close\r\n\r\n`);
    }
    socket.destroy(err);
  });
  // Behind a trusted proxy every connection is the proxy's: the cap would throttle all clients as one.
  if (!config.TRUST_PROXY) capConnectionsPerAddress(server, config.MAX_CONNECTIONS_PER_ADDRESS, () => metrics.connectionsRefused.inc());
}

function capConnectionsPerAddress(server: http.Server, max: number, refused: () => void): void {
  const open = new Map<string, number>();
  server.on('connection', (socket) => {
    const address = normalizeAddress(socket.remoteAddress ?? 'unknown');
    const n = open.get(address) ?? 0;
    if (n >= max) {
      refused();
      socket.destroy();
      return;
    }
    open.set(address, n + 1);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left > 0) open.set(address, left);
      else open.delete(address);
    });
  });
}
