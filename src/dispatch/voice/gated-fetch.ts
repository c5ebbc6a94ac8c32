// The last check before a request that acts on a call (create-phone-call) leaves the process. The
// worker confirms its lease before it asks, but fetch then takes several turns (headers, a pooled
// or new connection) before the bytes go out, and a process paused in between sent them on waking,
// a lease it had lost later (the fault campaign's seed 20261131, round 89: a dial 1.4 s after
// recovery took the call). Here the request waits for its connection, then asks `gate` and writes
// the whole request in the same synchronous step, so nothing but a pause inside that step can
// separate the check from the send. Other requests go to the global fetch untouched.
import http from 'node:http';
import https from 'node:https';

/** Passed in a request's fetchOptions: true while the request may still leave. */
export const SEND_GATE = 'sendGate';

/** Responses of the requests gated here are small JSON objects; a larger one is cut off. */
const MAX_RESPONSE_BYTES = 4 << 20;

export class GateClosedError extends Error {
  override name = 'GateClosedError';
  constructor() {
    super('the request was not sent: its gate was closed when its connection was ready');
  }
}

type GatedInit = RequestInit & { [SEND_GATE]?: () => boolean };

export function gatedFetch(url: string | URL | Request, init?: RequestInit): Promise<Response> {
  const gate = (init as GatedInit | undefined)?.[SEND_GATE];
  if (!gate || url instanceof Request) return fetch(url, init);
  return sendGated(new URL(url), init as GatedInit, gate);
}

function sendGated(url: URL, init: GatedInit, gate: () => boolean): Promise<Response> {
  return new Promise<Response>((resolve, reject) => {
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((v, k) => (headers[k] = v));
    const body = typeof init.body === 'string' ? init.body : init.body == null ? '' : null;
    if (body === null) return reject(new TypeError('gatedFetch sends string bodies only'));
    headers['content-length'] = String(Buffer.byteLength(body));
    const req = (url.protocol === 'https:' ? https : http).request(url, { method: init.method ?? 'GET', headers });
    const signal = init.signal;
    const onAbort = () => req.destroy(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    req.on('error', (err) => {
      signal?.removeEventListener('abort', onAbort);
      reject(err);
    });
    req.on('socket', (socket) => {
      const send = () => (gate() ? req.end(body) : req.destroy(new GateClosedError()));
      if (req.reusedSocket) return send();
      // A new TLS connection takes bytes only once its handshake is done.
      if (url.protocol === 'https:') return void socket.once('secureConnect', send);
      if (!socket.connecting) return send();
      socket.once('connect', send);
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_RESPONSE_BYTES) return res.destroy(new Error(`response over ${MAX_RESPONSE_BYTES} bytes`));
        chunks.push(chunk);
      });
      res.on('error', reject);
      res.on('end', () => {
        signal?.removeEventListener('abort', onAbort);
        const resHeaders = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) resHeaders.set(k, Array.isArray(v) ? v.join(', ') : v);
        const status = res.statusCode ?? 502;
        const noBody = status === 204 || status === 304;
        resolve(new Response(noBody ? null : Buffer.concat(chunks), { status, statusText: res.statusMessage, headers: resHeaders }));
      });
    });
  });
}
