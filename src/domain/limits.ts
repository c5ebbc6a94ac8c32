// The size of every value a client (or a provider) can make us store. docs/api.md, "Limits", lists
// them with the error each one gives; the database stays small when data compresses, so these,
// not the storage limits, are what keep a page of rows small in the process's memory.

/** The largest integer the API carries: GraphQL's Int, and the database's 32-bit integer columns. */
export const MAX_INT = 2_147_483_647;

/** Identifiers and names: agent/version/DID ids and names, voice, contact_id, contact name. */
export const MAX_NAME_LENGTH = 255;
export const MAX_PHONE_NUMBER_LENGTH = 64;
/** `schedule_timezone` labels such as `America/New_York (EST, UTC-05:00)`. */
export const MAX_TIMEZONE_LENGTH = 100;
export const MAX_EMAIL_LENGTH = 320;
export const MAX_PROMPT_LENGTH = 32_768;
/** An account's catalogue, so that its unpaged lists stay bounded (1,000 prompts ≈ 32 MB at most). */
export const MAX_AGENTS_PER_ACCOUNT = 500;
export const MAX_PROMPT_VERSIONS_PER_ACCOUNT = 1_000;
export const MAX_DID_NUMBERS_PER_ACCOUNT = 500;
export const MAX_OUTCOME_KEYS = 50;
export const MAX_OUTCOME_KEY_LENGTH = 100;
export const MAX_VOICES = 100;

export interface MetadataLimits {
  /** Top-level keys. */
  keys: number;
  /** Characters of any key, at any depth. */
  keyLength: number;
  /** Characters of any string value, at any depth. */
  valueLength: number;
  /** UTF-8 bytes of the compact JSON text (escapes not counted). */
  bytes: number;
}

export const CONTACT_METADATA_LIMITS: MetadataLimits = { keys: 50, keyLength: 100, valueLength: 2_000, bytes: 8_192 };
export const BATCH_METADATA_LIMITS: MetadataLimits = { keys: 50, keyLength: 100, valueLength: 2_000, bytes: 16_384 };

/**
 * What a provider (or the simulator) reports about a call is cut to these lengths (UTF-16 units)
 * when stored, so one call record holds at most ~145,000 characters of text (a transcript of about
 * two hours of talk), and a page of 200 is bounded whatever was said.
 */
export const MAX_TRANSCRIPT_LENGTH = 131_072;
export const MAX_SUMMARY_LENGTH = 10_000;
export const MAX_OUTCOME_VALUE_LENGTH = 1_000;
export const MAX_PROVIDER_TEXT_LENGTH = 255;

const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * Characters as pydantic counts them (code points, not UTF-16 units). It does not scan a string
 * that is clearly longer than `cap` (a code point is at most two UTF-16 units).
 */
export function charLength(value: string, cap: number): number {
  if (value.length > 2 * cap) return value.length;
  // Without surrogates each unit is a code point; the native test spares the iterator (per contact field).
  if (!SURROGATE.test(value)) return value.length;
  let length = 0;
  for (const _ of value) length++;
  return length;
}

/** `<field>: String should have at most N characters` for each value over its limit. */
export function tooLongDetails(fields: ReadonlyArray<readonly [field: string, value: string | null | undefined, max: number]>): string[] {
  return fields
    .filter(([, value, max]) => typeof value === 'string' && charLength(value, max) > max)
    .map(([field, , max]) => `${field}: String should have at most ${max} characters`);
}

/** `text` cut to `max` UTF-16 units, never through a surrogate pair; null/undefined as null. */
export function truncateText(text: string | null | undefined, max: number): string | null {
  if (text == null) return null;
  if (text.length <= max) return text;
  const end = /[\uD800-\uDBFF]/.test(text.charAt(max - 1)) ? max - 1 : max;
  return text.slice(0, end);
}

/** Extracted outcomes within the outcome limits: the first keys, keys and values cut. */
export function boundOutcomes(outcomes: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  let n = 0;
  for (const key in outcomes) {
    if (++n > MAX_OUTCOME_KEYS) break;
    const value = outcomes[key];
    out[truncateText(key, MAX_OUTCOME_KEY_LENGTH)!] = typeof value === 'string' ? truncateText(value, MAX_OUTCOME_VALUE_LENGTH)! : value;
  }
  return out;
}

/** The do-not-call list (docs/api.md, "Do-not-call list"). */
export const MAX_SUPPRESSION_REASON_LENGTH = 500;
export const MAX_SUPPRESSIONS_PER_REQUEST = 1_000;
export const MAX_SUPPRESSIONS_PER_ACCOUNT = 1_000_000;
