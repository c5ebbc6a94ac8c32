// Validators built from Vapi's published OpenAPI description (test/fixtures/vapi-openapi.json,
// see vapi-openapi.md there for its revision and how it was trimmed). Two quirks of the published
// file are read the way Vapi's own SDKs read them, here and not in the vendored file:
// - `enum` on an array-typed property (serverMessages, clientMessages, …) lists the allowed items;
// - an empty `enum` (two voice ids) allows any value of its type.
import fs from 'node:fs';
import path from 'node:path';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';

export const VAPI_SPEC_PATH = path.resolve(import.meta.dirname, '../fixtures/vapi-openapi.json');

export type Validator = { (x: unknown): boolean; errors?: unknown };

export interface VapiValidators {
  createCall: Validator;
  call: Validator;
  statusUpdate: Validator;
  endOfCallReport: Validator;
  endCall: Validator;
  /** GET /call's query parameters as published (name -> schema). */
  listParams: Map<string, Validator>;
}

function normalise(x: unknown): unknown {
  if (Array.isArray(x)) return x.map(normalise);
  if (!x || typeof x !== 'object') return x;
  const o: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(x)) o[k] = normalise(v);
  if (Array.isArray(o.enum) && o.enum.length === 0) delete o.enum;
  if (o.type === 'array' && Array.isArray(o.enum)) {
    o.items = { ...(o.items as object | undefined), enum: o.enum };
    delete o.enum;
  }
  return o;
}

const cache = new Map<string, VapiValidators>();

/** Parsing the 850 KB file and compiling takes seconds: once per test file. */
export function vapiValidators(specPath = VAPI_SPEC_PATH): VapiValidators {
  const hit = cache.get(specPath);
  if (hit) return hit;
  const doc = normalise(JSON.parse(fs.readFileSync(specPath, 'utf8'))) as { components: object; paths: Record<string, any> };
  const ajv = new Ajv({ strict: false, allErrors: true });
  (addFormats as unknown as (a: Ajv) => void)(ajv);
  ajv.addSchema({ components: doc.components }, 'vapi');
  const schema = (name: string) => ajv.getSchema(`vapi#/components/schemas/${name}`)! as Validator;
  const fix = (s: unknown): object => JSON.parse(JSON.stringify(s).replaceAll('"#/components/', '"vapi#/components/'));
  const listParams = new Map<string, Validator>();
  for (const p of doc.paths['/call'].get.parameters as Array<{ name: string; schema: object }>)
    listParams.set(p.name, ajv.compile(fix(p.schema)) as Validator);
  const v: VapiValidators = {
    createCall: schema('CreateCallDTO'),
    call: schema('Call'),
    statusUpdate: schema('ServerMessageStatusUpdate'),
    endOfCallReport: schema('ServerMessageEndOfCallReport'),
    endCall: schema('ClientInboundMessageEndCall'),
    listParams,
  };
  cache.set(specPath, v);
  return v;
}
