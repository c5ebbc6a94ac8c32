// Tenants and anonymous clients introspect the schema without the operator surface (the `admin*`
// root fields and the types only they use); with ADMIN_TOKEN the whole schema shows, as it does in
// the committed schema.graphql. Execution is unchanged: an admin field asked for without the
// token is still FORBIDDEN, not an unknown field.
import { BREAK, Kind, visit, type DocumentNode, type GraphQLSchema } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { filterSchema, pruneSchema } from '@graphql-tools/utils';
import type { GraphQLContext } from '../context.ts';

export function tenantSchemaOf(schema: GraphQLSchema): GraphQLSchema {
  return pruneSchema(filterSchema({ schema, rootFieldFilter: (_operation, name) => !name.startsWith('admin') }));
}

function asksIntrospection(document: DocumentNode): boolean {
  let found = false;
  visit(document, {
    [Kind.FIELD](node) {
      if (node.name.value === '__schema' || node.name.value === '__type') {
        found = true;
        return BREAK;
      }
      return undefined;
    },
  });
  return found;
}

export function useHideOperatorSchema(schema: GraphQLSchema): Plugin<GraphQLContext> {
  const tenantSchema = tenantSchemaOf(schema);
  // Documents are reused (the REST route table's, Yoga's parse cache), so each is walked once.
  const introspects = new WeakMap<DocumentNode, boolean>();
  const asks = (document: DocumentNode) => {
    let found = introspects.get(document);
    if (found === undefined) introspects.set(document, (found = asksIntrospection(document)));
    return found;
  };
  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      if ((args.contextValue as GraphQLContext).isAdmin || !asks(args.document)) return;
      setExecuteFn((a) => executeFn({ ...a, schema: tenantSchema }));
    },
  };
}
