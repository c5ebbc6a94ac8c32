// Value spellings shared by every surface.

/** ISO 8601 UTC with milliseconds and `Z`, so a returned value works as a filter bound. */
export function isoUtc(d: Date | string | null | undefined): string | null {
  if (d == null) return null;
  return (d instanceof Date ? d : new Date(d)).toISOString();
}

/** `maxBatchSize` → `max_batch_size`: the REST and column spelling of a GraphQL/Prisma name. */
export const snakeCase = (name: string): string => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
