// The attacks of the hostile mix in bench/load.ts: what the denial-of-service review found (issue
// 13) and its neighbours, each a loop with a few requests in flight until stopped. Every request
// claims its own client address (X-Forwarded-For, the server runs with TRUST_PROXY=true), so the
// per-address unauthenticated budget cannot silence an attack and the server must refuse each one
// on its merits. Statuses are counted per attack; none of them is expected to be a 5xx.
import crypto from 'node:crypto';
import WebSocket from 'ws';

export interface AttackTarget {
  base: string;
  /** The attacker's account (by default with the default budget: its excess gets 429s). */
  key: string;
  agentId: string;
  versionId: string;
}

export interface AttackReport {
  name: string;
  sent: number;
  /** Status (or WebSocket close code, `ws:<code>`), count. */
  outcomes: Map<string, number>;
}

interface Attack {
  name: string;
  inFlight: number;
  run(t: AttackTarget, address: string): Promise<string>;
}

const randomAddress = () => `203.0.${crypto.randomInt(256)}.${crypto.randomInt(1, 255)}`;

function fragmentBomb(levels: number): string {
  const defs = Array.from({ length: levels }, (_, i) => `fragment F${i} on Query { ...F${i + 1} ...F${i + 1} }`);
  return `query { ...F0 } ${defs.join(' ')} fragment F${levels} on Query { __typename }`;
}
const BOMB = fragmentBomb(30);
// Bodies built once: the attacker's CPU shares the machine with the server it measures.
const BOMB_BODY = JSON.stringify({ query: BOMB });
const BOMB_SSE_BODY = JSON.stringify({ query: BOMB.replace(/^query/, 'subscription') });
const WIDE_BODY = JSON.stringify({ query: `{ ${Array.from({ length: 150 }, (_, i) => `a${i}: batches(limit: 1) { items { id } }`).join(' ')} }` });
const ANONYMOUS_1MB_BODY = JSON.stringify({ query: '{ __typename }', variables: { pad: 'p'.repeat(1 << 20) } });
const INIT_5MB = JSON.stringify({ type: 'connection_init', payload: { pad: 'p'.repeat(5 << 20) } });
const BIG_VALUE = 'x'.repeat(1 << 20);
const MANY_KEYS = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`k${i}`, i]));

async function status(res: Promise<Response>): Promise<string> {
  const r = await res;
  await r.arrayBuffer().catch(() => undefined);
  return String(r.status);
}

function post(t: AttackTarget, address: string, path: string, body: string, headers: Record<string, string> = {}): Promise<string> {
  return status(fetch(`${t.base}${path}`, { method: 'POST', headers: { 'x-forwarded-for': address, 'content-type': 'application/json', ...headers }, body }));
}

function get(t: AttackTarget, address: string, path: string, headers: Record<string, string> = {}): Promise<string> {
  return status(fetch(`${t.base}${path}`, { headers: { 'x-forwarded-for': address, ...headers } }));
}

const keyed = (t: AttackTarget) => ({ authorization: `Bearer ${t.key}` });

function createBody(t: AttackTarget, contacts: Array<Record<string, unknown>>, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    agent_id: t.agentId,
    version_id: t.versionId,
    interruption: true,
    use_alternate_number: false,
    start_mode: 'manual',
    schedule_date: '2030-01-15',
    schedule_time: '09:30',
    schedule_timezone: 'America/New_York',
    contacts,
    ...extra,
  });
}

/** Opens a WebSocket, does `act` with it, and resolves with how it ended (close code or HTTP status). */
function socket(t: AttackTarget, address: string, act: (ws: WebSocket) => void): Promise<string> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${t.base.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws', { headers: { 'x-forwarded-for': address } });
    const timer = setTimeout(() => {
      ws.terminate();
      resolve('ws:timeout');
    }, 15_000);
    const done = (outcome: string) => {
      clearTimeout(timer);
      resolve(outcome);
    };
    ws.on('open', () => act(ws));
    ws.on('close', (code) => done(`ws:${code}`));
    ws.on('unexpected-response', (_req, res) => {
      done(`ws-http:${res.statusCode}`);
      ws.terminate();
    });
    ws.on('error', () => undefined);
  });
}

/**
 * Contacts whose zones are every case spelling of us/eastern (one name, as Intl reads it), then
 * endless names that are no zone: refused once 100 distinct unlisted names are spent.
 */
const ZONE_SPELLINGS = Array.from({ length: 2_000 }, (_, i) => ({
  contact_id: `z${i}`,
  phone_number: `+1415555${String(1000 + (i % 9000)).padStart(4, '0')}`,
  timezone: i < 512 ? [...'us/eastern'].map((c, k) => ((i >> k) & 1 ? c.toUpperCase() : c)).join('') : `Mars/Base${i}`,
}));

