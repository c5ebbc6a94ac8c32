// Select lists for raw statements that must return rows shaped like Prisma's models, for the few
// hot reads where Prisma 6's per-query compilation (~0.5 ms of CPU, no plan cache before Prisma 7.4)
// would be most of the request. Columns are the snake_case of the field names: schema.prisma maps
// every column that way.
import { snakeCase } from '../domain/text-forms.ts';
import { getDatamodel } from '../generated/pothos-types.ts';

type ModelName = keyof ReturnType<typeof getDatamodel>['datamodel']['models'];

const models = getDatamodel().datamodel.models;

export function scalarFields(model: ModelName): ReadonlySet<string> {
  return new Set(models[model].fields.filter((f) => f.kind === 'scalar').map((f) => f.name));
}

/** `a."max_batch_size" AS "maxBatchSize", …` for every scalar field of the model. */
export function modelSelectList(model: ModelName, alias: string): string {
  return selectList([...scalarFields(model)], alias);
}

/** A Prisma query argument as a GraphQL resolver hands it down (plugin-prisma's planned selection). */
export interface ModelQuery {
  select?: object;
  include?: object;
}

/**
 * The scalar fields a query argument reads when it loads no relation: the selected ones, or every
 * scalar field without a selection; null when it loads a relation (only Prisma can plan that).
 */
export function plainFields(model: ModelName, query: ModelQuery, scalars: ReadonlySet<string> = scalarFields(model)): string[] | null {
  const wanted = (entries: object | undefined) => Object.entries(entries ?? {}).filter(([, v]) => v !== false && v !== undefined);
  if (wanted(query.include).length) return null;
  if (!query.select) return [...scalars];
  const fields: string[] = [];
  for (const [field, v] of wanted(query.select)) {
    if (v !== true || !scalars.has(field)) return null;
    fields.push(field);
  }
  return fields.length ? fields : null;
}

/** `c."created_at" AS "createdAt", …`: raw rows keyed like Prisma's. */
export function selectList(fields: readonly string[], alias: string): string {
  return fields.map((f) => `${alias}."${snakeCase(f)}" AS "${f}"`).join(', ');
}
