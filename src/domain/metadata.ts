// Metadata is caller-supplied JSON that ends up in the database, in transcripts and in
// webhook payloads, so every copy we hand on is rebuilt from scratch without the keys that
// JavaScript object merges treat specially.
import { charLength, type MetadataLimits } from './limits.ts';

const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

export const MAX_METADATA_DEPTH = 8;

/**
 * The first way `value` breaks `limits` (docs/api.md, "Limits"), or null. One iterative walk that
 * stops as soon as the byte budget is spent, so its cost is bounded by the limits, not the input:
 * no string longer than the value limit is measured, and no more than `bytes` worth of nodes is
 * visited.
 */
export function metadataSizeProblem(value: Record<string, unknown>, limits: MetadataLimits): string | null {
  let keys = 0;
  for (const _ in value) if (++keys > limits.keys) return `metadata has more than ${limits.keys} keys`;
  let bytes = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const node = pending.pop();
    if (typeof node === 'string') {
      if (charLength(node, limits.valueLength) > limits.valueLength) return `metadata value longer than ${limits.valueLength} characters`;
      bytes += Buffer.byteLength(node, 'utf8') + 2;
    } else if (Array.isArray(node)) {
      bytes += 1 + Math.max(1, node.length);
      for (let i = 0; i < node.length && bytes <= limits.bytes; i++) pending.push(node[i]);
    } else if (isPlainRecord(node)) {
      bytes += 2;
      for (const key in node) {
        if (charLength(key, limits.keyLength) > limits.keyLength) return `metadata key longer than ${limits.keyLength} characters`;
        bytes += Buffer.byteLength(key, 'utf8') + 4;
        if (bytes > limits.bytes) break;
        pending.push(node[key]);
      }
    } else {
      bytes += String(node).length;
    }
    if (bytes > limits.bytes) return `metadata is larger than ${limits.bytes} bytes`;
  }
  return null;
}

export function isForbiddenKey(key: string): boolean {
  return FORBIDDEN_KEYS.has(key);
}

export function isPlainRecord(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * 'Phone Number', 'phone_number', 'phoneNumber', 'PHONE-NUMBER' -> 'phone_number'.
 * A key with no letter or digit at all is kept verbatim, so that distinct punctuation-only
 * keys do not collapse into one empty key and lose data.
 */
export function normalizeMetadataKey(key: string): string {
  // Contacts of one batch repeat the same few keys, and the Unicode regexes below cost ~3µs a key.
  const cached = keyCache.get(key);
  if (cached !== undefined) return cached;
  const words = key
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2') // camelCase boundary
    .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1 $2') // end of an acronym: 'XMLHttp' -> 'XML Http'
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word.length > 0);
  const normalized = words.length === 0 ? key : words.join('_').toLowerCase();
  // Bounded, so hostile payloads with endless distinct keys cannot grow it without limit.
  if (keyCache.size >= KEY_CACHE_SIZE) keyCache.clear();
  if (key.length <= 200) keyCache.set(key, normalized);
  return normalized;
}

const KEY_CACHE_SIZE = 10_000;
const keyCache = new Map<string, string>();

/** True when `value` has containers nested deeper than `maxDepth` (the value itself is level 1). */
export function exceedsDepth(value: unknown, maxDepth: number = MAX_METADATA_DEPTH): boolean {
  // Iterative, and it stops descending one level past the limit, so hostile nesting can neither
  // exhaust the stack nor make the walk expensive. No closures: this runs once per contact.
  const pending: Array<[unknown, number]> = [[value, 1]];
  while (pending.length > 0) {
    const [node, depth] = pending.pop()!;
    if (!isContainer(node)) continue;
    if (depth > maxDepth) return true;
    const children: unknown[] = Array.isArray(node) ? node : Object.values(node);
    for (const child of children) if (isContainer(child)) pending.push([child, depth + 1]);
  }
  return false;
}

/**
 * Deep copy of JSON data with forbidden keys dropped at every depth. Iterative, because
 * callers are not forced to depth-check first. Input must be acyclic (JSON always is).
 */
export function sanitizeJson(value: unknown): unknown {
  if (!isContainer(value)) return value;
  const root = emptyLike(value);
  const pending: Array<[Record<string, unknown> | unknown[], Record<string, unknown> | unknown[]]> = [[value, root]];
  while (pending.length > 0) {
    const [source, target] = pending.pop()!;
    const keys: Array<string | number> = Array.isArray(source) ? Array.from(source.keys()) : Object.keys(source);
    for (const key of keys) {
      if (typeof key === 'string' && isForbiddenKey(key)) continue;
      const item = (source as Record<string | number, unknown>)[key];
      const copy = isContainer(item) ? emptyLike(item) : item;
      (target as Record<string | number, unknown>)[key] = copy;
      if (copy !== item) pending.push([item as Record<string, unknown> | unknown[], copy as Record<string, unknown> | unknown[]]);
    }
  }
  return root;
}

/**
 * `value` itself when no key at any depth is forbidden, else sanitizeJson's copy: for values only
 * read afterwards (a checked contact's metadata is read, and renamed into a new object), so that a
 * 100k-contact batch does not hold a second copy of all its metadata (bench/create-batch).
 */
export function sanitizedJson(value: unknown): unknown {
  return hasForbiddenKey(value) ? sanitizeJson(value) : value;
}

function hasForbiddenKey(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const node = pending.pop();
    if (Array.isArray(node)) {
      for (const item of node) if (isContainer(item)) pending.push(item);
    } else if (isPlainRecord(node)) {
      for (const key in node) {
        if (isForbiddenKey(key)) return true;
        const item = node[key];
        if (isContainer(item)) pending.push(item);
      }
    }
  }
  return false;
}

/** Top-level keys normalised (first occurrence wins); nested values sanitised, keys kept. */
export function normalizeMetadata(obj: Record<string, unknown>): Record<string, unknown> {
  return renameKeys(obj, sanitizeJson);
}

/**
 * The same for metadata already sanitised (sanitizedJson's output, as a checked contact's is): its
 * values are kept as they are instead of being copied again.
 */
export function normalizeSanitizedMetadata(obj: Record<string, unknown>): Record<string, unknown> {
  return renameKeys(obj, (value) => value);
}

function renameKeys(obj: Record<string, unknown>, valueOf: (value: unknown) => unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const rawKey in obj) {
    if (!Object.hasOwn(obj, rawKey) || isForbiddenKey(rawKey)) continue;
    const key = normalizeMetadataKey(rawKey);
    // 'Constructor' or 'PROTOTYPE' only become dangerous after normalisation.
    if (isForbiddenKey(key) || Object.hasOwn(out, key)) continue;
    out[key] = valueOf(obj[rawKey]);
  }
  return out;
}

function isContainer(value: unknown): value is Record<string, unknown> | unknown[] {
  return Array.isArray(value) || isPlainRecord(value);
}

function emptyLike(value: Record<string, unknown> | unknown[]): Record<string, unknown> | unknown[] {
  return Array.isArray(value) ? new Array<unknown>(value.length) : {};
}
