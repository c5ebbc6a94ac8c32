// The original service's validator (pydantic, default lax mode) accepts booleans and integers in
// other JSON types; legacy clients that send "true" or "5" must keep working. Strings are never
// coerced, as there. Reasons are pydantic's wording.

const TRUE_STRINGS = new Set(['1', 'on', 't', 'true', 'y', 'yes']);
const FALSE_STRINGS = new Set(['0', 'off', 'f', 'false', 'n', 'no']);

export type Lax<T> = { ok: true; value: T } | { ok: false; reason: string };

/** bool; 0 / 1 (also 0.0 / 1.0); a string that lower-cased is one of the words above. */
export function laxBoolean(value: unknown): Lax<boolean> {
  if (typeof value === 'boolean') return { ok: true, value };
  if (typeof value === 'number' && (value === 0 || value === 1)) return { ok: true, value: value === 1 };
  if (typeof value === 'string') {
    const word = value.toLowerCase();
    if (TRUE_STRINGS.has(word)) return { ok: true, value: true };
    if (FALSE_STRINGS.has(word)) return { ok: true, value: false };
  }
  if (typeof value === 'string' || typeof value === 'number') {
    return { ok: false, reason: 'Input should be a valid boolean, unable to interpret input' };
  }
  return { ok: false, reason: 'Input should be a valid boolean' };
}

const INTEGER_STRING = /^\s*[+-]?\d+\s*$/;

/** int; a float without a fractional part; a string of digits (surrounding spaces allowed); a bool. */
export function laxInteger(value: unknown): Lax<number> {
  if (typeof value === 'boolean') return { ok: true, value: value ? 1 : 0 };
  if (typeof value === 'string') {
    if (!INTEGER_STRING.test(value)) return { ok: false, reason: 'Input should be a valid integer, unable to parse string as an integer' };
    value = Number(value);
  }
  if (typeof value !== 'number' || !Number.isFinite(value)) return { ok: false, reason: 'Input should be a valid integer' };
  if (!Number.isInteger(value)) return { ok: false, reason: 'Input should be a valid integer, got a number with a fractional part' };
  return { ok: true, value };
}
