// A real HTTP webhook receiver on 127.0.0.1 for delivery tests: records every request and answers
// as the test tells it to (status, headers, body, or never).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  path: string;
}

export type Reply = { status: number; headers?: Record<string, string>; body?: string } | 'hang';
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

export async function startReceiver(handler: Handler = () => ({ status: 200 })): Promise<Receiver> {
  let h = handler;
  const received: Received[] = [];
  const make = () =>
    http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const r: Received = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), path: req.url ?? '/' };
        received.push(r);
        const reply = h(r, received.length);
        if (reply === 'hang') return;
        res.writeHead(reply.status, reply.headers ?? {});
        res.end(reply.body ?? '');
      });
    });
  let server = make();
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
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
    url: `http://127.0.0.1:${port}/hooks`,
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
