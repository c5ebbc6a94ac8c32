// Value spellings shared by every surface.

const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** ISO 8601 UTC with milliseconds and `Z`, so a returned value works as a filter bound. */
export function isoUtc(d: Date | string | null | undefined): string | null {
  if (d == null) return null;
  // Already in this form (GraphQL's DateTime output, mapped again by the REST mappers): kept, as
  // parsing and printing it would give it back unchanged.
  if (typeof d === 'string' && ISO_UTC.test(d)) return d;
  return (d instanceof Date ? d : new Date(d)).toISOString();
}

/** `maxBatchSize` → `max_batch_size`: the REST and column spelling of a GraphQL/Prisma name. */
export const snakeCase = (name: string): string => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
