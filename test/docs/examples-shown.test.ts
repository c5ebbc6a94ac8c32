// The docs show their runnable examples verbatim from docs/examples/ (see scripts/doc-examples.ts).
import fs from 'node:fs';
import path from 'node:path';
import { buildSchema, parse, validate } from 'graphql';
import { describe, expect, it } from 'vitest';
import { markdownFiles, markedBlocks, parseMarkedBlocks, root, syncedText, unshowable } from '../../scripts/doc-examples.ts';

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

  it('every example file can be shown in a fenced block (LF, ends with a newline, no ``` line) and is shown in some doc', () => {
    const shown = new Set(blocks.map((b) => b.file));
    for (const f of exampleFiles) {
      expect(unshowable(fs.readFileSync(path.join(root, f), 'utf8')), f).toBeNull();
      expect(shown.has(f), `${f} is shown nowhere`).toBe(true);
    }
  });

  it("README's first batch, the API guide and the webhooks guide show the examples the tests run", () => {
    const of = (doc: string) => blocks.filter((b) => b.doc === doc).map((b) => b.file);
    expect(of('README.md')).toEqual(['docs/examples/me.sh', 'docs/examples/first-batch.sh', 'docs/examples/start-batch.sh']);
    expect(of('docs/api.md')).toEqual(
      expect.arrayContaining([
        'docs/examples/me.sh',
        'docs/examples/me.graphql',
        'docs/examples/first-batch.sh',
        'docs/examples/read-batch.sh',
        'docs/examples/batch-operations.sh',
        'docs/examples/progress.graphql',
      ]),
    );
    // test/docs/webhook-receiver.test.ts runs the receiver and the GraphQL it names.
    expect(of('docs/webhooks.md')).toEqual([
      'docs/examples/webhook-receiver.mjs',
      'docs/examples/webhook-secret.graphql',
      'docs/examples/webhook-deliveries.graphql',
    ]);
  });

  it('every GraphQL example is valid against the committed schema.graphql', () => {
    const schema = buildSchema(fs.readFileSync(path.join(root, 'schema.graphql'), 'utf8'));
    const graphqlFiles = exampleFiles.filter((f) => f.endsWith('.graphql'));
    expect(graphqlFiles.length).toBeGreaterThan(0);
    for (const f of graphqlFiles) {
      const errors = validate(schema, parse(fs.readFileSync(path.join(root, f), 'utf8')));
      expect(
        errors.map((e) => e.message),
        f,
      ).toEqual([]);
    }
  });
});

describe('the example markers', () => {
  const marker = '<!-- example: docs/examples/me.sh -->';
  const read = () => 'curl me\n';

  it('a marker that is malformed, not followed by a fence or never closed is an error, not a skipped block', () => {
    const cases = [
      `${marker}\n\n\`\`\`bash\nold\n\`\`\`\n`, // blank line before the fence
      `${marker}\r\n\`\`\`bash\r\nold\r\n\`\`\`\r\n`, // CRLF
      `<!-- example:docs/examples/me.sh-->\n\`\`\`bash\nold\n\`\`\`\n`,
      `${marker}\n\`\`\`bash\nold\n`, // no closing fence
    ];
    for (const text of cases) expect(() => parseMarkedBlocks('x.md', text), JSON.stringify(text)).toThrow(/x\.md/);
    // A marker mentioned inside a line is prose.
    expect(parseMarkedBlocks('x.md', `Write \`${marker}\` above a block.\n`)).toEqual([]);
  });

  it('sync rewrites only the block: the prose and blocks after it stay', () => {
    const text = `intro\n${marker}\n\`\`\`bash\nold\n\`\`\`\n\nprose\n\n\`\`\`js\nother()\n\`\`\`\n${marker}\n\`\`\`bash\n\`\`\`\ntail\n`;
    expect(syncedText('x.md', text, read)).toBe(
      `intro\n${marker}\n\`\`\`bash\ncurl me\n\`\`\`\n\nprose\n\n\`\`\`js\nother()\n\`\`\`\n${marker}\n\`\`\`bash\ncurl me\n\`\`\`\ntail\n`,
    );
    // An unclosed block is refused rather than swallowing the text up to the next fence.
    expect(() => syncedText('x.md', `${marker}\n\`\`\`bash\nold\n\nprose\n`, read)).toThrow(/no closing/);
    expect(() => syncedText('x.md', `${marker}\n\`\`\`bash\n\`\`\`\n`, () => 'a\n```\nb\n')).toThrow(/```/);
  });
});
