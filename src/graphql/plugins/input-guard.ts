// GraphQL inputs PostgreSQL or JavaScript can't hold faithfully (NUL, lone surrogates, prototype
// keys in JSON scalars) are refused before execution with the offending path, instead of failing
// inside a resolver as a masked internal error. The REST facade checks its own input first.
import { getOperationAST, Kind, visit, type DocumentNode, type ExecutionArgs } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { AppError } from '../../errors.ts';
import { jsonHazards, stringProblem } from '../../http/json-guard.ts';
import type { GraphQLContext } from '../context.ts';

const MAX_DETAILS = 20;

/** The document's string literals that can't be stored, at most MAX_DETAILS. */
function documentHazards(document: DocumentNode): string[] {
  const details: string[] = [];
  visit(document, {
    [Kind.STRING]: (node) => {
      const problem = stringProblem(node.value);
      if (problem && details.length < MAX_DETAILS) details.push(`query (line ${node.loc?.startToken.line ?? '?'}): ${problem}`);
    },
  });
  return details;
}

/**
 * The variables the operation declares: no other value reaches a resolver, and a walk of every
 * variable sent (2M unused ones) took seconds.
 */
function declaredVariables(args: ExecutionArgs): Record<string, unknown> {
  const declared: Record<string, unknown> = Object.create(null);
  const values = args.variableValues;
  if (!values) return declared;
  for (const definition of getOperationAST(args.document, args.operationName)?.variableDefinitions ?? []) {
    const name = definition.variable.name.value;
    if (Object.hasOwn(values, name)) declared[name] = values[name];
  }
  return declared;
}

export function useInputGuard(): Plugin {
  // Yoga hands every request of one text the same parsed document, which nothing changes: its
  // literals are checked once (a visit of the whole document was a sixth of a small query's CPU).
  const checkedDocuments = new WeakMap<DocumentNode, string[]>();
  const literalHazards = (document: DocumentNode): string[] => {
    let found = checkedDocuments.get(document);
    if (!found) checkedDocuments.set(document, (found = documentHazards(document)));
    return found;
  };
  const check = (args: ExecutionArgs): AppError | null => {
    if ((args.contextValue as GraphQLContext | undefined)?.scope.inputVetted) return null;
    const details = jsonHazards(declaredVariables(args), 'variables', 'variables');
    for (const detail of literalHazards(args.document)) if (details.length < MAX_DETAILS) details.push(detail);
    return details.length ? new AppError('MISSING_PARAMETER', 'Input contains values that cannot be stored', details) : null;
  };
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const refusal = check(args);
      if (refusal) setResultAndStopExecution({ errors: [refusal] });
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      const refusal = check(args);
      if (refusal) setResultAndStopExecution({ errors: [refusal] });
    },
  };
}
