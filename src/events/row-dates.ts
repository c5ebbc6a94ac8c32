// Timestamps as the drivers hand them over: node-postgres parses them, PGlite may not.
export const asDate = (v: Date | string): Date => (v instanceof Date ? v : new Date(v));
export const asDateOrNull = (v: Date | string | null): Date | null => (v == null ? null : asDate(v));
