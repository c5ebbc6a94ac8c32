// A local stand-in for Retell's REST API (create-phone-call, get-call, list-calls, stop-call) and
// its recording storage, validating request and response bodies - and the call objects its webhooks
// carry - against the published OpenAPI file, playing calls out by the simulator's last-digit rule,
// and POSTing signed webhooks (call_started, call_ended, and call_analyzed with call_analysis) where
// and when told to: duplicated, out of order, lost, late.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import YAML from 'yaml';
import { sign } from 'retell-sdk';
import { simulatedOutcome } from '../../src/dispatch/voice/simulator.ts';

// Retell's published OpenAPI description (revision 2026-10-04), vendored so the fake checks every
// request and call object against it from any clone.
export const RETELL_SPEC_PATH = path.resolve(import.meta.dirname, '../fixtures/retell-openapi.yaml');

type Json = Record<string, any>;

/** What the fake makes of a call to this number; tests derive their expected records from it. */
export interface FakeOutcome {
  answered: boolean;
  disconnection: string;
  /** What our record must say. */
  status: 'completed' | 'no_answer' | 'busy' | 'failed';
  hangupBy: 'agent' | 'user' | 'system' | null;
  /** Seconds between start_timestamp and end_timestamp; null when the fake sends no timestamps. */
  seconds: number | null;
  transcript: string | null;
  summary: string | null;
  /** Retell's custom_analysis_data (before our key filter and string conversion). */
  analysisData: Json | null;
}

export function fakeOutcome(to: string): FakeOutcome {
  const o = simulatedOutcome(to);
  const d = Number(/(\d)\D*$/.exec(to)?.[1] ?? 0);
  if (o.kind === 'answered') {
    return {
      answered: true,
      disconnection: o.hangupBy === 'user' ? 'user_hangup' : 'agent_hangup',
      status: 'completed',
      hangupBy: o.hangupBy,
      seconds: 20 + d,
      transcript: `Agent: Hello, this is Ava.\nUser: This is ${to}.`,
      summary: `Spoke with ${to}.`,
      analysisData: { interested: d % 2 === 0, callback_time: `day-${d}`, not_configured: 42 },
    };
  }
  if (o.kind === 'no_answer')
    return {
      answered: false,
      disconnection: 'dial_no_answer',
      status: 'no_answer',
      hangupBy: null,
      seconds: 30,
      transcript: null,
      summary: null,
      analysisData: null,
    };
  if (o.kind === 'busy')
    return {
      answered: false,
      disconnection: 'dial_busy',
      status: 'busy',
      hangupBy: null,
      seconds: 5,
      transcript: null,
      summary: null,
      analysisData: null,
    };
  // Retell gives this one no timestamps: our record lasts 0 s.
  return {
    answered: false,
    disconnection: 'dial_failed',
    status: 'failed',
    hangupBy: 'system',
    seconds: null,
    transcript: null,
    summary: null,
    analysisData: null,
  };
}

/** The bytes the fake stores as a call's recording. */
export function fakeRecording(callId: string): Buffer {
  return Buffer.concat([Buffer.from('RIFF\0\0\0\0WAVEfmt '), Buffer.from(`recording of ${callId}`)]);
}

export interface FakeRetell {
  url: string;
  calls: Map<string, Json>;
  /** Bodies of the create-phone-call requests that created a call (one per Retell call). */
  creates: Json[];
  /** Requests or bodies rejected by schema validation (should stay empty). */
  invalid: string[];
  /** Retell call ids asked to stop (stop-call: in retell-sdk, not in the OpenAPI file). */
  stops: string[];
  readonly listCalls: number;
  /** get-call requests received (answered or not). */
  readonly getCalls: number;
  /** Recording downloads served. */
  readonly recordingFetches: number;
  /**
   * How get-call / list-calls requests are answered from now on: 'hang' (never), an error status
   * (with headers, e.g. retry-after), or null for the normal answer. `retellCallId`: get-call's;
   * `callId`: our call id list-calls filters on.
   */
  lookupRule(rule: ((r: { kind: 'get' | 'list'; retellCallId?: string; callId?: string }) => LookupAnswer | null) | null): void;
  /** A call created at Retell by someone else (another worker that died): registered, not in `creates`. */
  seedCall(body: { from_number: string; to_number: string; metadata: Json }): Json;
  /** Answer the next n creates with this status, or drop the connection ('reset'); after creating the call when `afterCreate`. */
  failNext(n: number, status: number | 'reset', afterCreate?: boolean): void;
  /** Refuse creates for which this returns an answer (a 4xx with Retell's error body). */
  rejectCreates(rule: ((body: Json) => { status: number; message: string } | null) | null): void;
  /** Creates from the k-th call on (1-based) are made but not answered until releaseHeld(). */
  holdCreatesFrom(k: number | null): void;
  readonly held: number;
  releaseHeld(): void;
  /** Send call_started for the (answering) calls not started yet; `only` picks calls. */
  startAll(only?: (call: Json) => boolean): Promise<void>;
  /** Finish every call still going (or those `only` picks): final call object plus webhooks. */
  finishAll(opts?: FinishOptions): Promise<void>;
  /** Analyse the ended, answered calls not analysed yet: call_analysis on the call plus call_analyzed. */
  analyzeAll(opts?: AnalyzeOptions): Promise<void>;
  /** Rotate the recording links: old recording_url values stop working (signed URLs expiring). */
  expireRecordings(): void;
  /** Statuses our endpoint answered webhooks with. */
  delivered: number[];
  close(): Promise<void>;
}

