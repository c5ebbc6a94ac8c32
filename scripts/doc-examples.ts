// Examples in the docs are files: a block marked `<!-- example: docs/examples/x.sh -->` shows
// that file verbatim, so the markdown cannot drift from what the tests run.
import fs from 'node:fs';
import path from 'node:path';

export const root = path.resolve(import.meta.dirname, '..');

/** The markdown files that may show examples. */
export function markdownFiles(): string[] {
  const docs = fs
    .readdirSync(path.join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`);
  return ['README.md', ...docs, 'examples/graphql-client/README.md'].filter((f) => fs.existsSync(path.join(root, f)));
}

const MARKER_START = '<!-- example:';
const MARKER = /^<!-- example: (\S+) -->$/;
const OPENING_FENCE = /^```[\w-]*$/;
const CLOSING_FENCE = '```';

export interface MarkedBlock {
  doc: string;
  file: string;
  shown: string;
  /** Line indexes (0-based) of the block's opening and closing fences. */
  open: number;
  close: number;
}

/**
 * Every line that starts a marker must be a whole marker, followed at once by an opening fence and,
 * further on, a closing fence: anything else throws, so no marker is silently skipped and no
 * sync runs past its block. One pass over the lines.
 */
export function parseMarkedBlocks(doc: string, text: string): MarkedBlock[] {
  if (text.includes('\r')) throw new Error(`${doc}: has CR line endings; the docs are LF only`);
  const lines = text.split('\n');
  const blocks: MarkedBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i].startsWith(MARKER_START)) continue;
    const where = `${doc}:${i + 1}`;
    const file = MARKER.exec(lines[i])?.[1];
    if (!file) throw new Error(`${where}: malformed example marker (expected "<!-- example: <file> -->")`);
    if (!OPENING_FENCE.test(lines[i + 1] ?? '')) throw new Error(`${where}: the marker of ${file} is not followed by a \`\`\` fence`);
    let close = i + 2;
    while (close < lines.length && lines[close] !== CLOSING_FENCE) close++;
    if (close === lines.length) throw new Error(`${where}: the block of ${file} has no closing \`\`\` fence`);
    blocks.push({
      doc,
      file,
      shown: lines
        .slice(i + 2, close)
        .map((l) => `${l}\n`)
        .join(''),
      open: i + 1,
      close,
    });
    i = close;
  }
  return blocks;
}

export function markedBlocks(doc: string): MarkedBlock[] {
  return parseMarkedBlocks(doc, fs.readFileSync(path.join(root, doc), 'utf8'));
}

/** Why `text` cannot be shown in a ``` block verbatim (a line that would end it), or null. */
export function unshowable(text: string): string | null {
  if (!text.endsWith('\n')) return 'does not end with a newline';
  if (text.includes('\r')) return 'has CR line endings';
  return text.split('\n').some((l) => l.startsWith(CLOSING_FENCE)) ? 'has a line starting with ```' : null;
}

/** `text` with every marked block replaced by `read(file)`. */
export function syncedText(doc: string, text: string, read: (file: string) => string): string {
  const lines = text.split('\n');
  // From the last block up, so earlier line indexes stay valid.
  for (const b of parseMarkedBlocks(doc, text).reverse()) {
    const content = read(b.file);
    const problem = unshowable(content);
    if (problem) throw new Error(`${b.file} ${problem}: it cannot be shown in ${doc}`);
    lines.splice(b.open + 1, b.close - b.open - 1, ...content.slice(0, -1).split('\n'));
  }
  return lines.join('\n');
}

/** Rewrites every marked block of `doc` with its file's text; returns whether anything changed. */
export function syncDoc(doc: string): boolean {
  const full = path.join(root, doc);
  const before = fs.readFileSync(full, 'utf8');
  const after = syncedText(doc, before, (file) => fs.readFileSync(path.join(root, file), 'utf8'));
  if (after !== before) fs.writeFileSync(full, after);
  return after !== before;
}
