// Every REST response a test receives is checked against the OpenAPI document
// (src/rest/openapi/document.ts): its status must be documented for the route, and its JSON body
// must match that status's schema (closed objects, exact nullability). So the document cannot
// drift from the code. Hooked into createTestApp's app.fetch and, by test/helpers/rest-contract-setup.ts,
// into the global fetch (real HTTP to in-process and child servers).
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { routes } from '../../src/rest/routes.ts';
import { buildOpenApiDocument, OPENAPI_PATH } from '../../src/rest/openapi/document.ts';

// ajv-formats is CommonJS: its default export arrives wrapped under tsx/vitest.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as typeof addFormatsModule;

export type OpenApiDocument = ReturnType<typeof buildOpenApiDocument>;

/** A checker of responses against one document (the suite's, or a tampered one in a unit test). */
export function restContractChecker(doc: OpenApiDocument) {
  const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true });
  addFormats(ajv);
  // The document's own keys, so its schemas can be reached by JSON pointer from the whole document.
  ajv.addVocabulary(['openapi', 'jsonSchemaDialect', 'info', 'servers', 'security', 'tags', 'paths', 'components']);
  ajv.addSchema(doc as object, 'openapi.json');
  const validators = new Map<string, ValidateFunction>();
  const templates = Object.keys(doc.paths).map((template) => ({
    template,
    pattern: new RegExp(`^${template.replace(/\{\w+\}/g, '[^/]+')}$`),
  }));

  function validator(pointer: string): ValidateFunction {
    let v = validators.get(pointer);
    if (!v) {
      v = ajv.compile({ $ref: `openapi.json#${pointer}` });
      validators.set(pointer, v);
    }
    return v;
  }

  const anyTemplate = templates.find((t) => (doc.paths[t.template] as Record<string, unknown>).get)!.template;
  const escape = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

  /** Throws a readable error when the response does not match the document; quiet otherwise. */
  return function check(method: string, url: string, status: number, contentType: string | null, text: string): void {
    const pathname = new URL(url, 'http://x').pathname;
    if (!pathname.startsWith('/api/') || pathname === OPENAPI_PATH || method === 'OPTIONS') return;
    const where = `${method} ${pathname} → ${status}`;
    const found = templates.find((t) => t.pattern.test(pathname));
    const operation = found && (doc.paths[found.template] as Record<string, { responses: Record<string, unknown> }>)[method.toLowerCase()];
    let pointer: string;
    if (!operation) {
      // Not a route: the router's 404/405, or the front door's 429 for a blocked address.
      if (status === 429) pointer = `/paths/${escape(anyTemplate)}/get/responses/429/content/application~1json/schema`;
      else if (status === 404 || status === 405) pointer = '/components/schemas/DetailError';
      else throw new Error(`REST contract: ${where}: no route for this method and path, and not a 404/405/429`);
    } else {
      // A server without this API (a worker's ops port) answers any path so; the API never does for a route.
      if (status === 404 && text === '{"detail":"Not Found"}' && !operation.responses['404']) return;
      const documented = operation.responses[String(status)] as { content: Record<string, unknown> } | undefined;
      if (!documented) {
        throw new Error(`REST contract: ${where} is not in the OpenAPI document (documented: ${Object.keys(operation.responses).join(', ')})`);
      }
      // A file answer (the CSV export): its media type is the contract; the body is not read, so a
      // test of the stream's reads and backpressure sees only its own.
      const fileType = Object.keys(documented.content).find((t) => t !== 'application/json');
      if (fileType && contentType?.startsWith(fileType)) return;
      pointer = `/paths/${escape(found!.template)}/${method.toLowerCase()}/responses/${status}/content/application~1json/schema`;
    }
    if (method === 'HEAD' || status === 304) return;
    if (!/^application\/json\b/.test(contentType ?? '')) throw new Error(`REST contract: ${where}: content-type ${contentType}, not JSON`);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new Error(`REST contract: ${where}: body is not JSON: ${text.slice(0, 200)}`);
    }
    const validate = validator(pointer);
    if (!validate(body)) {
      const problems = (validate.errors ?? []).slice(0, 8).map((e) => `${e.instancePath || '(body)'} ${e.message} ${JSON.stringify(e.params)}`);
      throw new Error(`REST contract: ${where} does not match the OpenAPI document:\n  ${problems.join('\n  ')}\nbody: ${text.slice(0, 500)}`);
    }
  };
}

// One checker per test file (a worker process), built on first use.
let suiteChecker: ReturnType<typeof restContractChecker> | undefined;
const checker = () => (suiteChecker ??= restContractChecker(buildOpenApiDocument(routes)));

/** Checks a REST response (read from a clone) and hands back the response untouched. */
export async function checkedResponse(method: string, url: string, response: Response): Promise<Response> {
  if (!new URL(url, 'http://x').pathname.startsWith('/api/')) return response;
  const file = /^text\/csv\b/.test(response.headers.get('content-type') ?? '');
  const text = method === 'HEAD' || file ? '' : await response.clone().text();
  checker()(method, url, response.status, response.headers.get('content-type'), text);
  return response;
}
