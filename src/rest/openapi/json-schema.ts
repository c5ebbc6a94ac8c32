// Small builders for the JSON Schema (2020-12, the dialect of OpenAPI 3.1) that describes the
// contract's shapes. `closed<T>` takes one schema per field of the mapper's output type T, so a
// field added to or renamed in a mapper fails to compile until its schema follows.

export type JsonSchema = { [keyword: string]: unknown };

/** A reference to a schema under components/schemas. */
export const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });

export const str = (description?: string, extra: JsonSchema = {}): JsonSchema => ({
  type: 'string',
  ...extra,
  ...(description ? { description } : {}),
});
export const int = (description?: string, extra: JsonSchema = {}): JsonSchema => ({
  type: 'integer',
  ...extra,
  ...(description ? { description } : {}),
});
export const bool = (description?: string): JsonSchema => ({ type: 'boolean', ...(description ? { description } : {}) });
export const count = (description?: string): JsonSchema => int(description, { minimum: 0 });
export const timestamp = (description = 'ISO 8601 UTC timestamp with milliseconds'): JsonSchema => str(description, { format: 'date-time' });
export const oneOfStrings = (values: readonly string[], description?: string): JsonSchema => str(description, { enum: [...values] });

/** The same schema, or JSON null (`type` gains "null"; an enum gains null). */
export function nullable(schema: JsonSchema): JsonSchema {
  if ('$ref' in schema) return { anyOf: [schema, { type: 'null' }] };
  const out: JsonSchema = { ...schema, type: [schema.type, 'null'] };
  if (Array.isArray(schema.enum)) out.enum = [...schema.enum, null];
  return out;
}

/** An object with exactly these fields, every one present (null where the schema allows it). */
export function closed<T>(properties: { [K in keyof T]-?: JsonSchema }, description?: string): JsonSchema {
  return {
    type: 'object',
    ...(description ? { description } : {}),
    required: Object.keys(properties),
    properties,
    additionalProperties: false,
  };
}

/** A page of a list: `{items, pagination}` (and any extra fields, e.g. the results' status). */
export function pageOf(item: string, extra: Record<string, JsonSchema> = {}): JsonSchema {
  const properties = { ...extra, items: { type: 'array', items: ref(item) }, pagination: ref('Pagination') };
  return { type: 'object', required: Object.keys(properties), properties, additionalProperties: false };
}

/** Query parameters `page` and a page size, with the list's default and maximum. */
export function pageParams(sizeName: 'limit' | 'page_size', spec: { defaultLimit: number; maxLimit: number }) {
  return [
    { name: 'page', description: '1-indexed; a page past the end is empty', schema: int(undefined, { minimum: 1, default: 1 }) },
    {
      name: sizeName,
      description: `Page size, at most ${spec.maxLimit}`,
      schema: int(undefined, { minimum: 1, maximum: spec.maxLimit, default: spec.defaultLimit }),
    },
  ];
}
