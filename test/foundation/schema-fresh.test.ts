import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { generate } from '@graphql-codegen/cli';
import { printedSchema } from '../../src/graphql/schema.ts';
import { BATCH_OPTIONS_FRAGMENT_FILE, batchOptionsFragment } from '../../src/rest/batch-options-fragment.ts';

const root = path.resolve(import.meta.dirname, '../..');

describe('committed generated files', () => {
  it('schema.graphql equals the schema printed from the Pothos builder (run `npm run schema:print`)', () => {
    expect(fs.readFileSync(path.join(root, 'schema.graphql'), 'utf8')).toBe(printedSchema());
  });

  it('src/rest/operations/batch-options.graphql selects every batch option (run `npm run schema:print`)', () => {
    expect(fs.readFileSync(BATCH_OPTIONS_FRAGMENT_FILE, 'utf8')).toBe(batchOptionsFragment());
  });

  it('src/codegen/graphql.ts and the example client in examples/graphql-client/src/gql/ equal fresh codegen output (run `npm run codegen`)', async () => {
    const config = (await import(path.join(root, 'codegen.ts'))).default;
    const outputs: { filename: string; content: string }[] = await generate({ ...config, cwd: root, silent: true }, false);
    const names = outputs.map((o) => path.relative(root, path.resolve(root, o.filename))).sort();
    expect(names).toEqual([
      'examples/graphql-client/src/gql/gql.ts',
      'examples/graphql-client/src/gql/graphql.ts',
      'examples/graphql-client/src/gql/index.ts',
      'src/codegen/graphql.ts',
    ]);
    for (const o of outputs) expect(fs.readFileSync(path.resolve(root, o.filename), 'utf8'), o.filename).toBe(o.content);
    // No stale file left behind by a document that was removed.
    expect(fs.readdirSync(path.join(root, 'examples/graphql-client/src/gql')).sort()).toEqual(['gql.ts', 'graphql.ts', 'index.ts']);
  }, 60_000);
});
