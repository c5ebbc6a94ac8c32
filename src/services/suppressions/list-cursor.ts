// The do-not-call list's keyset cursor: the last entry of a page (its created_at and number) and
// the number of the page it leads to. Opaque to clients (base64url of JSON); a cursor is read only
// against the asking account's rows, so a forged one can only skip around that account's own list.
import { MAX_PHONE_NUMBER_LENGTH } from '../../domain/limits.ts';
import { MAX_PAGE } from '../pagination.ts';

export interface ListPosition {
  /** created_at of the last entry read, in ms. */
  createdAtMs: number;
  phoneNumber: string;
  /** The page number the next page reports. */
  page: number;
}

/** Longer than any cursor this module writes (~100 characters). */
export const MAX_CURSOR_LENGTH = 256;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
// Years 0001-9999, as every stored timestamp.
const FIRST_MS = -62135596800000;
const LAST_MS = 253402300799999;

export function encodeCursor(p: ListPosition): string {
  return Buffer.from(JSON.stringify([p.createdAtMs, p.phoneNumber, p.page])).toString('base64url');
}

/** The position a cursor names, or null for anything this module did not write. */
export function decodeCursor(raw: string): ListPosition | null {
  if (raw.length > MAX_CURSOR_LENGTH || !BASE64URL.test(raw)) return null;
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (!Array.isArray(v) || v.length !== 3) return null;
  const [ms, phone, page] = v as unknown[];
  if (!Number.isInteger(ms) || (ms as number) < FIRST_MS || (ms as number) > LAST_MS) return null;
  if (typeof phone !== 'string' || phone.length === 0 || phone.length > MAX_PHONE_NUMBER_LENGTH) return null;
  if (!Number.isInteger(page) || (page as number) < 2 || (page as number) > MAX_PAGE) return null;
  return { createdAtMs: ms as number, phoneNumber: phone, page: page as number };
}
