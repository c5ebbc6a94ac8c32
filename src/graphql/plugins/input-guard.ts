// GraphQL inputs PostgreSQL or JavaScript can't hold faithfully (NUL, lone surrogates, prototype
// keys in JSON scalars) are refused before execution with the offending path, instead of failing
// inside a resolver as a masked internal error. The REST facade checks its own input first.
import { Kind, visit, type ExecutionArgs } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { AppError } from '../../errors.ts';
import { jsonHazards, stringProblem } from '../../http/json-guard.ts';
import type { GraphQLContext } from '../context.ts';

export function inputHazards(args: Pick<ExecutionArgs, 'document' | 'variableValues'>): string[] {
  const details = jsonHazards(args.variableValues ?? {}, 'variables', 'variables');
  visit(args.document, {
    [Kind.STRING]: (node) => {
      const problem = stringProblem(node.value);
      if (problem && details.length < 20) details.push(`query (line ${node.loc?.startToken.line ?? '?'}): ${problem}`);
    },
  });
  return details;
}

export function useInputGuard(): Plugin {
  const check = (args: ExecutionArgs): AppError | null => {
    if ((args.contextValue as GraphQLContext | undefined)?.scope.inputVetted) return null;
    const details = inputHazards(args);
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
