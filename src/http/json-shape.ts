// The shape of a JSON body, measured on its bytes before JSON.parse builds anything. What a parse
// costs is not its size but what it builds: 64 MiB of `[{},{},…]` took JSON.parse 10 s and
// 1.4 GiB of heap (22M objects), and one object of 2M keys made every later walk of it (Object.keys,
// Object.entries) super-linear: 2M unused GraphQL variables held the process 20-30 s. One linear
// pass counts what a parse would build and refuses the body at the first limit passed; string
// contents are skipped natively. docs/api.md, "Limits".

/** Keys of any one object. The largest legitimate one is a nested metadata object: 16 KiB holds ~2,350. */
export const MAX_JSON_OBJECT_KEYS = 10_000;

/**
 * Objects and arrays of a body: one per this many bytes of it. A contact is one object, its
 * metadata another, in at least ~60 bytes; `{}` is 2 bytes and ~64 bytes of heap.
 */
export const JSON_BYTES_PER_CONTAINER = 16;

/** Objects and arrays any body may hold, however short. */
export const MIN_JSON_CONTAINERS = 10_000;

export interface JsonShapeLimits {
  depth: number;
  objectKeys: number;
  containers: number;
}

export type JsonShapeProblem = 'depth' | 'objectKeys' | 'containers';

/** The limits for a body of `byteLength` bytes. */
export function jsonShapeLimits(byteLength: number, depth: number): JsonShapeLimits {
  return { depth, objectKeys: MAX_JSON_OBJECT_KEYS, containers: Math.max(MIN_JSON_CONTAINERS, Math.floor(byteLength / JSON_BYTES_PER_CONTAINER)) };
}

/**
 * The first limit the JSON text in `bytes` passes, or null. Not a validator: text JSON.parse would
 * refuse may pass (and is refused by it), but never costs more than one pass.
 */
export function jsonShapeProblem(bytes: Uint8Array, limits: JsonShapeLimits): JsonShapeProblem | null {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // Keys seen in each open container; -1 for an array.
  const keys = new Int32Array(limits.depth + 1);
  let depth = 0;
  let containers = 0;
  for (let i = 0; i < buf.length; i++) {
    const b = buf[i];
    if (b === QUOTE) {
      i = stringEnd(buf, i);
      if (i < 0) return null; // unterminated string: JSON.parse refuses it
    } else if (b === 0x7b || b === 0x5b) {
      if (++depth > limits.depth) return 'depth';
      if (++containers > limits.containers) return 'containers';
      keys[depth] = b === 0x7b ? 0 : -1;
    } else if (b === 0x7d || b === 0x5d) {
      if (depth > 0) depth--;
    } else if (b === 0x3a && depth > 0 && keys[depth] >= 0) {
      // Outside strings, each colon of valid JSON ends one key.
      if (++keys[depth] > limits.objectKeys) return 'objectKeys';
    }
  }
  return null;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** Bytes of a string read one by one before the rest is searched natively (a call costs more than a short key). */
const INLINE_BYTES = 64;

/** Where the string opened at `open` ends (its closing quote), or -1. */
function stringEnd(buf: Buffer, open: number): number {
  let j = open + 1;
  for (;;) {
    const stop = Math.min(buf.length, j + INLINE_BYTES);
    for (; j < stop; j++) {
      const c = buf[j];
      if (c === QUOTE) return j;
      if (c === BACKSLASH) j++;
    }
    if (j >= buf.length) return -1;
    // j starts no escape: the backslashes right before the next quote, from j on, say whether it ends the string.
    const q = buf.indexOf(QUOTE, j);
    if (q < 0) return -1;
    let k = q - 1;
    while (k >= j && buf[k] === BACKSLASH) k--;
    if ((q - 1 - k) % 2 === 0) return q;
    j = q + 1;
  }
}

/** The problem as the end of a sentence whose subject is the body ("Request body …", "JSON …"). */
export function jsonShapeMessage(problem: JsonShapeProblem, limits: JsonShapeLimits): string {
  switch (problem) {
    case 'depth':
      return `is nested too deeply (max depth ${limits.depth})`;
    case 'objectKeys':
      return `has an object with more than ${limits.objectKeys} keys`;
    default:
      return `has more than ${limits.containers} objects and arrays (at most one per ${JSON_BYTES_PER_CONTAINER} bytes, or ${MIN_JSON_CONTAINERS})`;
  }
}

/** What is wrong with the shape of the JSON in `bytes`, as the end of a sentence about it, or null. */
export function jsonShapeFault(bytes: Uint8Array, maxDepth: number): string | null {
  const limits = jsonShapeLimits(bytes.byteLength, maxDepth);
  const problem = jsonShapeProblem(bytes, limits);
  return problem && jsonShapeMessage(problem, limits);
}
