// Values PostgreSQL or JavaScript cannot hold faithfully, refused up front with the field's path:
// NUL (text and jsonb reject \u0000, which would surface as a 500 mid-transaction), lone UTF-16
// surrogates (not encodable as UTF-8: the driver would silently store U+FFFD instead), and object
// keys that JavaScript merges treat as the prototype.
const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** At most this many details are reported; one bad field in 100k contacts should not echo 100k lines. */
const MAX_DETAILS = 20;

export const REASON_NUL = 'String should not contain NUL characters (\\u0000)';
export const REASON_SURROGATE = 'String should be valid Unicode (lone surrogate)';
export const REASON_KEY = 'Key is not allowed';

// String.prototype.isWellFormed (Node 20) is in ES2024, past this project's `lib`.
const isWellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

/** Why `s` cannot be stored, or null. */
export function stringProblem(s: string): string | null {
  if (s.includes('\u0000')) return REASON_NUL;
  if (!isWellFormed(s)) return REASON_SURROGATE;
  return null;
}

function join(path: string, key: string | number): string {
  return path ? `${path}.${key}` : String(key);
}

/**
 * Details (`<dotted.path>: <reason>`, the contract's wording style) for every unstorable string
 * or forbidden key in parsed JSON, iteratively (no recursion on caller-controlled depth).
 * `rootName` names the value itself when it is a bare string.
 */
export function jsonHazards(value: unknown, rootPath = '', rootName = 'body'): string[] {
  const details: string[] = [];
  const stack: Array<[unknown, string]> = [[value, rootPath]];
  while (stack.length && details.length < MAX_DETAILS) {
    const [node, path] = stack.pop()!;
    if (typeof node === 'string') {
      const problem = stringProblem(node);
      if (problem) details.push(`${path || rootName}: ${problem}`);
    } else if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) stack.push([node[i], join(path, i)]);
    } else if (node !== null && typeof node === 'object') {
      const entries = Object.entries(node);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i];
        const keyProblem = FORBIDDEN_KEYS.has(key) ? REASON_KEY : stringProblem(key);
        if (keyProblem) details.push(`${join(path, key)}: ${keyProblem}`);
        else stack.push([child, join(path, key)]);
      }
    }
  }
  return details.slice(0, MAX_DETAILS);
}

/**
 * False when JSON text cannot parse to anything jsonHazards would report, so large ordinary bodies
 * skip the walk: strict UTF-8 decoding leaves no raw surrogate, JSON.parse refuses raw control
 * characters, so NUL and lone surrogates arrive only as \u escapes - which can also spell a
 * forbidden key, otherwise visible as itself.
 */
export function textMayHoldHazards(jsonText: string): boolean {
  return /\\u|__proto__|constructor|prototype/.test(jsonText);
}

/** Query-string problems as `query.<name>: <reason>` (URL decoding already replaced bad UTF-8). */
export function queryHazards(query: URLSearchParams): string[] {
  const details: string[] = [];
  for (const [name, value] of query) {
    const problem = stringProblem(name) ?? stringProblem(value);
    if (problem) details.push(`query.${name}: ${problem}`);
    if (details.length >= MAX_DETAILS) break;
  }
  return details;
}
