// The REST contract as an OpenAPI 3.1 document, built from the route table: paths, methods, path
// parameters and operations from the routes, bodies from shapes.ts, errors from the one error
// table (src/errors.ts: status, form and code). Served at /api/v1/openapi.json; tests validate
// every REST response they receive against it.
import { ERROR_CODES, type ErrorCode } from '../../errors.ts';
import type { RestRoute } from '../router.ts';
import { type JsonSchema, ref } from './json-schema.ts';
import type { EnvelopeAnswerDoc, FileAnswerDoc, RouteDoc } from './route-doc.ts';
import { SHAPES } from './shapes.ts';

export const OPENAPI_PATH = '/api/v1/openapi.json';

const PATH_PARAMS: Record<string, string> = {
  batch_id: 'Batch id, `sched_<id>`',
  call_id: 'Call id, `call_<id>`',
  phone_number: 'A number on the do-not-call list, in any form the phone rules read; `+` may be URL-encoded (`%2B`)',
};

/** Every route can answer these: a key refused, API access off, the rate limit, a bad query value, the database unreachable, a fault. */
const EVERY_ROUTE: ErrorCode[] = ['UNAUTHENTICATED', 'FORBIDDEN', 'RATE_LIMITED', 'MISSING_PARAMETER', 'UNAVAILABLE', 'INTERNAL'];
/** A route that reads a body can also refuse its type or size, cut one that arrives too slowly, or ask for a retry while bodies pile up. */
const BODY_ROUTE: ErrorCode[] = ['PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'REQUEST_TIMEOUT', 'UNAVAILABLE'];

const DETAIL_EXAMPLES: Partial<Record<number, string>> = { 401: 'Invalid API key', 404: 'Call batch not found' };
const ENVELOPE_MESSAGES: Partial<Record<ErrorCode, string>> = { MISSING_PARAMETER: 'Missing required parameter' };
const ENVELOPE_EXAMPLES: Partial<Record<ErrorCode, { message: string; details: string[] }>> = {
  MISSING_PARAMETER: { message: 'Missing required parameter', details: ['contacts.0.phone_number: String should have at least 8 characters'] },
  FORBIDDEN: { message: 'API access is not enabled for this account', details: [] },
  RATE_LIMITED: { message: 'Rate limit exceeded', details: [] },
};

const RATE_LIMIT_HEADERS = {
  'RateLimit-Limit': { $ref: '#/components/headers/RateLimit-Limit' },
  'RateLimit-Remaining': { $ref: '#/components/headers/RateLimit-Remaining' },
  'RateLimit-Reset': { $ref: '#/components/headers/RateLimit-Reset' },
};

const closedEnvelope = (properties: Record<string, JsonSchema>): JsonSchema => ({
  type: 'object',
  required: ['status_code', 'message', 'error', 'data'],
  properties,
  additionalProperties: false,
});

function fileResponse(file: FileAnswerDoc) {
  return {
    description: file.description,
    headers: RATE_LIMIT_HEADERS,
    content: { [file.mediaType]: { schema: { type: 'string' }, example: file.example } },
  };
}

function successResponse(doc: EnvelopeAnswerDoc, { status, messages, example: data = doc.example }: EnvelopeAnswerDoc['success'][number]) {
  const schema = closedEnvelope({
    status_code: { const: status },
    message: { enum: messages },
    error: { type: 'null' },
    data: doc.data,
  });
  const example = { status_code: status, message: messages[0], error: null, data };
  return { description: messages.join('; '), headers: RATE_LIMIT_HEADERS, content: { 'application/json': { schema, example } } };
}

function errorEnvelope(status: number, codes: ErrorCode[]): JsonSchema {
  const messages = codes.map((c) => ENVELOPE_MESSAGES[c]);
  return closedEnvelope({
    status_code: { const: status },
    message: messages.every((m) => m !== undefined) ? { enum: [...new Set(messages)] } : { type: 'string' },
    error: {
      type: 'object',
      required: ['code', 'details'],
      properties: {
        code: { enum: [...new Set(codes.map((c) => ERROR_CODES[c].restCode))] },
        details: { type: 'array', items: { type: 'string' }, description: 'For MISSING_PARAMETER: `<field path>: <reason>` per problem' },
      },
      additionalProperties: false,
    },
    data: { type: 'null' },
  });
}

function errorResponse(status: number, codes: ErrorCode[], doc: RouteDoc) {
  const detail = codes.filter((c) => ERROR_CODES[c].form === 'detail');
  const envelope = codes.filter((c) => ERROR_CODES[c].form === 'envelope');
  const forms: JsonSchema[] = [];
  if (detail.length) forms.push(ref('DetailError'));
  if (envelope.length) forms.push(errorEnvelope(status, envelope));
  const schema = forms.length === 1 ? forms[0] : { oneOf: forms };
  const detailText = doc.detailExamples?.[status as 404] ?? DETAIL_EXAMPLES[status];
  const sample = ENVELOPE_EXAMPLES[envelope[0]] ?? { message: 'See error.code', details: [] };
  const example = detail.length
    ? { detail: detailText ?? 'See the detail text' }
    : { status_code: status, message: sample.message, error: { code: ERROR_CODES[envelope[0]].restCode, details: sample.details }, data: null };
  const description = codes.map((c) => `${ERROR_CODES[c].restCode} (${ERROR_CODES[c].form} form)`).join('; ');
  const headers = status === 429 || status === 503 ? { 'Retry-After': { $ref: '#/components/headers/Retry-After' } } : undefined;
  return { description, ...(headers ? { headers } : {}), content: { 'application/json': { schema, example } } };
}

/** Error codes of a route grouped by HTTP status. */
function errorsByStatus(route: RestRoute): Map<number, ErrorCode[]> {
  const codes = new Set([...EVERY_ROUTE, ...(route.method === 'GET' ? [] : BODY_ROUTE), ...(route.doc.errors ?? [])]);
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = ERROR_CODES[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return byStatus;
}

function pathParameters(route: RestRoute) {
  return route.path
    .split('/')
    .filter((s) => s.startsWith(':'))
    .map((s) => {
      const name = s.slice(1);
      const description = PATH_PARAMS[name];
      if (!description) throw new Error(`REST route ${route.method} ${route.path}: path parameter ${name} is not described`);
      return { name, in: 'path', required: true, description, schema: { type: 'string' } };
    });
}

function operation(route: RestRoute) {
  const { doc } = route;
  const query = (doc.query ?? []).map((q) => ({
    name: q.name,
    in: 'query',
    required: q.required ?? false,
    description: q.description,
    schema: q.repeated ? { type: 'array', items: q.schema } : q.schema,
    ...(q.repeated ? { style: 'form', explode: true } : {}),
  }));
  const responses: Record<string, unknown> = {};
  if (doc.file) responses['200'] = fileResponse(doc.file);
  else for (const s of doc.success) responses[String(s.status)] = successResponse(doc, s);
  for (const [status, codes] of [...errorsByStatus(route)].sort((a, b) => a[0] - b[0])) {
    responses[String(status)] = errorResponse(status, codes, doc);
  }
  return {
    operationId: doc.operationId,
    tags: [doc.tag],
    summary: doc.summary,
    ...(doc.description ? { description: doc.description } : {}),
    ...('operation' in route ? { 'x-graphql-operation': route.operation } : {}),
    parameters: [...pathParameters(route), ...query],
    ...(doc.body
      ? { requestBody: { required: true, content: { 'application/json': { schema: ref(doc.body.shape), example: doc.body.example } } } }
      : {}),
    responses,
  };
}

const openApiPath = (path: string) => path.replace(/:(\w+)/g, '{$1}');

const DESCRIPTION = `The documented REST contract of the call batch service. Every success is the envelope
\`{status_code, message, error: null, data}\`. Errors come in the contract's two forms: the envelope with
\`data: null\` and \`error: {code, details}\` (request validation \`MISSING_PARAMETER\`, \`FORBIDDEN\`,
\`RATE_LIMITED\`, …) or \`{"detail": "…"}\` (401, not found, business rules). Lists page with \`page\` and
\`limit\` (\`page_size\` on /call-records) and answer \`data.items\` and \`data.pagination\`. Unknown paths under
/api answer 404 \`{"detail":"Not Found"}\`, a known path with another method 405 \`{"detail":"Method Not Allowed"}\`.`;

/** The OpenAPI 3.1 document of these routes (deterministic: same table, same bytes). */
export function buildOpenApiDocument(routes: RestRoute[]) {
  const paths: Record<string, Record<string, unknown>> = {};
  const ids = new Set<string>();
  for (const route of routes) {
    if (ids.has(route.doc.operationId)) throw new Error(`REST route ${route.method} ${route.path}: operationId ${route.doc.operationId} is taken`);
    ids.add(route.doc.operationId);
    (paths[openApiPath(route.path)] ??= {})[route.method.toLowerCase()] = operation(route);
  }
  return {
    openapi: '3.1.0',
    // No jsonSchemaDialect: it would only restate the default, and Stoplight Prism 5.16 skips every
    // body validation of a document that states one.
    // The contract's version is its path (/api/v1); the document follows it.
    info: { title: 'Call batch service REST API', version: 'v1', description: DESCRIPTION },
    servers: [{ url: '/', description: 'This server' }],
    security: [{ apiKey: [] }],
    tags: [
      { name: 'Batches', description: 'Create, list and read call batches' },
      { name: 'Calls', description: "A batch's calls and results; the account's call records" },
      { name: 'Batch operations', description: 'Start, pause, resume and cancel (beyond the published contract)' },
      { name: 'Account', description: 'The account of the API key' },
      { name: 'Do-not-call list', description: "The account's suppressed numbers: refused at create, never dialled (beyond the published contract)" },
    ],
    paths,
    components: {
      securitySchemes: {
        apiKey: {
          type: 'http',
          scheme: 'bearer',
          description:
            'The account\'s API key (`sk_…`): `Authorization: Bearer sk_…` on every request. A missing or unknown key is 401 `{"detail":"Invalid API key"}`.',
        },
      },
      headers: {
        'RateLimit-Limit': { description: "Requests per minute allowed to the key's account", schema: { type: 'integer' } },
        'RateLimit-Remaining': { description: 'Requests left in the current window', schema: { type: 'integer' } },
        'RateLimit-Reset': { description: 'Seconds until the window resets', schema: { type: 'integer' } },
        'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' } },
      },
      schemas: SHAPES,
    },
  };
}

export type OpenApiDocument = ReturnType<typeof buildOpenApiDocument>;