type Validator = { (x: unknown): boolean; errors?: unknown };
const compiled = new Map<string, { createReq: Validator; listReq: Validator; phoneCall: Validator }>();

/** Parsing the 385 KB spec and compiling takes seconds: once per test file. */
function validators(specPath: string) {
  let v = compiled.get(specPath);
  if (v) return v;
  const doc = YAML.parse(fs.readFileSync(specPath, 'utf8'));
  const ajv = new Ajv({ strict: false, allErrors: true });
  (addFormats as unknown as (a: Ajv) => void)(ajv);
  ajv.addSchema({ components: doc.components }, 'retell');
  const fix = (s: unknown): unknown => JSON.parse(JSON.stringify(s).replaceAll('"#/components/', '"retell#/components/'));
  v = {
    createReq: ajv.compile(fix(doc.paths['/v2/create-phone-call'].post.requestBody.content['application/json'].schema) as object),
    listReq: ajv.compile(fix(doc.paths['/v2/list-calls'].post.requestBody.content['application/json'].schema) as object),
    phoneCall: ajv.getSchema('retell#/components/schemas/V2PhoneCallResponse')! as Validator,
  };
  compiled.set(specPath, v);
  return v;
}

/** For tests of the fake itself: does this body pass the create-phone-call request schema? */
export function validCreateRequest(body: unknown, specPath = RETELL_SPEC_PATH): boolean {
  return validators(specPath).createReq(body);
}

/** For tests of the fake itself: does this object pass the V2PhoneCallResponse schema? */
export function validCallObject(call: unknown, specPath = RETELL_SPEC_PATH): boolean {
  return validators(specPath).phoneCall(call);
}

type Which = (call: Json) => boolean;

export type LookupAnswer = 'hang' | { status: number; headers?: Record<string, string> };

export interface FinishOptions {
  only?: Which;
  /** Lose this call's call_ended webhook (call_analyzed or reconciliation must settle it). */
  dropEnded?: Which;
  /** Send this call's webhooks twice. */
  duplicate?: Which;
  /** Send call_ended before call_started. */
  reversed?: Which;
  /** Retell never analyses this call: no call_analysis, no call_analyzed. */
  noAnalysis?: Which;
  /** Analyse at once: call_analyzed goes out right after call_ended (before it when `reversed`). */
  analyzeNow?: Which;
}

export interface AnalyzeOptions {
  /** The analysis exists at Retell (get-call shows it) but its call_analyzed webhook is lost. */
  dropAnalyzed?: Which;
  duplicate?: Which;
}

/** Posts a signed webhook body; returns the HTTP status. */
export type Deliver = (body: string, signature: string) => Promise<number>;

