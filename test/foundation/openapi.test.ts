// The OpenAPI document of the REST facade: valid OpenAPI 3.1, built from the whole route table,
// its examples valid against its own schemas, served publicly with an ETag; and the suite-wide
// check of REST responses against it (test/helpers/rest-contract.ts) fails on a response that
// drifts from it.
import http from 'node:http';
import { parseCsv } from '../../src/csv/csv.ts';
import { CALL_RECORD_FIELDS } from '../../src/services/representations.ts';
import type { AddressInfo } from 'node:net';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../src/rest/routes.ts';
import { buildOpenApiDocument, OPENAPI_PATH } from '../../src/rest/openapi/document.ts';
import { callRecordExample } from '../../src/rest/openapi/examples.ts';
import { checkedResponse, restContractChecker, type OpenApiDocument } from '../helpers/rest-contract.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';

const doc = buildOpenApiDocument(routes);
const copy = (): OpenApiDocument => structuredClone(doc);
type Operation = {
  'x-graphql-operation': string;
  requestBody?: { content: Record<string, { example: unknown }> };
  responses: Record<string, { content: Record<string, { example: unknown }> }>;
};
const operationsOf = (d: OpenApiDocument) =>
  Object.entries(d.paths).flatMap(([path, methods]) =>
    Object.entries(methods as Record<string, Operation>).map(([method, op]) => ({ path, method, op })),
  );

describe('the OpenAPI document', () => {
  it('validates against the OpenAPI 3.1 schema', async () => {
    const result = await new Validator().validate(structuredClone(doc) as unknown as Parameters<Validator['validate']>[0]);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(doc.openapi).toBe('3.1.0');
  });

  it('has every route of the table, with its method, path parameters and GraphQL operation', () => {
    const ops = operationsOf(doc);
    expect(ops).toHaveLength(routes.length);
    for (const r of routes) {
      const path = r.path.replace(/:(\w+)/g, '{$1}');
      const op = (doc.paths[path] as Record<string, Operation & { parameters: { in: string; name: string }[] }>)[r.method.toLowerCase()];
      expect(op, `${r.method} ${r.path}`).toBeDefined();
      expect(op['x-graphql-operation']).toBe('operation' in r ? r.operation : undefined);
      expect(op.parameters.filter((p) => p.in === 'path').map((p) => p.name)).toEqual([...r.path.matchAll(/:(\w+)/g)].map((m) => m[1]));
      // Both error forms and the statuses every route can answer.
      for (const status of ['401', '403', '422', '429', '500']) expect(Object.keys(op.responses)).toContain(status);
    }
  });

  it('every example in it is valid against its own schema', () => {
    const check = restContractChecker(doc);
    let examples = 0;
    for (const { path, method, op } of operationsOf(doc)) {
      const url = path.replace(/\{(\w+)\}/g, 'sched_x');
      for (const [status, response] of Object.entries(op.responses)) {
        const csv = (response.content as Record<string, { example: unknown }>)['text/csv'];
        if (csv) {
          const records = parseCsv(csv.example as string);
          expect(records.map((r) => r.cells.length)).toEqual([CALL_RECORD_FIELDS.length, CALL_RECORD_FIELDS.length]);
          expect(records[0].cells).toEqual([...CALL_RECORD_FIELDS]);
          examples++;
          continue;
        }
        const example = response.content['application/json'].example;
        expect(() => check(method.toUpperCase(), url, Number(status), 'application/json', JSON.stringify(example))).not.toThrow();
        examples++;
      }
    }
    expect(examples).toBeGreaterThan(80);
  });

  it('describes the bearer key, both error forms of a create and the idempotent 200', () => {
    expect(doc.components.securitySchemes.apiKey).toMatchObject({ type: 'http', scheme: 'bearer' });
    const put = (doc.paths['/api/v1/public/call-batches'] as Record<string, Operation>).put;
    expect(Object.keys(put.responses)).toEqual(expect.arrayContaining(['200', '201', '404', '413', '415', '422', '503']));
    const forms = (put.responses['422'] as unknown as { content: { 'application/json': { schema: { oneOf: unknown[] } } } }).content[
      'application/json'
    ].schema.oneOf;
    expect(forms).toHaveLength(2);
  });
});

