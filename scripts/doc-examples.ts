// Examples in the docs are files: a block marked `<!-- example: docs/examples/x.sh -->` shows
// that file verbatim, so the markdown cannot drift from what the tests run.
import fs from 'node:fs';
import path from 'node:path';

export const root = path.resolve(import.meta.dirname, '..');

/** The markdown files that may show examples. */
export function markdownFiles(): string[] {
  const docs = fs.readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`);
  return ['README.md', ...docs, 'examples/graphql-client/README.md'].filter((f) => fs.existsSync(path.join(root, f)));
}

// The marker, then a fenced block; the block's text is everything between the fences.
const MARKED_BLOCK = /<!-- example: (\S+) -->\n```[a-z]*\n([\s\S]*?)^```$/gm;

export interface MarkedBlock {
  doc: string;
  file: string;
  shown: string;
}

export function markedBlocks(doc: string): MarkedBlock[] {
  const text = fs.readFileSync(path.join(root, doc), 'utf8');
  return [...text.matchAll(MARKED_BLOCK)].map((m) => ({ doc, file: m[1], shown: m[2] }));
}

/** Rewrites every marked block of `doc` with its file's text; returns whether anything changed. */
export function syncDoc(doc: string): boolean {
  const full = path.join(root, doc);
  const before = fs.readFileSync(full, 'utf8');
  const after = before.replace(MARKED_BLOCK, (block, file: string, shown: string) => {
    const text = fs.readFileSync(path.join(root, file), 'utf8');
    return block.slice(0, block.length - shown.length - 3) + text + '```';
  });
  if (after !== before) fs.writeFileSync(full, after);
  return after !== before;
}
