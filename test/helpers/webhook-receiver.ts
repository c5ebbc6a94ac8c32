// A real HTTP webhook receiver (on 127.0.0.1 unless told otherwise) for delivery tests: records every request and answers
// as the test tells it to (status, headers, body, or never).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  path: string;
  /** How the answer went out: bytes of body written, and whether the sender read it to the end. */
  response: ResponseLog;
}

export interface ResponseLog {
  bodyBytesWritten: number;
  /** true: the whole answer was flushed; false: the sender hung up first. Set once `closed` resolves. */
  finished: boolean | null;
  closed: Promise<void>;
}

export type Reply =
  | {
      status: number;
      headers?: Record<string, string>;
      body?: string;
      /** Instead of `body`: this many bytes streamed in 64 KiB chunks, as fast as the sender reads. */
      streamBytes?: number;
    }
  | 'hang';
export type Handler = (req: Received, n: number) => Reply;

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** Events by type, from the recorded bodies. */
  bodies(): { id: string; type: string; created_at: string; data: Record<string, any> }[];
  setHandler(h: Handler): void;
  /** Stops listening (connections refused from now on); `start` listens again on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

/** `host`: the address to listen on (127.0.0.1 unless a test's hosts need another). */
export async function startReceiver(handler: Handler = () => ({ status: 200 }), opts: { host?: string } = {}): Promise<Receiver> {
  const host = opts.host ?? '127.0.0.1';
  let h = handler;
  const received: Received[] = [];
  const make = () =>
    http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const log: ResponseLog = { bodyBytesWritten: 0, finished: null, closed: new Promise((r) => res.once('close', r)) };
        void log.closed.then(() => (log.finished = res.writableFinished));
        const r: Received = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), path: req.url ?? '/', response: log };
        received.push(r);
        const reply = h(r, received.length);
        if (reply === 'hang') return;
        res.writeHead(reply.status, reply.headers ?? {});
        if (reply.streamBytes === undefined) {
          log.bodyBytesWritten = Buffer.byteLength(reply.body ?? '');
          res.end(reply.body ?? '');
          return;
        }
        const chunk = Buffer.alloc(64 * 1024, 'x');
        let left = reply.streamBytes;
        const pump = () => {
          while (left > 0 && !res.destroyed) {
            const n = Math.min(left, chunk.length);
            left -= n;
            log.bodyBytesWritten += n;
            if (left === 0) res.end(chunk.subarray(0, n));
            else if (!res.write(chunk.subarray(0, n))) return void res.once('drain', pump);
          }
        };
        pump();
      });
    });
  let server = make();
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
  await listen(0);
  const port = (server.address() as AddressInfo).port;
  let listening = true;
  const stop = async () => {
    if (!listening) return;
    listening = false;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return {
    url: `http://${host}:${port}/hooks`,
    port,
    received,
    bodies: () => received.map((r) => JSON.parse(r.body)),
    setHandler: (fn) => (h = fn),
    stop,
    async start() {
      if (listening) return;
      server = make();
      await listen(port);
      listening = true;
    },
    close: stop,
  };
}