export async function startFakeRetell(opts: { apiKey: string; deliver?: Deliver; spec?: string }): Promise<FakeRetell> {
  const { createReq, listReq, phoneCall } = validators(opts.spec ?? RETELL_SPEC_PATH);
  const calls = new Map<string, Json>();
  const creates: Json[] = [];
  const invalid: string[] = [];
  const stops: string[] = [];
  const awaitingAnalysis = new Set<string>();
  const heldResponses: Array<() => void> = [];
  let failures: { n: number; status: number | 'reset'; afterCreate: boolean } = { n: 0, status: 500, afterCreate: false };
  let reject: ((body: Json) => { status: number; message: string } | null) | null = null;
  let holdFrom: number | null = null;
  let seq = 0;
  let listCalls = 0;
  let getCalls = 0;
  let lookupRule: ((r: { kind: 'get' | 'list'; retellCallId?: string; callId?: string }) => LookupAnswer | null) | null = null;
  let recordingFetches = 0;
  let recordingGeneration = 1;

  const check = (v: Validator, body: unknown, what: string) => {
    if (!v(body)) invalid.push(`${what}: ${JSON.stringify(v.errors)}`);
  };
  const send = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  /** true when the rule answered (or is leaving the request hanging). */
  const ruled = (res: http.ServerResponse, r: { kind: 'get' | 'list'; retellCallId?: string; callId?: string }) => {
    const answer = lookupRule?.(r);
    if (!answer) return false;
    if (answer === 'hang') return true;
    res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
    res.end(JSON.stringify({ status: 'error', message: `fake ${answer.status}` }));
    return true;
  };
  const newCall = (body: Json): Json => ({
    call_type: 'phone_call',
    call_id: `rc_${++seq}`,
    agent_id: body.override_agent_id ?? 'agent_default',
    agent_version: body.override_agent_version ?? 1,
    call_status: 'registered',
    from_number: body.from_number,
    to_number: body.to_number,
    direction: 'outbound',
    metadata: body.metadata,
    retell_llm_dynamic_variables: body.retell_llm_dynamic_variables,
  });
  const recordingUrl = (callId: string) => `${url}/recordings/${callId}.wav?token=g${recordingGeneration}`;

  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const u = new URL(req.url!, 'http://x');
    // Recording storage: public links (like Retell's), valid while their token is current.
    const rec = /^\/recordings\/(rc_\d+)\.wav$/.exec(u.pathname);
    if (req.method === 'GET' && rec) {
      if (u.searchParams.get('token') !== `g${recordingGeneration}` || !calls.has(rec[1])) return send(res, 403, { message: 'Request has expired' });
      recordingFetches += 1;
      const body = fakeRecording(rec[1]);
      res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': String(body.length) });
      res.end(body);
      return;
    }
    if (req.headers.authorization !== `Bearer ${opts.apiKey}`) return send(res, 401, { status: 'error', message: 'API key is missing or invalid.' });
    if (req.method === 'POST' && u.pathname === '/v2/create-phone-call') {
      const body = JSON.parse(raw);
      check(createReq, body, 'create request');
      const refused = reject?.(body);
      if (refused) return send(res, refused.status, { status: 'error', message: refused.message });
      const fail = failures.n > 0 ? (failures.n--, { ...failures }) : null;
      if (fail && !fail.afterCreate) {
        if (fail.status === 'reset') return void req.socket.destroy();
        return send(res, fail.status, { status: 'error', message: `fake ${fail.status}` });
      }
      const call = newCall(body);
      calls.set(call.call_id, call);
      creates.push(body);
      check(phoneCall, call, 'create response');
      // The call exists at Retell but its answer is lost (a 5xx, reset or timeout after creation).
      if (fail) {
        if (fail.status === 'reset') return void req.socket.destroy();
        return send(res, fail.status, { status: 'error', message: 'lost answer' });
      }
      if (holdFrom !== null && seq >= holdFrom) {
        heldResponses.push(() => send(res, 201, call));
        return;
      }
      return send(res, 201, call);
    }
    const m = /^\/v2\/get-call\/(.+)$/.exec(u.pathname);
    if (req.method === 'GET' && m) {
      getCalls += 1;
      if (ruled(res, { kind: 'get', retellCallId: decodeURIComponent(m[1]) })) return;
      const call = calls.get(decodeURIComponent(m[1]));
      if (!call) return send(res, 404, { status: 'error', message: 'Not Found' });
      check(phoneCall, call, 'get response');
      return send(res, 200, call);
    }
    if (req.method === 'POST' && u.pathname === '/v2/list-calls') {
      const body = raw ? JSON.parse(raw) : {};
      check(listReq, body, 'list request');
      if (ruled(res, { kind: 'list', callId: body.filter_criteria?.metadata?.['metadata.call_id']?.[0] })) return;
      // "Values are matched exactly as strings."
      const f = Object.entries((body.filter_criteria?.metadata ?? {}) as Record<string, string[]>);
      const out = [...calls.values()].filter((c) => f.every(([k, vals]) => vals.includes(String(c.metadata?.[k.replace(/^metadata\./, '')]))));
      for (const c of out) check(phoneCall, c, 'list response item');
      listCalls += 1;
      return send(res, 200, out.slice(0, body.limit ?? 50));
    }
    const stop = /^\/v2\/stop-call\/(.+)$/.exec(u.pathname);
    if (req.method === 'POST' && stop) {
      stops.push(decodeURIComponent(stop[1]));
      res.writeHead(204).end();
      return;
    }
    send(res, 404, { message: 'Not Found' });
  });

  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const delivered: number[] = [];
  async function post(event: string, call: Json) {
    check(phoneCall, call, `${event} webhook call`);
    if (!opts.deliver) return;
    const body = JSON.stringify({ event, call });
    delivered.push(await opts.deliver(body, await sign(body, opts.apiKey)));
  }

  function start(call: Json) {
    const o = fakeOutcome(call.to_number);
    Object.assign(call, { call_status: 'ongoing', start_timestamp: Date.now() - o.seconds! * 1000 });
  }

  function analyse(call: Json) {
    const o = fakeOutcome(call.to_number);
    call.call_analysis = {
      call_summary: o.summary,
      in_voicemail: false,
      user_sentiment: 'Positive',
      call_successful: true,
      custom_analysis_data: o.analysisData,
    };
    awaitingAnalysis.delete(call.call_id);
  }

  return {
    url,
    calls,
    creates,
    invalid,
    stops,
    get listCalls() {
      return listCalls;
    },
    get getCalls() {
      return getCalls;
    },
    get recordingFetches() {
      return recordingFetches;
    },
    lookupRule(rule) {
      lookupRule = rule;
    },
    seedCall(body) {
      const call = newCall(body);
      calls.set(call.call_id, call);
      check(phoneCall, call, 'seeded call');
      return call;
    },
    failNext(n, status, afterCreate = false) {
      failures = { n, status, afterCreate };
    },
    rejectCreates(rule) {
      reject = rule;
    },
    holdCreatesFrom(k) {
      holdFrom = k;
    },
    get held() {
      return heldResponses.length;
    },
    releaseHeld() {
      for (const r of heldResponses.splice(0)) r();
    },
    delivered,
    async startAll(only) {
      for (const call of calls.values()) {
        if (call.call_status !== 'registered' || !fakeOutcome(call.to_number).answered || (only && !only(call))) continue;
        start(call);
        await post('call_started', { ...call });
      }
    },
    async finishAll(o = {}) {
      for (const call of calls.values()) {
        if (call.call_status === 'ended' || call.call_status === 'not_connected') continue;
        if (o.only && !o.only(call)) continue;
        const outcome = fakeOutcome(call.to_number);
        const times = o.duplicate?.(call) ? 2 : 1;
        const sends: Array<[string, Json]> = [];
        if (outcome.answered) {
          if (call.call_status === 'registered') {
            start(call);
            sends.push(['call_started', { ...call }]);
          }
          Object.assign(call, {
            call_status: 'ended',
            end_timestamp: call.start_timestamp + outcome.seconds! * 1000,
            duration_ms: outcome.seconds! * 1000,
            transcript: outcome.transcript,
            recording_url: recordingUrl(call.call_id),
            disconnection_reason: outcome.disconnection,
          });
          if (!o.noAnalysis?.(call)) awaitingAnalysis.add(call.call_id);
        } else {
          const end = Date.now();
          Object.assign(
            call,
            { call_status: 'not_connected', disconnection_reason: outcome.disconnection },
            outcome.seconds !== null
              ? { start_timestamp: end - outcome.seconds * 1000, end_timestamp: end, duration_ms: outcome.seconds * 1000 }
              : {},
          );
        }
        if (!o.dropEnded?.(call)) sends.push(['call_ended', { ...call }]);
        if (outcome.answered && awaitingAnalysis.has(call.call_id) && o.analyzeNow?.(call)) {
          analyse(call);
          sends.push(['call_analyzed', { ...call }]);
        }
        if (o.reversed?.(call)) sends.reverse();
        for (let i = 0; i < times; i++) for (const [event, body] of sends) await post(event, body);
      }
    },
    async analyzeAll(o = {}) {
      for (const id of [...awaitingAnalysis]) {
        const call = calls.get(id)!;
        analyse(call);
        if (o.dropAnalyzed?.(call)) continue;
        const times = o.duplicate?.(call) ? 2 : 1;
        for (let i = 0; i < times; i++) await post('call_analyzed', { ...call });
      }
    },
    expireRecordings() {
      recordingGeneration += 1;
      for (const call of calls.values()) if (call.recording_url) call.recording_url = recordingUrl(call.call_id);
    },
    close: () =>
      new Promise<void>((r) => {
        // Held answers die with their connections.
        heldResponses.length = 0;
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
