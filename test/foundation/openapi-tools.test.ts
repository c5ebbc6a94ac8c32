// The OpenAPI document as integrators' tools read it: Redocly's and Spectral's linters find no error
// in it, and openapi-typescript's generated client types the create request as the contract says
// (required fields required, agent and version as typed strings, one of id or name demanded).
// openapi.test.ts checks it against the OpenAPI 3.1 schema and every response against it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { Spectral } from '@stoplight/spectral-core';
import { oas } from '@stoplight/spectral-rulesets';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { routes } from '../../src/rest/routes.ts';
import { buildOpenApiDocument } from '../../src/rest/openapi/document.ts';

const doc = buildOpenApiDocument(routes);
const text = JSON.stringify(doc);

// The service is private: it states no licence and no public contact, the only advice left.
const ALLOWED_WARNINGS = new Set(['info-license', 'info-contact']);

type Op = {
  parameters: { name: string; schema: Record<string, unknown> }[];
  responses: Record<string, { content: Record<string, { example: unknown }> }>;
};
const op = (p: string, method: string) => (doc.paths[p] as Record<string, Op>)[method];

describe("the OpenAPI document in integrators' tools", () => {
  it("passes Redocly's recommended rules with no error", async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: text, absoluteRef: '/api/v1/openapi.json', config });
    const shown = problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
    expect(shown.filter((p) => p.startsWith('error'))).toEqual([]);
    expect(problems.filter((p) => !ALLOWED_WARNINGS.has(p.ruleId)).map((p) => p.ruleId)).toEqual([]);
  });

  it("passes Spectral's OpenAPI ruleset with no error", async () => {
    const spectral = new Spectral();
    spectral.setRuleset({ extends: [[oas, 'recommended']] } as Parameters<Spectral['setRuleset']>[0]);
    const results = await spectral.run(text);
    const shown = results.map((r) => `${r.severity} ${String(r.code)}: ${r.message} at ${r.path.join('.')}`);
    // Severity 0 is an error.
    expect(shown.filter((s) => s.startsWith('0 '))).toEqual([]);
    expect(results.filter((r) => !ALLOWED_WARNINGS.has(String(r.code))).map((r) => `${String(r.code)} ${r.path.join('.')}`)).toEqual([]);
  });

  it('states no jsonSchemaDialect (Prism 5.16 skips body validation for a document that does)', () => {
    expect(doc).not.toHaveProperty('jsonSchemaDialect');
  });

  it('bounds page_size, types the creation bounds and shows the idempotent replay as one', () => {
    const records = op('/api/v1/public/call-records', 'get');
    expect(records.parameters.find((p) => p.name === 'page_size')?.schema).toMatchObject({ maximum: 200 });
    const list = op('/api/v1/public/call-batches', 'get');
    for (const name of ['created_at_from', 'created_at_to']) {
      expect(list.parameters.find((p) => p.name === name)?.schema).toMatchObject({ type: 'string', format: 'date-time' });
    }
    const put = op('/api/v1/public/call-batches', 'put');
    const example = (status: string) => put.responses[status].content['application/json'].example as { data: { idempotent: boolean } };
    expect(example('200').data.idempotent).toBe(true);
    expect(example('201').data.idempotent).toBe(false);
  });

  it('generates client types with the required fields required and agent/version typed', async () => {
    const generated = astToString(await openapiTS(text));
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'openapi-ts-'));
    try {
      fs.writeFileSync(path.join(dir, 'api.ts'), generated);
      // Each @ts-expect-error must meet an error, and every other line must compile: a property typed
      // `unknown`, or a "give one of them" the types do not demand, fails this program.
      fs.writeFileSync(
        path.join(dir, 'check.ts'),
        `import type { components } from './api';
type Create = components['schemas']['CreateBatchRequest'];
type Put = components['schemas']['IdempotentCreateBatchRequest'];
const base = {
  interruption: false, use_alternate_number: false, start_mode: 'manual' as const,
  schedule_date: '2026-11-24', schedule_time: '09:00', schedule_timezone: 'America/New_York',
  contacts: [{ contact_id: 'c-1', phone_number: '+14155550124', metadata: { plan: 'gold' } }],
};
export const byName: Create = { ...base, agent_name: 'Demo Agent', version_name: 'v1' };
export const byId: Put = { ...base, agent_id: 'agt-1', version_id: 'pmt-1', idempotency_key: 'k' };
export const agentName: string = byName.agent_name!;
export const interruption: boolean = byName.interruption;
// @ts-expect-error interruption is required
export const noInterruption: Create = { ...base, interruption: undefined, agent_name: 'A', version_name: 'v1' };
// @ts-expect-error contacts is required
export const noContacts: Create = { ...base, contacts: undefined, agent_name: 'A', version_name: 'v1' };
// @ts-expect-error agent_id is a string
export const numericAgent: Create = { ...base, agent_id: 5, version_name: 'v1' };
// @ts-expect-error agent_name is a string
export const numericName: Create = { ...base, agent_name: 5, version_name: 'v1' };
// @ts-expect-error one of agent_id and agent_name is required
export const noAgent: Create = { ...base, version_name: 'v1' };
// @ts-expect-error one of version_id and version_name is required
export const noVersion: Create = { ...base, agent_name: 'A' };
// @ts-expect-error idempotency_key is required on PUT
export const noKey: Put = { ...base, agent_name: 'A', version_name: 'v1' };
`,
      );
      const program = ts.createProgram([path.join(dir, 'check.ts')], {
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        types: [],
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.ESNext,
        moduleResolution: ts.ModuleResolutionKind.Bundler,
      });
      const errors = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      expect(errors).toEqual([]);
      // The create request's own block has no `unknown` alternative (the old allOf[anyOf[required]] was
      // `& ((unknown | unknown) & (unknown | unknown))`); metadata's values are `unknown`, as they should be.
      const block = /CreateBatchRequest: \{[\s\S]*?\n {8}\}[^\n]*;/.exec(generated)?.[0] ?? '';
      expect(block).toContain('interruption: boolean;');
      expect(block).toContain('agent_id: string;');
      expect(block).not.toMatch(/\bunknown\s*[|&)]/);
      expect(block).not.toContain('Record<string, never>');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
