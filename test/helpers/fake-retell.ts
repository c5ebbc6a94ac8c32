// A local stand-in for Retell's REST API (create-phone-call, get-call, list-calls), validating
// request and response bodies against the published OpenAPI file, playing calls out by the
// simulator's last-digit rule, and POSTing signed webhooks where told to.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import YAML from 'yaml';
import { sign } from 'retell-sdk';
import { simulatedOutcome } from '../../src/dispatch/voice/simulator.ts';

const SPEC_PATH = '/work/shared/providers/retell-openapi.yaml';

type Json = Record<string, any>;

export interface FakeRetell {
  url: string;
  calls: Map<string, Json>;
  creates: Json[];
  /** Requests rejected by schema validation (should stay empty). */
  invalid: string[];
  /** Retell call ids asked to stop (stop-call: in retell-sdk, not in the OpenAPI file). */
  stops: string[];
  readonly listCalls: number;
  /** Answer the next n creates with this status (after creating the call when `afterCreate`). */
  failNext(n: number, status: number, afterCreate?: boolean): void;
  /** Finish every call now (or the given one): sets the final call object and sends webhooks. */
  finishAll(opts?: FinishOptions): Promise<void>;
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
export function validCreateRequest(body: unknown, specPath = SPEC_PATH): boolean {
  return validators(specPath).createReq(body);
}

export interface FinishOptions {
  /** Lose this call's call_ended webhook (reconciliation must settle it). */
  dropEnded?: (call: Json) => boolean;
  /** Send this call's webhooks twice. */
  duplicate?: (call: Json) => boolean;
  /** Send call_ended before call_started. */
  reversed?: (call: Json) => boolean;
}

/** Posts a signed webhook body; returns the HTTP status. */
export type Deliver = (body: string, signature: string) => Promise<number>;

export async function startFakeRetell(opts: { apiKey: string; deliver?: Deliver; spec?: string }): Promise<FakeRetell> {
  const { createReq, listReq, phoneCall } = validators(opts.spec ?? SPEC_PATH);
  const calls = new Map<string, Json>();
  const creates: Json[] = [];
  const invalid: string[] = [];
  let failures: { n: number; status: number; afterCreate: boolean } = { n: 0, status: 500, afterCreate: false };
  let seq = 0;
  let listCalls = 0;
  const stops: string[] = [];

  const check = (v: { (x: unknown): boolean; errors?: unknown }, body: unknown, what: string) => {
    if (!v(body)) invalid.push(`${what}: ${JSON.stringify(v.errors)}`);
  };
  const send = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };

  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    if (req.headers.authorization !== `Bearer ${opts.apiKey}`) return send(res, 401, { status: 'error', message: 'Unauthorized' });
    const url = new URL(req.url!, 'http://x');
    if (req.method === 'POST' && url.pathname === '/v2/create-phone-call') {
      const body = JSON.parse(raw);
      check(createReq, body, 'create request');
      const fail = failures.n > 0 ? (failures.n--, failures) : null;
      if (fail && !fail.afterCreate) return send(res, fail.status, { status: 'error', message: `fake ${fail.status}` });
      const call: Json = {
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
      };
      calls.set(call.call_id, call);
      creates.push(body);
      check(phoneCall, call, 'create response');
      // The call exists at Retell but its answer is lost (a 5xx or timeout after creation).
      if (fail) return send(res, fail.status, { status: 'error', message: 'lost answer' });
      return send(res, 201, call);
    }
    const m = /^\/v2\/get-call\/(.+)$/.exec(url.pathname);
    if (req.method === 'GET' && m) {
      const call = calls.get(decodeURIComponent(m[1]));
      if (!call) return send(res, 404, { status: 'error', message: 'Not Found' });
      check(phoneCall, call, 'get response');
      return send(res, 200, call);
    }
    if (req.method === 'POST' && url.pathname === '/v2/list-calls') {
      const body = raw ? JSON.parse(raw) : {};
      check(listReq, body, 'list request');
      const f = Object.entries((body.filter_criteria?.metadata ?? {}) as Record<string, string[]>);
      const out = [...calls.values()].filter((c) => f.every(([k, vals]) => vals.includes(String(c.metadata?.[k.replace(/^metadata\./, '')]))));
      for (const c of out) check(phoneCall, c, 'list response item');
      listCalls += 1;
      return send(res, 200, out);
    }
    const stop = /^\/v2\/stop-call\/(.+)$/.exec(url.pathname);
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
    if (!opts.deliver) return;
    const body = JSON.stringify({ event, call });
    delivered.push(await opts.deliver(body, await sign(body, opts.apiKey)));
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
    failNext(n, status, afterCreate = false) {
      failures = { n, status, afterCreate };
    },
    delivered,
    async finishAll(o = {}) {
      for (const call of calls.values()) {
        if (call.call_status === 'ended' || call.call_status === 'not_connected') continue;
        const outcome = simulatedOutcome(call.to_number);
        const start = Date.now() - 5000;
        const times = o.duplicate?.(call) ? 2 : 1;
        const sends: Array<[string, Json]> = [];
        if (outcome.kind === 'answered') {
          Object.assign(call, { call_status: 'ongoing', start_timestamp: start });
          sends.push(['call_started', { ...call }]);
          Object.assign(call, {
            call_status: 'ended',
            end_timestamp: start + 4000,
            transcript: 'Agent: Hello\nUser: Hi',
            recording_url: `${url}/recordings/${call.call_id}.wav`,
            disconnection_reason: outcome.hangupBy === 'user' ? 'user_hangup' : 'agent_hangup',
            call_analysis: { call_summary: 'Spoke with the contact.', custom_analysis_data: { interested: true } },
          });
        } else {
          const reason = outcome.kind === 'busy' ? 'dial_busy' : outcome.kind === 'no_answer' ? 'dial_no_answer' : 'dial_failed';
          Object.assign(call, { call_status: 'not_connected', disconnection_reason: reason });
        }
        check(phoneCall, call, 'final call');
        if (!o.dropEnded?.(call)) sends.push(['call_ended', { ...call }]);
        if (o.reversed?.(call)) sends.reverse();
        for (let i = 0; i < times; i++) for (const [event, body] of sends) await post(event, body);
      }
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
