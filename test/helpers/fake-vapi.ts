// A local stand-in for Vapi's REST API (POST /call, GET /call, GET /call/{id}), its live call
// control (POST {type: "end-call"} to a call's monitor.controlUrl) and its recording storage. It
// validates every request body and query, every call object it answers with, and every server
// message it sends (status-update, end-of-call-report) against Vapi's published OpenAPI file
// (vapi-spec.ts), plays calls out by the simulator's last-digit rule, and POSTs authenticated server
// messages (HMAC or secret, as the account's credential says) where and when told to: duplicated,
// out of order, lost.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { simulatedOutcome } from '../../src/dispatch/voice/simulator.ts';
import { vapiHmacSignature } from '../../src/dispatch/voice/vapi/signature.ts';
import { vapiValidators, type Validator } from './vapi-spec.ts';

type Json = Record<string, any>;

export interface FakeVapiOutcome {
  answered: boolean;
  endedReason: string;
  status: 'completed' | 'no_answer' | 'busy' | 'failed';
  hangupBy: 'agent' | 'user' | 'system' | null;
  /** Seconds between startedAt and endedAt; null when the fake sends no times. */
  seconds: number | null;
  transcript: string | null;
  summary: string | null;
  /** Vapi's analysis.structuredData (before our key filter and string conversion). */
  structuredData: Json | null;
}

export function fakeVapiOutcome(to: string): FakeVapiOutcome {
  const o = simulatedOutcome(to);
  const d = Number(/(\d)\D*$/.exec(to)?.[1] ?? 0);
  if (o.kind === 'answered') {
    return {
      answered: true,
      endedReason: o.hangupBy === 'user' ? 'customer-ended-call' : 'assistant-ended-call',
      status: 'completed',
      hangupBy: o.hangupBy,
      seconds: 20 + d,
      transcript: `AI: Hello, this is Ava.\nUser: This is ${to}.`,
      summary: `Spoke with ${to}.`,
      structuredData: { interested: d % 2 === 0, callback_time: `day-${d}`, not_configured: 42 },
    };
  }
  const none = { answered: false, transcript: null, summary: null, structuredData: null } as const;
  if (o.kind === 'no_answer') return { ...none, endedReason: 'customer-did-not-answer', status: 'no_answer', hangupBy: null, seconds: 30 };
  if (o.kind === 'busy') return { ...none, endedReason: 'customer-busy', status: 'busy', hangupBy: null, seconds: 5 };
  if (o.kind === 'voicemail') return { ...none, endedReason: 'voicemail', status: 'no_answer', hangupBy: 'system', seconds: 25 };
  // The call never got a transport: no times, our record lasts 0 s.
  return { ...none, endedReason: 'call.start.error-get-transport', status: 'failed', hangupBy: 'system', seconds: null };
}

export type WebhookAuth = { mode: 'hmac' | 'secret'; secret: string };
/** Posts a server message body with its headers; returns the HTTP status our endpoint answered. */
export type Deliver = (body: string, headers: Record<string, string>) => Promise<number>;
export type LookupAnswer = 'hang' | { status: number; headers?: Record<string, string> };
type Which = (call: Json) => boolean;

export interface FinishOptions {
  only?: Which;
  /** Lose this call's end-of-call-report (status 'ended' or reconciliation must settle it). */
  dropReport?: Which;
  /** Lose every message of this call's end (only GET /call/{id} knows it ended). */
  dropAll?: Which;
  duplicate?: Which;
  /** Send the end-of-call-report before the status-updates. */
  reversed?: Which;
  /** Vapi made no analysis of this call. */
  noAnalysis?: Which;
}

export interface FakeVapi {
  url: string;
  calls: Map<string, Json>;
  /** Bodies of the POST /call requests that created a call (one per Vapi call). */
  creates: Json[];
  /** Requests or bodies rejected by schema validation (should stay empty). */
  invalid: string[];
  /** Vapi call ids sent end-call through their control URL. */
  ended: string[];
  readonly lists: number;
  readonly gets: number;
  /** Statuses our endpoint answered messages with. */
  delivered: number[];
  /** Answer the next n creates with this status, or drop the connection; after creating the call when `afterCreate`. */
  failNext(n: number, status: number | 'reset', afterCreate?: boolean): void;
  rejectCreates(rule: ((body: Json) => { status: number; message: string } | null) | null): void;
  lookupRule(rule: ((r: { kind: 'get' | 'list'; id?: string }) => LookupAnswer | null) | null): void;
  /** A call created at Vapi by someone else (a worker that died): registered, not in `creates`. */
  seedCall(body: Json): Json;
  /** Send status-update ringing and in-progress for the answering calls not started yet. */
  startAll(only?: Which): Promise<void>;
  /** End every call still going: status-update ended and the end-of-call-report. */
  finishAll(opts?: FinishOptions): Promise<void>;
  close(): Promise<void>;
}

