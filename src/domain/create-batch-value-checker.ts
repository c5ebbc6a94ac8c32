// The create request's value checks, worded as the contract's (pydantic v2) messages, collected
// capped in the contract's field order.
import type { IssuePath } from './field-issue.ts';
import { CappedIssues } from './capped-issues.ts';
import { exceedsDepth, isPlainRecord, MAX_METADATA_DEPTH, metadataSizeProblem, sanitizeJson } from './metadata.ts';
import { charLength, MAX_INT, type MetadataLimits } from './limits.ts';
import { isListedZone, isZone } from './zones.ts';
import { CREATE_BATCH_FIELD_ORDER, MAX_STRING_LENGTH, MAX_UNLISTED_CONTACT_ZONES } from './create-batch-fields.ts';

/** The path of the request's own fields. */
export const ROOT: IssuePath = [];

/**
 * Checks well-typed values, collecting "<path>: <reason>" issues. Each check returns null both for
 * an absent value (null or undefined: nothing to check) and for a failure.
 */
export class ValueChecker {
  readonly issues = new CappedIssues(CREATE_BATCH_FIELD_ORDER);
  /** A required value was missing: its surface reported it, so the request cannot pass. */
  incomplete = false;
  /** Contact zone names outside the runtime's list, lower-cased. */
  private readonly unlistedZones = new Set<string>();

  present<T>(value: T | undefined): T {
    if (value === undefined) this.incomplete = true;
    return value as T;
  }

  fail(at: IssuePath, field: string, reason: string): null {
    this.issues.add([...at, field], reason);
    return null;
  }

  text(at: IssuePath, field: string, value: string | null | undefined, o: { min?: number; max?: number } = {}): string | null {
    if (value == null) return null;
    const max = Math.min(o.max ?? MAX_STRING_LENGTH, MAX_STRING_LENGTH);
    const length = charLength(value, max);
    if (o.min !== undefined && length < o.min) {
      return this.fail(at, field, `String should have at least ${o.min} ${o.min === 1 ? 'character' : 'characters'}`);
    }
    if (length > max) return this.fail(at, field, `String should have at most ${max} characters`);
    return value;
  }

  /**
   * A contact's own zone. A name outside the runtime's list may cost ~75 µs to check (zones.ts), so
   * a request names at most MAX_UNLISTED_CONTACT_ZONES distinct ones, told apart as Intl reads them:
   * in any case.
   */
  contactZone(at: IssuePath, field: string, value: string | undefined): string | null {
    const zone = this.text(at, field, value, { max: 64 });
    if (zone === null || isListedZone(zone)) return zone;
    const key = zone.toLowerCase();
    if (!this.unlistedZones.has(key) && this.unlistedZones.size >= MAX_UNLISTED_CONTACT_ZONES) {
      return this.fail(
        at,
        field,
        `Value error, more than ${MAX_UNLISTED_CONTACT_ZONES} distinct time zones that are not canonical IANA names (such as US/Eastern or +05:00)`,
      );
    }
    this.unlistedZones.add(key);
    return isZone(zone) ? zone : this.fail(at, field, `Value error, Unknown time zone '${zone}'`);
  }

  /** Optional text where blank means "not given" (legacy forms send "" for unset fields). */
  optionalText(at: IssuePath, field: string, value: string | null | undefined, max?: number): string | null {
    const text = this.text(at, field, value, { max });
    return text !== null && text.trim() !== '' ? text : null;
  }

  formatted(at: IssuePath, field: string, value: string | undefined, isValid: (value: string) => boolean, message: string): string | null {
    const text = this.text(at, field, value);
    if (text === null) return null;
    return isValid(text) ? text : this.fail(at, field, `Value error, ${message}`);
  }

  integer(at: IssuePath, field: string, value: number | null | undefined, min: number, max: number = MAX_INT): number | null {
    if (value == null) return null;
    if (value < min) return this.fail(at, field, `Input should be greater than or equal to ${min}`);
    const limit = Math.min(max, MAX_INT);
    if (value > limit) return this.fail(at, field, `Input should be less than or equal to ${limit}`);
    return value;
  }

  /** Optional JSON object within `limits`, copied without prototype-polluting keys. */
  metadata(at: IssuePath, field: string, value: unknown, limits: MetadataLimits): Record<string, unknown> | null {
    const sized = this.sizedMetadata(at, field, value, limits);
    if (sized?.problem) return this.fail(at, field, `Value error, ${sized.problem}`);
    return sized ? (sanitizeJson(sized.value) as Record<string, unknown>) : null;
  }

  /**
   * Optional JSON object, not yet copied, with the way it breaks `limits` (left to the caller to
   * report). The size walk stops at the limits, so only a value within them is walked for depth.
   */
  sizedMetadata(
    at: IssuePath,
    field: string,
    value: unknown,
    limits: MetadataLimits,
  ): { value: Record<string, unknown>; problem: string | null } | null {
    if (value == null) return null;
    if (!isPlainRecord(value)) return this.fail(at, field, 'Input should be a valid dictionary');
    const problem = metadataSizeProblem(value, limits);
    if (problem) return { value, problem };
    if (exceedsDepth(value, MAX_METADATA_DEPTH)) {
      return this.fail(at, field, `Value error, metadata is nested too deeply (max depth ${MAX_METADATA_DEPTH})`);
    }
    return { value, problem: null };
  }
}