const ATTACKS: Attack[] = [
  { name: 'fragment bomb, POST, no key', inFlight: 2, run: (t, ip) => post(t, ip, '/graphql', BOMB_BODY) },
  { name: 'fragment bomb, GET, no key', inFlight: 1, run: (t, ip) => get(t, ip, `/graphql?query=${encodeURIComponent(BOMB)}`) },
  {
    name: 'fragment bomb, SSE, no key',
    inFlight: 1,
    run: (t, ip) => post(t, ip, '/graphql', BOMB_SSE_BODY, { accept: 'text/event-stream' }),
  },
  {
    name: 'wide aliases, with key',
    inFlight: 1,
    run: (t, ip) => post(t, ip, '/graphql', WIDE_BODY, keyed(t)),
  },
  { name: 'anonymous 1 MB GraphQL body', inFlight: 1, run: (t, ip) => post(t, ip, '/graphql', ANONYMOUS_1MB_BODY) },
  {
    name: 'WebSocket: 5 MB connection_init',
    inFlight: 1,
    run: (t, ip) => socket(t, ip, (ws) => ws.send(INIT_5MB)),
  },
  { name: 'WebSocket: never sends connection_init', inFlight: 2, run: (t, ip) => socket(t, ip, () => undefined) },
  {
    name: 'WebSocket: 110 sockets from one address',
    inFlight: 1,
    run: async (t, ip) => {
      // The server admits 100 per address (WS_MAX_CONNECTIONS_PER_ADDRESS): the rest get HTTP 429.
      const outcomes = await Promise.all(Array.from({ length: 110 }, () => socket(t, ip, (ws) => setTimeout(() => ws.close(1000), 500))));
      const refused = outcomes.filter((o) => o === 'ws-http:429').length;
      return `${refused} of 110 refused with 429`;
    },
  },
  {
    name: 'create: 1 MB metadata value on a contact',
    inFlight: 1,
    run: (t, ip) =>
      post(t, ip, '/api/v1/public/call-batches', createBody(t, [{ contact_id: 'big', phone_number: '+14155552671', metadata: { note: BIG_VALUE } }]), keyed(t)),
  },
  {
    name: 'create: 500 metadata keys, CR/LF callback_url',
    inFlight: 1,
    run: (t, ip) =>
      post(
        t,
        ip,
        '/api/v1/public/call-batches',
        createBody(t, [{ contact_id: 'keys', phone_number: '+14155552672', metadata: MANY_KEYS }], {
          callback_url: 'https://hooks.example.com\r\nevil.internal/x',
        }),
        keyed(t),
      ),
  },
  {
    // Checking a zone name outside the runtime's list builds an Intl formatter (~75 µs); 2,000 such
    // names once cost ~0.2 s of the event loop a request, and each spelling a formatter kept for good.
    name: 'create: 2,000 contacts naming zones in 2,000 spellings, recipient window',
    inFlight: 1,
    run: (t, ip) => post(t, ip, '/api/v1/public/call-batches', createBody(t, ZONE_SPELLINGS, { calling_window: { start: '09:00', end: '17:00', timezone: 'recipient' } }), keyed(t)),
  },
  {
    name: 'reads: largest pages of call records and results',
    inFlight: 2,
    run: (t, ip) => get(t, ip, '/api/v1/public/call-records?start_date=2000-01-01&end_date=2100-01-01&page_size=200', keyed(t)),
  },
  { name: 'garbage: invalid JSON', inFlight: 1, run: (t, ip) => post(t, ip, '/api/v1/public/call-batches', '{"agent_id": ', keyed(t)) },
  { name: 'garbage: JSON nested 10,000 deep', inFlight: 1, run: (t, ip) => post(t, ip, '/api/v1/public/call-batches', '['.repeat(10_000) + ']'.repeat(10_000), keyed(t)) },
  { name: 'garbage: text/plain body', inFlight: 1, run: (t, ip) => post(t, ip, '/api/v1/public/call-batches', '{}', { ...keyed(t), 'content-type': 'text/plain' }) },
  { name: 'garbage: 15 KB query string', inFlight: 1, run: (t, ip) => get(t, ip, `/api/v1/public/call-batches?agent_id=${'a'.repeat(15_000)}`, keyed(t)) },
  { name: 'garbage: created_at_from +99:99', inFlight: 1, run: (t, ip) => get(t, ip, '/api/v1/public/call-batches?created_at_from=2026-01-01T00:00:00%2B99:99', keyed(t)) },
];

/**
 * Starts the attacks (those whose name contains one of `only`, or all). `inFlight`: one client
 * with that many requests in flight, going round the attacks in turn; 'fleet': every attack with
 * its own loops at once (19 in flight, plus the socket storms). `stop()` ends them and reports.
 */
export function startAttacks(t: AttackTarget, only: string[] = [], inFlight: number | 'fleet' = 'fleet'): { stop(): Promise<AttackReport[]> } {
  let stopped = false;
  const chosen = ATTACKS.filter((a) => only.length === 0 || only.some((o) => a.name.includes(o)));
  const reports = chosen.map((a): AttackReport => ({ name: a.name, sent: 0, outcomes: new Map() }));
  async function send(i: number) {
    const outcome = await chosen[i].run(t, randomAddress()).catch((e: Error) => `error:${e.cause instanceof Error ? e.cause.message : e.message}`);
    reports[i].sent++;
    reports[i].outcomes.set(outcome, (reports[i].outcomes.get(outcome) ?? 0) + 1);
  }
  let turn = 0;
  const loops =
    inFlight === 'fleet'
      ? chosen.flatMap((attack, i) =>
          Array.from({ length: attack.inFlight }, async () => {
            while (!stopped) await send(i);
          }),
        )
      : Array.from({ length: inFlight }, async () => {
          while (!stopped) await send(turn++ % chosen.length);
        });
  return {
    async stop() {
      stopped = true;
      await Promise.all(loops);
      return reports;
    },
  };
}
