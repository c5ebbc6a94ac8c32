// Benchmark (not a test): what one live-progress fan-out costs the API process, with nothing else
// running, against the floor — the same message written with a bare `ws.send` to every socket.
//
//   npm run bench:fanout [-- --sockets 1000 --rounds 100 --repeats 3]
//
// `sockets` WebSocket clients in a child process; this process holds the server side of each. A
// round writes one ~250-byte `next` message to every socket and waits until the child has read them
// all. Variants, alternating `repeats` times:
//   bare  `ws.send(message)` to each socket in a loop: the floor (framing, the write syscall);
//   hub   the service's path: one `LatestByKeyQueue` a subscriber (events/queue.ts) as a
//         subscription field's source, each value executed once for all of them and pumped to each
//         socket (graphql/shared-event-results.ts, socket-pump.ts) through `operationWriter` (graphql/ws.ts),
//         each socket's operation with an id of its own, as graphql-ws clients choose.
// Figures per fan-out, medians over the repeats: the process's CPU time and the wall time until
// every socket was written (the next macrotask after the value was handed over), and the wall
// time until the child had read every message. Bound: hub CPU ≤ 1.5 × bare CPU — the hub's own
// bookkeeping (queues, the pump, the send promise) is then not what sets a fan-out's length.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import os from 'node:os';
import { WebSocketServer, WebSocket } from 'ws';
import { LatestByKeyQueue } from '../src/events/queue.ts';
import crypto from 'node:crypto';
import { GraphQLInt, GraphQLObjectType, GraphQLSchema, GraphQLString, parse } from 'graphql';
import { sharedEventResults } from '../src/graphql/shared-event-results.ts';
import { operationWriter } from '../src/graphql/ws.ts';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}
const SOCKETS = arg('sockets', 1000);
const ROUNDS = arg('rounds', 100);
const REPEATS = arg('repeats', 3);
const BOUND = 1.5;

/** The child: `count` clients; tells the parent once all are open, and each time all have read a round. */
function clients(port: number, count: number): void {
  let opened = 0;
  let read = 0;
  for (let i = 0; i < count; i++) {
    const ws = new WebSocket(`ws://127.0.0.1:${port}`);
    ws.on('open', () => ++opened === count && process.send!('ready'));
    ws.on('message', (data) => {
      JSON.parse(String(data));
      if (++read % count === 0) process.send!('round');
    });
  }
}

async function waitFor(condition: () => boolean, what: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

type Figures = { cpuMs: number; writtenMs: number; readMs: number };

async function main(): Promise<void> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false });
  const sockets: WebSocket[] = [];
  wss.on('connection', (s) => sockets.push(s));
  await new Promise((resolve) => wss.once('listening', resolve));
  const { port } = wss.address() as { port: number };
  const child = fork(fileURLToPath(import.meta.url), ['--clients', String(port), '--sockets', String(SOCKETS)], { execArgv: ['--import', 'tsx'] });
  await new Promise<void>((resolve) => child.once('message', () => resolve()));
  await waitFor(
    () => sockets.length === SOCKETS,
    () => `the server side of the sockets (${sockets.length} of ${SOCKETS})`,
  );
  const childRead = () => new Promise<void>((resolve) => child.once('message', () => resolve()));

  const progressValue = { status: 'running', total: 10000, queued: 4321, inProgress: 500, completed: 4000, failed: 1179, cancelled: 0 };
  const payload = JSON.stringify({ data: { batchProgress: { ...progressValue, updatedAt: new Date().toISOString() } } });
  // The hub's path as a subscription runs it: the queue is the field's source, and each value is
  // executed once for all subscribers (shared-event-results.ts), which pumps it to each socket.
  // Each socket's operation has its own id, as graphql-ws clients choose (a UUID each).
  const progress = new GraphQLObjectType({
    name: 'BatchProgress',
    fields: {
      status: { type: GraphQLString },
      total: { type: GraphQLInt },
      queued: { type: GraphQLInt },
      inProgress: { type: GraphQLInt },
      completed: { type: GraphQLInt },
      failed: { type: GraphQLInt },
      cancelled: { type: GraphQLInt },
      updatedAt: { type: GraphQLString },
    },
  });
  let source: LatestByKeyQueue<object> | undefined;
  const schema = new GraphQLSchema({
    query: new GraphQLObjectType({ name: 'Query', fields: { ok: { type: GraphQLInt } } }),
    subscription: new GraphQLObjectType({
      name: 'Subscription',
      fields: { batchProgress: { type: progress, subscribe: () => source!, resolve: (e: object) => e } },
    }),
  });
  const document = parse('subscription { batchProgress { status total queued inProgress completed failed cancelled updatedAt } }');
  const subscribe = sharedEventResults();
  const queues: LatestByKeyQueue<object>[] = [];
  for (const socket of sockets) {
    source = new LatestByKeyQueue<object>(
      () => 'progress',
      () => {},
    );
    queues.push(source);
    const socketOperation = { id: crypto.randomUUID(), send: operationWriter(socket) };
    const results = (await subscribe({ schema, document, contextValue: { socketOperation } })) as AsyncIterableIterator<unknown>;
    void results.next();
  }
  const variants: Record<string, () => void> = {
    bare: () => {
      for (const s of sockets) s.send(`{"id":"1","type":"next","payload":${payload}}`);
    },
    hub: () => {
      const value = { ...progressValue, updatedAt: new Date().toISOString() };
      for (const q of queues) q.push(value);
    },
  };

  const runs: Record<string, Figures[]> = { bare: [], hub: [] };
  for (let r = 0; r < REPEATS; r++) {
    for (const [name, fanOut] of Object.entries(variants)) {
      const sum: Figures = { cpuMs: 0, writtenMs: 0, readMs: 0 };
      for (let i = 0; i < ROUNDS; i++) {
        const read = childRead();
        const cpu = process.cpuUsage();
        const start = performance.now();
        fanOut();
        await new Promise((resolve) => setImmediate(resolve));
        const used = process.cpuUsage(cpu);
        sum.cpuMs += (used.user + used.system) / 1000;
        sum.writtenMs += performance.now() - start;
        await read;
        sum.readMs += performance.now() - start;
      }
      runs[name].push({ cpuMs: sum.cpuMs / ROUNDS, writtenMs: sum.writtenMs / ROUNDS, readMs: sum.readMs / ROUNDS });
    }
  }
  child.kill();
  wss.close();

  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const fig = (name: string, key: keyof Figures) => median(runs[name].map((f) => f[key]));
  console.log(
    `fan-out floor — ${SOCKETS} sockets, ${ROUNDS} rounds × ${REPEATS}, ${os.cpus().length} CPUs, load ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  for (const name of Object.keys(variants)) {
    console.log(
      `  ${name.padEnd(5)} CPU ${fig(name, 'cpuMs').toFixed(2)} ms a fan-out (${((fig(name, 'cpuMs') * 1000) / SOCKETS).toFixed(1)} µs a socket), all written ${fig(name, 'writtenMs').toFixed(2)} ms, all read ${fig(name, 'readMs').toFixed(2)} ms`,
    );
  }
  const ratio = fig('hub', 'cpuMs') / fig('bare', 'cpuMs');
  console.log(`  hub/bare CPU ${ratio.toFixed(2)} (bound ≤ ${BOUND}): ${ratio <= BOUND ? 'met' : 'MISSED'}`);
  process.exit(0);
}

if (process.argv.includes('--clients')) clients(Number(process.argv[process.argv.indexOf('--clients') + 1]), SOCKETS);
else await main();
