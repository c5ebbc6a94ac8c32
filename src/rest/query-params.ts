// Query-string parsing for the REST facade: strings in, typed GraphQL variables out, or the
// contract's 422 envelope with pydantic-worded `query.<name>: <reason>` details. Every problem of
// the request is reported at once, as the original service did.
import { DateTime } from 'luxon';
import { clampBound, MAX_PAGE, reasons, throwIfIssues, type FieldIssue } from '../services/pagination.ts';
import { parseUtcDay } from '../services/calls/list-call-records.ts';

const INTEGER = /^[+-]?\d+$/;

/** Why `value` is not an ISO 8601 datetime (speedate's wording), or null when it is one. */
function datetimeProblem(value: string): string | null {
  const day = parseUtcDay(value.slice(0, 10));
  if ('reason' in day) return day.reason.replace(/^.*?YYYY-MM-DD, /, '');
  if (value.length === 10) return null;
  if (!/[Tt_ ]/.test(value[10])) return 'invalid datetime separator, expected `T`, `t`, `_` or space';
  const m = /^(\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(Z|z|[+-]\d{2}(?::?\d{2})?)?$/.exec(value.slice(11));
  if (!m) {
    const time = value.slice(11);
    if (!/^\d{2}/.test(time)) return 'invalid character in hour';
    if (time[2] !== ':') return 'invalid time separator, expected `:`';
    if (!/^\d{2}$/.test(time.slice(3, 5))) return 'invalid character in minute';
    return 'invalid timezone sign';
  }
  if (Number(m[1]) > 23) return 'hour value is outside expected range of 0-23';
  if (Number(m[2]) > 59) return 'minute value is outside expected range of 0-59';
  if (m[3] !== undefined && Number(m[3]) > 59) return 'second value is outside expected range of 0-59';
  // luxon would read +99:99 as an offset of 100:39 hours.
  const offset = /^[+-](\d{2}):?(\d{2})?$/.exec(m[5] ?? '');
  if (offset && Number(offset[1]) > 23) return 'timezone offset must be less than 24 hours';
  if (offset && Number(offset[2] ?? 0) > 59) return 'timezone offset minute value is outside expected range of 0-59';
  return null;
}

/** ISO 8601 with offset or Z; without one the value is read as UTC. A bare date is its midnight. */
export function parseIsoDatetime(value: string): Date | null {
  if (datetimeProblem(value) !== null) return null;
  const normalized = value.length === 10 ? value : value.slice(0, 10) + 'T' + value.slice(11).replace(',', '.');
  const dt = DateTime.fromISO(normalized, { zone: 'utc', setZone: true });
  return dt.isValid ? dt.toJSDate() : null;
}

export class QueryReader {
  readonly issues: FieldIssue[] = [];
  constructor(private readonly query: URLSearchParams) {}

  /** Repeated scalar parameters: the last one wins (Starlette's QueryParams). */
  private raw(name: string): string | undefined {
    const all = this.query.getAll(name);
    return all.length ? all[all.length - 1] : undefined;
  }

  string(name: string): string | undefined {
    return this.raw(name);
  }

  strings(name: string): string[] {
    return this.query.getAll(name);
  }

  int(name: string, range: { min: number; max?: number | null }): number | undefined {
    const v = this.raw(name);
    if (v === undefined) return undefined;
    const trimmed = v.trim();
    if (!INTEGER.test(trimmed)) {
      this.issues.push({ field: name, reason: reasons.integer });
      return undefined;
    }
    const n = Number(trimmed);
    // Beyond a GraphQL Int nothing can be served; pages get the explicit bound.
    const max = range.max ?? MAX_PAGE;
    if (n < range.min) this.issues.push({ field: name, reason: reasons.ge(range.min) });
    else if (n > max) this.issues.push({ field: name, reason: reasons.le(max) });
    else return n;
    return undefined;
  }

  page(name = 'page'): number | undefined {
    return this.int(name, { min: 1, max: MAX_PAGE });
  }

  oneOf<T extends string>(name: string, values: readonly T[]): T | undefined {
    const v = this.raw(name);
    if (v === undefined) return undefined;
    if (!(values as readonly string[]).includes(v)) {
      this.issues.push({ field: name, reason: reasons.oneOf(values) });
      return undefined;
    }
    return v as T;
  }

  /** ISO 8601 timestamp, returned as ISO UTC (years 0001–9999) for the GraphQL DateTime variable. */
  datetime(name: string): string | undefined {
    const v = this.raw(name);
    if (v === undefined) return undefined;
    const problem = datetimeProblem(v);
    const parsed = problem === null ? parseIsoDatetime(v) : null;
    if (!parsed) {
      this.issues.push({ field: name, reason: `Input should be a valid datetime, ${problem ?? 'invalid datetime'}` });
      return undefined;
    }
    // A bound in year 0 or 10000 once in UTC means "from the beginning" / "until the end".
    return clampBound(parsed).toISOString();
  }

  /** `YYYY-MM-DD`, passed on as written (the service interprets it as a UTC day). */
  date(name: string, opts: { required: boolean }): string | undefined {
    const v = this.raw(name);
    if (v === undefined) {
      if (opts.required) this.issues.push({ field: name, reason: reasons.required });
      return undefined;
    }
    const parsed = parseUtcDay(v);
    if ('reason' in parsed) {
      this.issues.push({ field: name, reason: parsed.reason });
      return undefined;
    }
    return v;
  }

  /** Throws the 422 envelope when any parameter was bad. */
  done(): void {
    throwIfIssues(this.issues, 'query.');
  }
}
