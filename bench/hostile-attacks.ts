// The attacks of the hostile mix in bench/load.ts: what the denial-of-service review found (issue
// 13), those of the second review (issue 31) and their neighbours, each a loop with a few requests in flight until stopped. Every request
// claims its own client address (X-Forwarded-For, the server runs with TRUST_PROXY=true), so the
// per-address unauthenticated budget cannot silence an attack and the server must refuse each one
// on its merits. Statuses are counted per attack; none of them is expected to be a 5xx.
import crypto from 'node:crypto';
import net from 'node:net';
import WebSocket from 'ws';

export interface AttackTarget {
  base: string;
  /** The attacker's account (by default with the default budget: its excess gets 429s). */
  key: string;
  agentId: string;
  versionId: string;
  /** The attacker's batch of many calls (export target) and how many do-not-call numbers it listed. */
  bigBatchId: string;
  suppressions: number;
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
  return status(
    fetch(`${t.base}${path}`, { method: 'POST', headers: { 'x-forwarded-for': address, 'content-type': 'application/json', ...headers }, body }),
  );
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

// Round two (issue 31): work or memory that grew with the input before a limit was checked.
const PAD_2MB = 'c'.repeat(2 << 20);
/** A 2 MB comment before a tiny document; a nonce makes every text new, so no cache can dedupe it. */
const commentDocument = (tail: string) => JSON.stringify({ query: `# ${PAD_2MB} ${crypto.randomUUID()}\n${tail}` });
const JUNK_CONTACTS = `[${'"x",'.repeat(999_999)}"x"]`;
const MANY_VARIABLES_BODY = JSON.stringify({
  query: '{ __typename }',
  variables: Object.fromEntries(Array.from({ length: 200_000 }, (_, i) => [`v${i}`, i])),
});
const MANY_UNKNOWN_KEYS = JSON.stringify(Object.fromEntries(Array.from({ length: 200_000 }, (_, i) => [`k${i}`, i]))).slice(1, -1);
const junkContactListBody = (t: AttackTarget) =>
  `{"query":"mutation($l: CallBatchContactList!) { createCallBatch(input: { agentId: \\"${t.agentId}\\", versionId: \\"${t.versionId}\\", interruption: true, useAlternateNumber: false, startMode: manual, scheduleDate: \\"2030-01-15\\", scheduleTime: \\"09:30\\", scheduleTimezone: \\"America/New_York\\", contactList: $l }) { batchId } }","variables":{"l":${JUNK_CONTACTS}}}`;

/**
 * Raw sockets that declare a body and send one byte of it, then wait to see what the server does:
 * resolves with the first status it answers each, or `closed` when it just hangs up.
 */
function trickle(t: AttackTarget, address: string, sockets: number, declared: number, headers: Record<string, string>): Promise<string> {
  const { hostname, port } = new URL(t.base);
  const head = (path: string) =>
    [
      `POST ${path} HTTP/1.1`,
      `Host: ${hostname}:${port}`,
      'Content-Type: application/json',
      `Content-Length: ${declared}`,
      `X-Forwarded-For: ${address}`,
      ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
      '',
      '{',
    ].join('\r\n');
  const one = () =>
    new Promise<string>((resolve) => {
      const s = net.connect(Number(port), hostname, () => s.write(head(sockets > 1 ? '/graphql' : '/api/v1/public/call-batches')));
      let seen = '';
      const timer = setTimeout(() => {
        s.destroy();
        resolve('held 30 s');
      }, 30_000);
      const end = (outcome: string) => {
        clearTimeout(timer);
        s.destroy();
        resolve(outcome);
      };
      s.on('data', (d) => {
        seen += d.toString('latin1');
        const m = /^HTTP\/1\.1 (\d{3})/.exec(seen);
        if (m) end(m[1]);
      });
      s.on('close', () => end('closed'));
      s.on('error', () => end('closed'));
    });
  return Promise.all(Array.from({ length: sockets }, one)).then((outcomes) => {
    const counts = new Map<string, number>();
    for (const o of outcomes) counts.set(o, (counts.get(o) ?? 0) + 1);
    // A 5xx alone, so the report's check (a status starting with 5) sees it.
    return (
      outcomes.find((o) => o.startsWith('5')) ??
      [...counts]
        .sort()
        .map(([o, n]) => `${o}x${n}`)
        .join(',')
    );
  });
}

/** Opens `count` batchProgress subscriptions on one socket; resolves with how many were still running after 5 s. */
function subscriptions(t: AttackTarget, address: string, count: number): Promise<string> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${t.base.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws', { headers: { 'x-forwarded-for': address } });
    let errors = 0;
    const finish = (outcome: string) => {
      clearTimeout(timer);
      ws.terminate();
      resolve(outcome);
    };
    const timer = setTimeout(() => finish(`${count - errors} open, ${errors} refused`), 5_000);
    ws.on('open', () => ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${t.key}` } })));
    ws.on('message', (raw) => {
      const m = JSON.parse(raw.toString()) as { type: string };
      if (m.type === 'connection_ack') {
        for (let i = 0; i < count; i++)
          ws.send(
            JSON.stringify({
              id: String(i),
              type: 'subscribe',
              payload: { query: `subscription { batchProgress(batchId: "${t.bigBatchId}") { batch { id status } } }` },
            }),
          );
      } else if (m.type === 'error') errors++;
    });
    ws.on('close', (code) => finish(`ws:${code}`));
    ws.on('unexpected-response', (_req, res) => finish(`ws-http:${res.statusCode}`));
    ws.on('error', () => undefined);
  });
}

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
      post(
        t,
        ip,
        '/api/v1/public/call-batches',
        createBody(t, [{ contact_id: 'big', phone_number: '+14155552671', metadata: { note: BIG_VALUE } }]),
        keyed(t),
      ),
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
    run: (t, ip) =>
      post(
        t,
        ip,
        '/api/v1/public/call-batches',
        createBody(t, ZONE_SPELLINGS, { calling_window: { start: '09:00', end: '17:00', timezone: 'recipient' } }),
        keyed(t),
      ),
  },
  {
    name: 'reads: largest pages of call records and results',
    inFlight: 2,
    run: (t, ip) => get(t, ip, '/api/v1/public/call-records?start_date=2000-01-01&end_date=2100-01-01&page_size=200', keyed(t)),
  },
  { name: 'garbage: invalid JSON', inFlight: 1, run: (t, ip) => post(t, ip, '/api/v1/public/call-batches', '{"agent_id": ', keyed(t)) },
  {
    name: 'garbage: JSON nested 10,000 deep',
    inFlight: 1,
    run: (t, ip) => post(t, ip, '/api/v1/public/call-batches', '['.repeat(10_000) + ']'.repeat(10_000), keyed(t)),
  },
  {
    name: 'garbage: text/plain body',
    inFlight: 1,
    run: (t, ip) => post(t, ip, '/api/v1/public/call-batches', '{}', { ...keyed(t), 'content-type': 'text/plain' }),
  },
  {
    name: 'garbage: 15 KB query string',
    inFlight: 1,
    run: (t, ip) => get(t, ip, `/api/v1/public/call-batches?agent_id=${'a'.repeat(15_000)}`, keyed(t)),
  },
  {
    name: 'garbage: created_at_from +99:99',
    inFlight: 1,
    run: (t, ip) => get(t, ip, '/api/v1/public/call-batches?created_at_from=2026-01-01T00:00:00%2B99:99', keyed(t)),
  },
  {
    name: 'GraphQL: 2 MB comment before { __typename }, with key',
    inFlight: 1,
    run: (t, ip) => post(t, ip, '/graphql', commentDocument('{ __typename }'), keyed(t)),
  },
  {
    name: 'GraphQL: 2 MB comment before a syntax error, with key',
    inFlight: 1,
    run: (t, ip) => post(t, ip, '/graphql', commentDocument('{ __typename'), keyed(t)),
  },
  { name: 'GraphQL: 200,000 unused variables, with key', inFlight: 1, run: (t, ip) => post(t, ip, '/graphql', MANY_VARIABLES_BODY, keyed(t)) },
  {
    name: 'create: 1,000,000 junk contacts (4 MB), REST',
    inFlight: 1,
    run: (t, ip) => post(t, ip, '/api/v1/public/call-batches', createBody(t, []).replace('"contacts":[]', `"contacts":${JUNK_CONTACTS}`), keyed(t)),
  },
  {
    name: 'create: 1,000,000 junk items in contactList, GraphQL',
    inFlight: 1,
    run: (t, ip) => post(t, ip, '/graphql', junkContactListBody(t), keyed(t)),
  },
  {
    name: 'create: 200,000 unknown keys, REST',
    inFlight: 1,
    run: (t, ip) =>
      post(
        t,
        ip,
        '/api/v1/public/call-batches',
        createBody(t, [{ contact_id: 'a', phone_number: '+14155552673' }]).replace(/}$/, `,${MANY_UNKNOWN_KEYS}}`),
        keyed(t),
      ),
  },
  { name: 'slow bodies: 200 anonymous sockets, 64 KiB declared, 1 byte sent', inFlight: 1, run: (t, ip) => trickle(t, ip, 200, 64 << 10, {}) },
  { name: 'slow body with key: 48 MiB declared, 1 byte sent', inFlight: 1, run: (t, ip) => trickle(t, ip, 1, 48 << 20, keyed(t)) },
  {
    // Offsets reach the first 10,000 numbers (deeper is 422, use the cursor): the deepest offset pages.
    name: 'do-not-call: the deepest pages an offset reaches',
    inFlight: 1,
    run: (t, ip) =>
      get(t, ip, `/api/v1/public/suppressions?limit=200&page=${Math.min(50, Math.ceil(t.suppressions / 200)) - crypto.randomInt(3)}`, keyed(t)),
  },
  {
    name: 'exports: 5 results.csv of the big batch at once',
    inFlight: 1,
    run: async (t, ip) => {
      const outcomes = await Promise.all(
        Array.from({ length: 5 }, () => get(t, ip, `/api/v1/public/call-batches/${t.bigBatchId}/results.csv`, keyed(t))),
      );
      return outcomes.find((o) => o.startsWith('5')) ?? outcomes.sort().join(',');
    },
  },
  { name: 'subscriptions: 1,000 on one socket for 5 s', inFlight: 1, run: (t, ip) => subscriptions(t, ip, 1_000) },
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
      : Array.from({ length: chosen.length === 0 ? 0 : inFlight }, async () => {
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
