// The fault campaign's voice provider: a Retell stand-in run as a process of its own
// (`tsx bench/faults/fake-provider.ts <log.jsonl> <webhook-url>[,<webhook-url>…]`), which plays every
// call out by itself (the simulator's last-digit rule, timings drawn per call) and posts Retell's
// signed webhooks (call_started, call_ended, call_analyzed) to the APIs in turn, retrying a refused
// or failed delivery as Retell does. Every create-phone-call and stop-call is logged, one JSON line
// each, with who sent it and when: each process reaches the fake under a path of its own
// (`RETELL_BASE_URL=<url>/p/<process>`), so the process is known without trusting the request.
// Fault modes, set by the campaign (POST /__mode {"mode": "normal" | "slow" | "failing"}; "talkMs"
// fixes answered calls' length for a test's long conversations): `slow`
// answers every API request 1-4 s late; `failing` answers creates 500 (half of them after making the
// call: a lost answer) and lookups 500. Prints `listening <port>`; exits when stdin ends.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sign } from 'retell-sdk';
import { simulatedOutcome } from '../../src/dispatch/voice/simulator.ts';
import { FAKE_API_KEY, type ProviderLogLine } from './provider-log.ts';

type Json = Record<string, any>;
type Mode = 'normal' | 'slow' | 'failing';

const [logPath, hookList] = process.argv.slice(2);
if (!logPath || !hookList) {
  process.stderr.write('usage: fake-provider.ts LOG_PATH WEBHOOK_URL[,WEBHOOK_URL…]\n');
  process.exit(64);
}
const hooks = hookList.split(',');
const log = fs.openSync(logPath, 'a');
const write = (line: ProviderLogLine) => fs.writeSync(log, `${JSON.stringify(line)}\n`);

const calls = new Map<string, Json>();
const timers = new Map<string, NodeJS.Timeout[]>();
let mode: Mode = 'normal';
/** A fixed talk time for answered calls (a test's long conversations); null: drawn per call. */
let talkMs: number | null = null;
let seq = 0;
let hookTurn = 0;

/** A number in [0, 1) fixed by the call id: the same call always plays out the same way. */
function draw(id: string, salt: string): number {
  return crypto.createHash('sha256').update(`${id}/${salt}`).digest().readUInt32BE(0) / 2 ** 32;
}

async function deliver(event: string, call: Json): Promise<void> {
  const body = JSON.stringify({ event, call });
  const signature = await sign(body, FAKE_API_KEY);
  // Retell retries failed deliveries; the APIs may be down, partitioned or answering 503 meanwhile.
  for (let attempt = 0; attempt < 40; attempt++) {
    const url = hooks[hookTurn++ % hooks.length]!;
    try {
      const r = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-retell-signature': signature },
        body,
        signal: AbortSignal.timeout(5_000),
      });
      await r.arrayBuffer();
      if (r.status < 300) return;
    } catch {
      // down or cut off: next API, after a pause
    }
    await new Promise((r) => setTimeout(r, Math.min(2_000, 100 * 2 ** Math.min(attempt, 5))));
  }
  process.stderr.write(`gave up delivering ${event} of ${call.call_id}\n`);
}

function later(id: string, ms: number, fn: () => void) {
  const t = setTimeout(fn, ms);
  timers.set(id, [...(timers.get(id) ?? []), t]);
}

/** Plays the call out: rings, then answered (talks 1-4 s) or not (ends after 0.2-0.8 s). */
function play(call: Json) {
  const id = call.call_id as string;
  const o = simulatedOutcome(call.to_number);
  const ring = 100 + Math.round(draw(id, 'ring') * 300);
  if (o.kind === 'answered') {
    const talk = talkMs ?? 1_000 + Math.round(draw(id, 'talk') * 3_000);
    later(id, ring, () => {
      if (call.call_status !== 'registered') return;
      Object.assign(call, { call_status: 'ongoing', start_timestamp: Date.now() });
      void deliver('call_started', { ...call });
      later(id, talk, () => end(call, o.hangupBy === 'user' ? 'user_hangup' : 'agent_hangup'));
    });
    return;
  }
  const reason = o.kind === 'no_answer' ? 'dial_no_answer' : o.kind === 'busy' ? 'dial_busy' : 'dial_failed';
  later(id, ring + 100 + Math.round(draw(id, 'unanswered') * 500), () => end(call, reason));
}

function end(call: Json, reason: string) {
  if (call.call_status === 'ended' || call.call_status === 'not_connected') return;
  const now = Date.now();
  for (const t of timers.get(call.call_id) ?? []) clearTimeout(t);
  timers.delete(call.call_id);
  write({
    t: now,
    kind: 'ended',
    proc: 'provider',
    retellCallId: call.call_id,
    callId: call.metadata?.call_id,
    attempt: call.metadata?.attempt,
    to: call.to_number,
    answered: call.call_status === 'ongoing',
    reason,
  });
  if (call.call_status === 'ongoing') {
    Object.assign(call, {
      call_status: 'ended',
      end_timestamp: now,
      duration_ms: now - call.start_timestamp,
      transcript: `Agent: Hello.\nUser: This is ${call.to_number}.`,
      recording_url: `${baseUrl}/recordings/${call.call_id}.wav`,
      disconnection_reason: reason,
    });
    // Retell's analysis is on the call 200 ms after its end (get-call shows it), whenever its
    // webhooks get through; call_analyzed goes out after call_ended.
    const analysed = new Promise<void>((resolve) =>
      setTimeout(() => {
        call.call_analysis = {
          call_summary: `Spoke with ${call.to_number}.`,
          in_voicemail: false,
          user_sentiment: 'Positive',
          call_successful: true,
          custom_analysis_data: { interested: true },
        };
        resolve();
      }, 200),
    );
    void deliver('call_ended', { ...call })
      .then(() => analysed)
      .then(() => deliver('call_analyzed', { ...call }));
  } else {
    Object.assign(call, { call_status: 'not_connected', disconnection_reason: reason === 'agent_hangup' ? 'dial_no_answer' : reason });
    void deliver('call_ended', { ...call });
  }
}

