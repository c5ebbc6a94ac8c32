// Tenants and anonymous clients introspect the schema without the operator surface (the `admin*`
// root fields and the types only they use); with ADMIN_TOKEN the whole schema shows, as it does in
// the committed schema.graphql. Execution is unchanged: an admin field asked for without the
// token is still FORBIDDEN, not an unknown field. Validation runs on the whole schema, so its
// "Did you mean …?" hints would name hidden fields and types: they are dropped for every caller
// (validation runs before the caller's token is known; operators have introspection).
import { BREAK, GraphQLError, Kind, visit, type DocumentNode, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
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

// graphql-js ends a message with its hint: ` Did you mean "a", "b", or "c"?`, ` Did you mean the
// enum value "A"?`, ` Did you mean to use an inline fragment on "T"?`. Names hold no `?`.
const SUGGESTION = / ?Did you mean [^?]*\?$/;

/** The error without its suggestion (the same error when it has none). */
export function withoutSuggestion<E extends Error>(error: E): E | GraphQLError {
  const message = error.message.replace(SUGGESTION, '');
  if (message === error.message || !(error instanceof GraphQLError)) return error;
  return new GraphQLError(message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    originalError: error.originalError,
    extensions: error.extensions,
  });
}

/**
 * A variable's value is checked against its declared type (which may be a hidden input type)
 * when the operation runs: those errors lose their hints too. Streams carry no such error.
 */
function dropSuggestions({ result, setResult }: { result: unknown; setResult: (r: ExecutionResult) => void }): void {
  if (isAsyncIterable(result)) return;
  const single = result as ExecutionResult;
  if (single.errors?.length) setResult({ ...single, errors: single.errors.map(withoutSuggestion) });
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
    onValidate() {
      return ({ valid, result, setResult }) => {
        if (!valid) setResult(result.map(withoutSuggestion));
      };
    },
    onExecute({ args, executeFn, setExecuteFn }) {
      if (!(args.contextValue as GraphQLContext).isAdmin && asks(args.document)) setExecuteFn((a) => executeFn({ ...a, schema: tenantSchema }));
      return { onExecuteDone: dropSuggestions };
    },
    onSubscribe() {
      return { onSubscribeResult: dropSuggestions };
    },
  };
}
