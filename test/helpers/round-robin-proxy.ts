// A load balancer for tests: an HTTP proxy that sends each request to the next of its upstreams in
// turn, as a round-robin balancer in front of several API processes does. A request an upstream
// could not have seen (connection refused, or reset before any answer for a GET/HEAD) goes to the
// next one, so a dead upstream costs nothing but a retry. It adds `X-Forwarded-For` (the APIs run
// with TRUST_PROXY) and names the upstream that answered in `x-upstream`. Bodies are read whole
// first (tests send at most a few MB), so a retry can send them again.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Upstream {
  name: string;
  host: string;
  port: number;
}

export interface RoundRobinProxy {
  url: string;
  /** Answers relayed, by upstream name. */
  served: Map<string, number>;
  /** Attempts that failed over to the next upstream, by the upstream that failed. */
  failovers: Map<string, number>;
  close(): Promise<void>;
}

type Attempt = { ok: true; res: http.IncomingMessage } | { ok: false; error: NodeJS.ErrnoException };

function send(u: Upstream, req: http.IncomingMessage, body: Buffer): Promise<Attempt> {
  return new Promise((resolve) => {
    const prior = req.headers['x-forwarded-for'];
    const headers: http.OutgoingHttpHeaders = {
      ...req.headers,
      host: `${u.host}:${u.port}`,
      'content-length': String(body.length),
      'x-forwarded-for': `${prior ? `${String(prior)}, ` : ''}${req.socket.remoteAddress ?? ''}`,
    };
    delete headers.connection;
    delete headers['transfer-encoding'];
    // A fresh connection per request: a dead upstream then fails at connect, before anything is sent.
    const out = http.request({ host: u.host, port: u.port, method: req.method, path: req.url, headers, agent: false }, (res) =>
      resolve({ ok: true, res }),
    );
    out.on('error', (error) => resolve({ ok: false, error }));
    out.end(body);
  });
}

/** Whether the upstream cannot have acted on the request, so another may take it. */
function safeToRetry(method: string | undefined, error: NodeJS.ErrnoException): boolean {
  if (['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH'].includes(error.code ?? '')) return true;
  return method === 'GET' || method === 'HEAD';
}

export async function startRoundRobinProxy(host: string, upstreams: Upstream[]): Promise<RoundRobinProxy> {
  const served = new Map<string, number>();
  const failovers = new Map<string, number>();
  let next = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks);
      const first = next++ % upstreams.length;
      let lastError: NodeJS.ErrnoException | undefined;
      for (let i = 0; i < upstreams.length; i++) {
        const u = upstreams[(first + i) % upstreams.length]!;
        const r = await send(u, req, body);
        if (r.ok) {
          served.set(u.name, (served.get(u.name) ?? 0) + 1);
          res.writeHead(r.res.statusCode ?? 502, { ...r.res.headers, 'x-upstream': u.name });
          r.res.pipe(res);
          r.res.on('error', () => res.destroy());
          return;
        }
        lastError = r.error;
        if (!safeToRetry(req.method, r.error)) break;
        failovers.set(u.name, (failovers.get(u.name) ?? 0) + 1);
      }
      res.writeHead(502, { 'content-type': 'text/plain' }).end(`no upstream answered: ${lastError?.code ?? lastError?.message}`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    served,
    failovers,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