const send = (res: http.ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

async function answer(req: http.IncomingMessage, res: http.ServerResponse, raw: string): Promise<void> {
  const u = new URL(req.url!, 'http://x');
  const rec = /^\/recordings\/(rc_\d+)\.wav$/.exec(u.pathname);
  if (req.method === 'GET' && rec) {
    const body = Buffer.concat([Buffer.from('RIFF\0\0\0\0WAVEfmt '), Buffer.from(`recording of ${rec[1]}`)]);
    res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': String(body.length) });
    return void res.end(body);
  }
  if (req.method === 'POST' && u.pathname === '/__mode') {
    const m = JSON.parse(raw) as { mode?: Mode; talkMs?: number | null };
    if (m.mode) mode = m.mode;
    if (m.talkMs !== undefined) talkMs = m.talkMs;
    return send(res, 200, { mode, talkMs });
  }
  const m = /^\/p\/([^/]+)(\/v2\/.*)$/.exec(u.pathname);
  if (!m) return send(res, 404, { message: 'Not Found' });
  const proc = decodeURIComponent(m[1]!);
  const route = m[2]!;
  if (req.headers.authorization !== `Bearer ${FAKE_API_KEY}`) return send(res, 401, { status: 'error', message: 'API key is missing or invalid.' });
  const received = Date.now();
  if (mode === 'slow') await new Promise((r) => setTimeout(r, 1_000 + Math.random() * 3_000));
  if (route === '/v2/create-phone-call' && req.method === 'POST') {
    const body = JSON.parse(raw);
    const meta = body.metadata ?? {};
    const failing = mode === 'failing';
    if (failing && Math.random() < 0.5) {
      write({ t: received, kind: 'create_refused', proc, callId: meta.call_id, attempt: meta.attempt, to: body.to_number });
      return send(res, 500, { status: 'error', message: 'fake 500' });
    }
    const call: Json = {
      call_type: 'phone_call',
      call_id: `rc_${++seq}`,
      agent_id: body.override_agent_id ?? 'agent_default',
      agent_version: body.override_agent_version ?? 1,
      call_status: 'registered',
      from_number: body.from_number,
      to_number: body.to_number,
      direction: 'outbound',
      metadata: meta,
    };
    calls.set(call.call_id, call);
    write({
      t: received,
      answeredAt: Date.now(),
      kind: 'create',
      proc,
      retellCallId: call.call_id,
      callId: meta.call_id,
      attempt: meta.attempt,
      to: body.to_number,
    });
    play(call);
    if (failing) return send(res, 500, { status: 'error', message: 'lost answer' });
    return send(res, 201, call);
  }
  const stop = /^\/v2\/stop-call\/(.+)$/.exec(route);
  if (stop && req.method === 'POST') {
    const call = calls.get(decodeURIComponent(stop[1]!));
    write({ t: received, kind: 'stop', proc, retellCallId: stop[1], callId: call?.metadata?.call_id, status: call?.call_status });
    if (call) end(call, 'agent_hangup');
    res.writeHead(204).end();
    return;
  }
  if (mode === 'failing') return send(res, 500, { status: 'error', message: 'fake 500' });
  const get = /^\/v2\/get-call\/(.+)$/.exec(route);
  if (get && req.method === 'GET') {
    const call = calls.get(decodeURIComponent(get[1]!));
    return call ? send(res, 200, call) : send(res, 404, { status: 'error', message: 'Not Found' });
  }
  if (route === '/v2/list-calls' && req.method === 'POST') {
    const body = raw ? JSON.parse(raw) : {};
    const f = Object.entries((body.filter_criteria?.metadata ?? {}) as Record<string, string[]>);
    const out = [...calls.values()].filter((c) => f.every(([k, vals]) => vals.includes(String(c.metadata?.[k.replace(/^metadata\./, '')]))));
    return send(res, 200, out.slice(0, body.limit ?? 50));
  }
  send(res, 404, { message: 'Not Found' });
}

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    answer(req, res, Buffer.concat(chunks).toString('utf8')).catch((e) => {
      process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
      if (!res.headersSent) send(res, 500, { message: 'fake error' });
    });
  });
});
let baseUrl = '';
server.listen(0, '127.0.0.1', () => {
  const port = (server.address() as AddressInfo).port;
  baseUrl = `http://127.0.0.1:${port}`;
  process.stdout.write(`listening ${port}\n`);
});
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