describe('the REST response check', () => {
  const check = restContractChecker(doc);
  const callsUrl = '/api/v1/public/call-batches/sched_1/calls';
  const page = (item: unknown) =>
    JSON.stringify({
      status_code: 200,
      message: 'Batch calls fetched successfully',
      error: null,
      data: { items: [item], pagination: { page: 1, limit: 100, total: 1, has_more: false } },
    });

  it('passes a response as the document describes it', () => {
    expect(() => check('GET', callsUrl, 200, 'application/json', page(callRecordExample))).not.toThrow();
    expect(() => check('GET', callsUrl, 404, 'application/json', '{"detail":"Call batch not found"}')).not.toThrow();
    expect(() => check('GET', '/api/v1/public/nope', 404, 'application/json', '{"detail":"Not Found"}')).not.toThrow();
  });

  it('fails a renamed, a missing or an extra field, a wrong null, an undocumented status, a wrong message, the wrong error form', () => {
    const { summary, ...withoutSummary } = callRecordExample;
    const cases: [number, string][] = [
      [200, page({ ...withoutSummary, call_summary: summary })],
      [200, page(withoutSummary)],
      [200, page({ ...callRecordExample, extra: 1 })],
      [200, page({ ...callRecordExample, created_at: null })],
      [200, page({ ...callRecordExample, status: 'exploded' })],
      [200, page(callRecordExample).replace('Batch calls fetched successfully', 'Calls fetched')],
      [418, '{"detail":"teapot"}'],
      [404, '{"status_code":404,"message":"Call batch not found","error":{"code":"NOT_FOUND","details":[]},"data":null}'],
      [401, '{"detail":"Invalid API key","code":"UNAUTHORIZED"}'],
    ];
    for (const [status, body] of cases) {
      expect(() => check('GET', callsUrl, status, 'application/json', body), body.slice(0, 80)).toThrow(/REST contract/);
    }
  });

  it('fails when the document drops a field the service sends', () => {
    const tampered = copy();
    const schema = tampered.components.schemas.CallRecord as { properties: Record<string, unknown>; required: string[] };
    delete schema.properties.summary;
    schema.required = schema.required.filter((f) => f !== 'summary');
    expect(() => restContractChecker(tampered)('GET', callsUrl, 200, 'application/json', page(callRecordExample))).toThrow(/summary/);
  });
});

describe('the hooks', () => {
  it('checkedResponse (behind createTestApp and the global fetch) fails a drifting response and passes others untouched', async () => {
    const res = (body: string, status = 200) => new Response(body, { status, headers: { 'content-type': 'application/json' } });
    await expect(checkedResponse('GET', 'http://test.local/api/v1/public/me', res('{"status_code":200}'))).rejects.toThrow(
      /REST contract: GET \/api\/v1\/public\/me → 200/,
    );
    const other = res('{"anything":1}');
    expect(await checkedResponse('GET', 'http://test.local/healthz', other)).toBe(other);
  });

  it('the global fetch of every test checks REST responses from a loopback server', async () => {
    const server = http.createServer((_req, out) => {
      out.writeHead(200, { 'content-type': 'application/json' });
      out.end('{"status_code":200,"message":"Account details fetched successfully","error":null,"data":{"account_id":"a"}}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      await expect(fetch(`http://127.0.0.1:${port}/api/v1/public/me`)).rejects.toThrow(/REST contract.*does not match/s);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('serving', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());
  const get = (path: string, headers: Record<string, string> = {}) => t.app.fetch(new Request(`http://test.local${path}`, { headers }));

  it('serves the document without a key, as built, with an ETag and 304 on a match', async () => {
    const res = await get(OPENAPI_PATH);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('cache-control')).toBe('no-cache');
    const text = await res.text();
    expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(doc)));
    // Built once per app: ~100 KB (in a few milliseconds: openapi.timed.test.ts).
    expect(text.length).toBeLessThan(256 * 1024);
    const etag = res.headers.get('etag')!;
    expect((await get(OPENAPI_PATH, { 'if-none-match': etag })).status).toBe(304);
    expect((await t.app.fetch(new Request(`http://test.local${OPENAPI_PATH}`, { method: 'POST' }))).status).toBe(405);
  });

  it('serves /docs: a small page whose script is a content-hashed, immutable local asset, and a policy naming no other host', async () => {
    const res = await get('/docs');
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).not.toMatch(/https?:|unsafe-eval/);
    const html = await res.text();
    expect(html.length).toBeLessThan(8 * 1024);
    expect(html).not.toMatch(/(src|href)="https?:/);
    const script = /src="(\/docs\/assets\/redoc-[\w-]+\.js)"/.exec(html)![1];
    const asset = await get(script);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const js = await asset.text();
    expect(js.length).toBeGreaterThan(500_000);
    expect(js).not.toContain('cdn.redoc.ly');
    expect((await get('/docs/assets/redoc-nope.js')).status).toBe(404);
    // No inline script: the 304 of a revalidation carries the 200's policy (a browser merges it into the cached page).
    const revalidated = await get('/docs', { 'if-none-match': res.headers.get('etag')! });
    expect(revalidated.status).toBe(304);
    expect(revalidated.headers.get('content-security-policy')).toBe(csp);
    const init = /src="(\/docs\/assets\/init-[\w-]+\.js)"/.exec(html)![1];
    expect(await (await get(init)).text()).toContain('Redoc.init("/api/v1/openapi.json"');
  });
});
