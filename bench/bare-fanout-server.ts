// Benchmark helper (not the service): the floor of live progress on this machine. A process that
// does only what any server must to put a batch's progress on 1,000 sockets: LISTEN to the
// database's `batch_changed` notifications, keep the newest of the batch's, and write it with a bare
// `ws.send` to every subscriber as soon as its event loop is free (the notifications read in one
// turn coalesce into one fan-out; no interval, no CPU share, no GraphQL, no auth, no limits). It
// speaks just enough graphql-transport-ws for bench/subscriptions.ts's clients, and sends the same
// `next` message the service sends. `bench:subscriptions -- --server floor` runs it in place of
// the API's WebSocket endpoint, so the same clients, worker and database measure both.
//
//   env: DATABASE_URL, PORT, HOST, BATCH_ID
import http from 'node:http';
import pg from 'pg';
import { WebSocketServer, type WebSocket } from 'ws';

interface Notified {
  batch_id: string;
  progress_seq: number;
  status: string;
  queued: number;
  in_progress: number;
  completed: number;
  failed: number;
  cancelled: number;
  accepted_contacts: number;
  updated_at: string;
}

const BATCH_ID = process.env.BATCH_ID!;
const subscribers: { socket: WebSocket; id: string }[] = [];
let latest: Notified | null = null;
let fanOutQueued = false;

/** The `next` message of the bench's subscription document, in the field order the service sends. */
function nextMessage(id: string, n: Notified): string {
  const progress = {
    status: n.status,
    queued: n.queued,
    inProgress: n.in_progress,
    completed: n.completed,
    failed: n.failed,
    cancelled: n.cancelled,
    acceptedContacts: n.accepted_contacts,
    updatedAt: new Date(n.updated_at).toISOString(),
  };
  return `{"id":${JSON.stringify(id)},"type":"next","payload":${JSON.stringify({ data: { batchProgress: progress } })}}`;
}

function fanOut(): void {
  fanOutQueued = false;
  const value = latest;
  if (!value) return;
  const byId = new Map<string, string>();
  for (const s of subscribers) {
    let message = byId.get(s.id);
    if (message === undefined) byId.set(s.id, (message = nextMessage(s.id, value)));
    s.socket.send(message);
  }
}

async function main(): Promise<void> {
  const db = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await db.connect();
  const { rows } = await db.query<Notified>(
    `SELECT id AS batch_id, progress_seq, status, queued, in_progress, completed, failed, cancelled, accepted_contacts, updated_at
       FROM batches WHERE id = $1`,
    [BATCH_ID],
  );
  latest = rows[0];
  db.on('notification', (m) => {
    const n = JSON.parse(m.payload ?? '{}') as Notified;
    if (n.batch_id !== BATCH_ID || (latest && n.progress_seq <= latest.progress_seq)) return;
    latest = n;
    if (!fanOutQueued) {
      fanOutQueued = true;
      setImmediate(fanOut);
    }
  });
  await db.query('LISTEN batch_changed');

  const server = http.createServer((req, res) => res.end(req.url === '/healthz' ? 'ok' : ''));
  const wss = new WebSocketServer({ server, path: '/graphql' });
  wss.on('connection', (socket) => {
    socket.on('message', (raw) => {
      const msg = JSON.parse(String(raw)) as { type: string; id?: string };
      if (msg.type === 'connection_init') socket.send('{"type":"connection_ack"}');
      else if (msg.type === 'ping') socket.send('{"type":"pong"}');
      else if (msg.type === 'subscribe' && msg.id) {
        subscribers.push({ socket, id: msg.id });
        if (latest) socket.send(nextMessage(msg.id, latest));
      }
    });
  });
  server.listen(Number(process.env.PORT), process.env.HOST ?? '127.0.0.1');
  process.on('SIGTERM', () => process.exit(0));
}

await main();
