// A field whose resolver only returns its parent's property of the same name can go without one:
// graphql-jit (the REST list documents) then reads the property inline instead of calling a
// resolver per field per row, and graphql-js's default resolver reads the same property. Pothos
// does this itself for `expose` fields, but on a select-mode Prisma object `expose` is wrapped by
// plugin-prisma's per-row lookup (graphql/types/batch.ts), so those fields say it with this option.
import { isObjectType, type GraphQLFieldResolver, type GraphQLSchema } from 'graphql';

/** Field option: the resolver returns the parent's property named like the field, nothing else. */
export const READS_OWN_PROPERTY = { extensions: { readsOwnProperty: true } } as const;

/** Drops the resolvers of fields marked READS_OWN_PROPERTY, after checking that each does only that. */
export function withoutOwnPropertyResolvers(schema: GraphQLSchema): GraphQLSchema {
  const probe = Symbol('probe');
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type)) continue;
    for (const field of Object.values(type.getFields())) {
      if (!field.extensions.readsOwnProperty || !field.resolve) continue;
      // Checked, not trusted: a plugin's wrapper, or a resolver reading another property, would
      // behave differently without it.
      const resolve = field.resolve as GraphQLFieldResolver<unknown, unknown>;
      if (field.extensions.pothosResolveWrapped !== false || resolve({ [field.name]: probe }, {}, {}, {} as never) !== probe) {
        throw new Error(`${type.name}.${field.name} is marked READS_OWN_PROPERTY but its resolver does more`);
      }
      field.resolve = undefined;
    }
  }
  return schema;
}
