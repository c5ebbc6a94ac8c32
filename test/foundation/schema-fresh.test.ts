import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { generate } from '@graphql-codegen/cli';
import { printedSchema } from '../../src/graphql/schema.ts';

const root = path.resolve(import.meta.dirname, '../..');

describe('committed generated files', () => {
  it('schema.graphql equals the schema printed from the Pothos builder (run `npm run schema:print`)', () => {
    expect(fs.readFileSync(path.join(root, 'schema.graphql'), 'utf8')).toBe(printedSchema());
  });

  it('src/codegen/graphql.ts equals fresh codegen output (run `npm run codegen`)', async () => {
    const config = (await import(path.join(root, 'codegen.ts'))).default;
    const outputs = await generate({ ...config, cwd: root, silent: true }, false);
    const fresh = outputs.find((o: { filename: string }) => o.filename.endsWith('src/codegen/graphql.ts'));
    expect(fresh).toBeDefined();
    expect(fs.readFileSync(path.join(root, 'src/codegen/graphql.ts'), 'utf8')).toBe(fresh.content);
  }, 60_000);
});