export async function startFakeVapi(opts: { apiKey: string; auth: WebhookAuth; deliver?: Deliver; spec?: string }): Promise<FakeVapi> {
  const v = vapiValidators(opts.spec);
  const calls = new Map<string, Json>();
  const creates: Json[] = [];
  const invalid: string[] = [];
  const ended: string[] = [];
  const delivered: number[] = [];
  let failures: { n: number; status: number | 'reset'; afterCreate: boolean } = { n: 0, status: 500, afterCreate: false };
  let reject: ((body: Json) => { status: number; message: string } | null) | null = null;
  let lookupRule: ((r: { kind: 'get' | 'list'; id?: string }) => LookupAnswer | null) | null = null;
  let lists = 0;
  let gets = 0;
  let clockMs = Date.now();
  // Strictly increasing creation times, so listing by createdAt pages is exact.
  const iso = () => new Date(Math.max(Date.now(), ++clockMs)).toISOString();

  const check = (val: Validator, body: unknown, what: string) => {
    if (!val(body)) invalid.push(`${what}: ${JSON.stringify(val.errors).slice(0, 2000)}`);
  };
  const send = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const error = (res: http.ServerResponse, status: number, message: string, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify({ message, error: http.STATUS_CODES[status] ?? 'Error', statusCode: status }));
  };
  const ruled = (res: http.ServerResponse, r: { kind: 'get' | 'list'; id?: string }) => {
    const answer = lookupRule?.(r);
    if (!answer) return false;
    if (answer === 'hang') return true;
    error(res, answer.status, `fake ${answer.status}`, answer.headers);
    return true;
  };
  const newCall = (body: Json): Json => {
    const id = randomUUID();
    const now = iso();
    return {
      id,
      orgId: 'org_fake',
      createdAt: now,
      updatedAt: now,
      type: 'outboundPhoneCall',
      status: 'queued',
      assistantId: body.assistantId,
      phoneNumberId: body.phoneNumberId,
      customer: body.customer,
      assistantOverrides: body.assistantOverrides,
      monitor: { listenUrl: `ws://127.0.0.1/listen/${id}`, controlUrl: `${url}/control/${id}` },
    };
  };

  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const u = new URL(req.url!, 'http://x');
    const rec = /^\/recordings\/([\w-]+)\.wav$/.exec(u.pathname);
    if (req.method === 'GET' && rec) {
      res.writeHead(calls.has(rec[1]) ? 200 : 404, { 'content-type': 'audio/wav' });
      return void res.end(`RIFF recording of ${rec[1]}`);
    }
    const control = /^\/control\/([\w-]+)$/.exec(u.pathname);
    if (req.method === 'POST' && control) {
      check(v.endCall, JSON.parse(raw || 'null'), 'end-call message');
      const call = calls.get(control[1]);
      if (!call) return error(res, 404, 'Call not found');
      ended.push(control[1]);
      return send(res, 200, {});
    }
    if (req.headers.authorization !== `Bearer ${opts.apiKey}`)
      return error(res, 401, 'Invalid Key. Hot tip, you may be using the private key instead of the public key, or vice versa.');
    if (req.method === 'POST' && u.pathname === '/call') {
      const body = JSON.parse(raw);
      check(v.createCall, body, 'create request');
      const refused = reject?.(body);
      if (refused) return error(res, refused.status, refused.message);
      const fail = failures.n > 0 ? (failures.n--, { ...failures }) : null;
      if (fail && !fail.afterCreate) {
        if (fail.status === 'reset') return void req.socket.destroy();
        return error(res, fail.status, `fake ${fail.status}`);
      }
      const call = newCall(body);
      calls.set(call.id, call);
      creates.push(body);
      check(v.call, call, 'create response');
      if (fail) {
        if (fail.status === 'reset') return void req.socket.destroy();
        return error(res, fail.status, 'lost answer');
      }
      return send(res, 201, call);
    }
    if (req.method === 'GET' && u.pathname === '/call') {
      for (const [k, val] of u.searchParams) {
        const p = v.listParams.get(k);
        if (!p) invalid.push(`list query: unknown parameter ${k}`);
        else if (!p(/^\d+(\.\d+)?$/.test(val) && k === 'limit' ? Number(val) : val)) invalid.push(`list query ${k}: ${JSON.stringify(p.errors)}`);
      }
      if (ruled(res, { kind: 'list' })) return;
      lists += 1;
      const q = (k: string) => u.searchParams.get(k);
      const out = [...calls.values()]
        .filter(
          (c) =>
            (!q('phoneNumberId') || c.phoneNumberId === q('phoneNumberId')) &&
            (!q('createdAtGe') || c.createdAt >= q('createdAtGe')!) &&
            (!q('createdAtLt') || c.createdAt < q('createdAtLt')!),
        )
        .sort((a, b) => (a.createdAt < b.createdAt ? 1 : -1))
        .slice(0, Number(q('limit') ?? 100));
      for (const c of out) check(v.call, c, 'list response item');
      return send(res, 200, out);
    }
    const one = /^\/call\/([\w-]+)$/.exec(u.pathname);
    if (req.method === 'GET' && one) {
      gets += 1;
      if (ruled(res, { kind: 'get', id: one[1] })) return;
      const call = calls.get(one[1]);
      if (!call) return error(res, 404, 'Not Found');
      check(v.call, call, 'get response');
      return send(res, 200, call);
    }
    error(res, 404, `Cannot ${req.method} ${u.pathname}`);
  });

  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  async function post(message: Json) {
    check(message.type === 'status-update' ? v.statusUpdate : v.endOfCallReport, message, `${message.type} message`);
    if (!opts.deliver) return;
    const body = JSON.stringify({ message });
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (opts.auth.mode === 'hmac') {
      const ts = String(Date.now());
      Object.assign(headers, { 'x-timestamp': ts, 'x-signature': vapiHmacSignature(opts.auth.secret, ts, body) });
    } else headers['x-vapi-secret'] = opts.auth.secret;
    delivered.push(await opts.deliver(body, headers));
  }
  const statusUpdate = (call: Json, status: string): Json => ({
    type: 'status-update',
    status,
    timestamp: Date.now(),
    ...(status === 'ended' ? { endedReason: call.endedReason } : {}),
    call: { ...call },
  });

  function start(call: Json) {
    const o = fakeVapiOutcome(call.customer.number);
    Object.assign(call, { status: 'in-progress', startedAt: new Date(Date.now() - o.seconds! * 1000).toISOString(), updatedAt: iso() });
  }

  return {
    url,
    calls,
    creates,
    invalid,
    ended,
    delivered,
    get lists() {
      return lists;
    },
    get gets() {
      return gets;
    },
    failNext(n, status, afterCreate = false) {
      failures = { n, status, afterCreate };
    },
    rejectCreates(rule) {
      reject = rule;
    },
    lookupRule(rule) {
      lookupRule = rule;
    },
    seedCall(body) {
      const call = newCall(body);
      calls.set(call.id, call);
      check(v.call, call, 'seeded call');
      return call;
    },
    async startAll(only) {
      for (const call of calls.values()) {
        if (call.status !== 'queued' || !fakeVapiOutcome(call.customer.number).answered || (only && !only(call))) continue;
        call.status = 'ringing';
        await post(statusUpdate(call, 'ringing'));
        start(call);
        await post(statusUpdate(call, 'in-progress'));
      }
    },
    async finishAll(o = {}) {
      for (const call of calls.values()) {
        if (call.status === 'ended' || (o.only && !o.only(call))) continue;
        const outcome = fakeVapiOutcome(call.customer.number);
        const sends: Json[] = [];
        if (outcome.answered && call.status !== 'in-progress') {
          start(call);
          sends.push(statusUpdate(call, 'in-progress'));
        }
        const end = Date.now();
        Object.assign(call, { status: 'ended', endedReason: outcome.endedReason, updatedAt: iso() });
        if (outcome.seconds !== null) {
          call.startedAt ??= new Date(end - outcome.seconds * 1000).toISOString();
          call.endedAt = new Date(Date.parse(call.startedAt) + outcome.seconds * 1000).toISOString();
        }
        if (outcome.answered) {
          call.artifact = { transcript: outcome.transcript, recordingUrl: `${url}/recordings/${call.id}.wav`, messages: [] };
          if (!o.noAnalysis?.(call)) call.analysis = { summary: outcome.summary, structuredData: outcome.structuredData, successEvaluation: 'true' };
        }
        sends.push(statusUpdate(call, 'ended'));
        if (!o.dropReport?.(call)) {
          sends.push({
            type: 'end-of-call-report',
            timestamp: Date.now(),
            endedReason: call.endedReason,
            artifact: call.artifact ?? { messages: [] },
            analysis: call.analysis ?? {},
            ...(call.startedAt ? { startedAt: call.startedAt } : {}),
            ...(call.endedAt ? { endedAt: call.endedAt } : {}),
            call: { ...call },
          });
        }
        if (o.dropAll?.(call)) continue;
        if (o.reversed?.(call)) sends.reverse();
        const times = o.duplicate?.(call) ? 2 : 1;
        for (let i = 0; i < times; i++) for (const m of sends) await post(m);
      }
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
