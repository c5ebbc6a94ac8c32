// The docs show their runnable examples verbatim from docs/examples/ (see scripts/doc-examples.ts).
import fs from 'node:fs';
import path from 'node:path';
import { buildSchema, parse, validate } from 'graphql';
import { describe, expect, it } from 'vitest';
import { markdownFiles, markedBlocks, root } from '../../scripts/doc-examples.ts';

const blocks = markdownFiles().flatMap(markedBlocks);
const exampleFiles = fs.readdirSync(path.join(root, 'docs/examples')).map((f) => `docs/examples/${f}`);

describe('examples in the docs are files', () => {
  it('every marked block shows its file byte for byte (edit the file, then `npm run docs:examples`)', () => {
    expect(blocks.length).toBeGreaterThan(0);
    for (const b of blocks) {
      const file = path.join(root, b.file);
      expect(fs.existsSync(file), `${b.doc} shows ${b.file}, which does not exist`).toBe(true);
      expect(b.shown, `${b.doc}: the block of ${b.file}`).toBe(fs.readFileSync(file, 'utf8'));
    }
  });

  it('every example file ends with a newline and is shown in some doc', () => {
    const shown = new Set(blocks.map((b) => b.file));
    for (const f of exampleFiles) {
      expect(fs.readFileSync(path.join(root, f), 'utf8').endsWith('\n'), f).toBe(true);
      expect(shown.has(f), `${f} is shown nowhere`).toBe(true);
    }
  });

  it("README's first batch, the API guide and the webhooks guide show the examples the tests run", () => {
    const of = (doc: string) => blocks.filter((b) => b.doc === doc).map((b) => b.file);
    expect(of('README.md')).toEqual(['docs/examples/me.sh', 'docs/examples/first-batch.sh', 'docs/examples/start-batch.sh']);
    expect(of('docs/api.md')).toEqual(
      expect.arrayContaining(['docs/examples/me.sh', 'docs/examples/me.graphql', 'docs/examples/first-batch.sh', 'docs/examples/read-batch.sh', 'docs/examples/batch-operations.sh', 'docs/examples/progress.graphql']),
    );
    // test/docs/webhook-receiver.test.ts runs the receiver and the GraphQL it names.
    expect(of('docs/webhooks.md')).toEqual(['docs/examples/webhook-receiver.mjs', 'docs/examples/webhook-secret.graphql', 'docs/examples/webhook-deliveries.graphql']);
  });

  it('every GraphQL example is valid against the committed schema.graphql', () => {
    const schema = buildSchema(fs.readFileSync(path.join(root, 'schema.graphql'), 'utf8'));
    const graphqlFiles = exampleFiles.filter((f) => f.endsWith('.graphql'));
    expect(graphqlFiles.length).toBeGreaterThan(0);
    for (const f of graphqlFiles) {
      const errors = validate(schema, parse(fs.readFileSync(path.join(root, f), 'utf8')));
      expect(errors.map((e) => e.message), f).toEqual([]);
    }
  });
});
