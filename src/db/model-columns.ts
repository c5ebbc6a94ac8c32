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
  return [...scalarFields(model)].map((f) => `${alias}."${snakeCase(f)}" AS "${f}"`).join(', ');
}
