// A statement kept in a .sql file with named parameters (:batch_ids), turned once, when its module
// loads, into the positional form ($1) both drivers take: pg and PGlite then run the same text as
// before, and a call only orders its values (no parsing per run).
//
// Read as parameters: `:name` outside comments, string literals, quoted identifiers and
// dollar-quoted bodies, where a name is a letter or _ then letters, digits or _. Not read: `::`
// (a cast) and `:=`. An array slice with a named bound (`a[1:n]`) would be read as one, so the
// files use none. A positional `$1` in the file is refused: one statement, one style.
import { readFileSync } from 'node:fs';

export interface NamedSql<N extends string> {
  /** The text with $1…$n in place of the names, comments and layout kept. */
  readonly text: string;
  /** The names in parameter order: names[0] is $1. */
  readonly names: readonly N[];
  /** The values in parameter order; every name must have one (null included, undefined not). */
  params(values: Readonly<Record<N, unknown>>): unknown[];
}

/**
 * `source` turned positional. `declared` lists every name it uses, no more: a name misspelt on
 * either side fails here, when the module loads, not on the first run.
 */
export function namedSql<const N extends string>(source: string, declared: readonly N[]): NamedSql<N> {
  const { text, names } = toPositional(source);
  const missing = declared.filter((n) => !names.includes(n));
  const undeclared = names.filter((n) => !(declared as readonly string[]).includes(n));
  if (missing.length > 0 || undeclared.length > 0) {
    throw new Error(`named SQL: declared but not used: [${missing.join(', ')}]; used but not declared: [${undeclared.join(', ')}]`);
  }
  const ordered = names as N[];
  return {
    text,
    names: ordered,
    params(values) {
      return ordered.map((n) => {
        const v = values[n];
        if (v === undefined) throw new Error(`named SQL: no value for :${n}`);
        return v;
      });
    },
  };
}

/**
 * The .sql file at `url` (a sibling of the calling module: `new URL('./x.sql', import.meta.url)`),
 * read synchronously once at load, as tsx and vitest run the sources in place.
 */
export function loadNamedSql<const N extends string>(url: URL, declared: readonly N[]): NamedSql<N> {
  return namedSql(readFileSync(url, 'utf8'), declared);
}

const NAME_START = /[A-Za-z_]/;
const NAME_PART = /[A-Za-z0-9_]/;

/** The text with each distinct name numbered in order of first use; a name used again keeps its number. */
export function toPositional(source: string): { text: string; names: string[] } {
  const names: string[] = [];
  let out = '';
  let i = 0;
  while (i < source.length) {
    const end = skipQuoted(source, i);
    if (end > i) {
      out += source.slice(i, end);
      i = end;
      continue;
    }
    const ch = source[i];
    if (ch === ':' && source[i + 1] === ':') {
      out += '::';
      i += 2;
    } else if (ch === ':' && NAME_START.test(source[i + 1] ?? '')) {
      let j = i + 2;
      while (j < source.length && NAME_PART.test(source[j])) j++;
      const name = source.slice(i + 1, j);
      let n = names.indexOf(name);
      if (n < 0) n = names.push(name) - 1;
      out += `$${n + 1}`;
      i = j;
    } else if (ch === '$' && /[0-9]/.test(source[i + 1] ?? '') && !(i > 0 && NAME_PART.test(source[i - 1]))) {
      throw new Error(`named SQL: positional parameter at offset ${i}; use a :name`);
    } else {
      out += ch;
      i++;
    }
  }
  return { text: out, names };
}

/** The end of a comment, literal, quoted identifier or dollar-quoted body starting at `i`; `i` when none does. */
function skipQuoted(s: string, i: number): number {
  const ch = s[i];
  const next = s[i + 1];
  if (ch === '-' && next === '-') {
    const eol = s.indexOf('\n', i);
    return eol < 0 ? s.length : eol;
  }
  if (ch === '/' && next === '*') return blockCommentEnd(s, i);
  if (ch === "'") return quotedEnd(s, i, "'", isEscapeString(s, i));
  if (ch === '"') return quotedEnd(s, i, '"', false);
  if (ch === '$') {
    const tag = /^\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$/.exec(s.slice(i, i + 66));
    // `$1` is a positional parameter, not a tag; an identifier may contain $ (a$b): not a tag either.
    if (tag && !(i > 0 && NAME_PART.test(s[i - 1]))) {
      const close = s.indexOf(tag[0], i + tag[0].length);
      if (close < 0) throw new Error(`named SQL: unterminated dollar quote ${tag[0]} at offset ${i}`);
      return close + tag[0].length;
    }
  }
  return i;
}

/** Block comments nest in PostgreSQL. */
function blockCommentEnd(s: string, i: number): number {
  let depth = 0;
  let j = i;
  while (j < s.length) {
    if (s[j] === '/' && s[j + 1] === '*') {
      depth++;
      j += 2;
    } else if (s[j] === '*' && s[j + 1] === '/') {
      depth--;
      j += 2;
      if (depth === 0) return j;
    } else j++;
  }
  throw new Error(`named SQL: unterminated comment at offset ${i}`);
}

/** E'…' takes backslash escapes; a plain '…' only doubled quotes. */
function isEscapeString(s: string, quote: number): boolean {
  return quote > 0 && (s[quote - 1] === 'E' || s[quote - 1] === 'e') && !(quote > 1 && NAME_PART.test(s[quote - 2]));
}

function quotedEnd(s: string, i: number, q: string, backslash: boolean): number {
  let j = i + 1;
  while (j < s.length) {
    if (backslash && s[j] === '\\') j += 2;
    else if (s[j] === q && s[j + 1] === q) j += 2;
    else if (s[j] === q) return j + 1;
    else j++;
  }
  throw new Error(`named SQL: unterminated ${q} quote at offset ${i}`);
}
