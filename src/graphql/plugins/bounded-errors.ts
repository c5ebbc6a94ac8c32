// GraphQL error text is bounded whatever the document and variables held: graphql-js quotes a
// whole variable value in a coercion error (3.8 MB in, 7.3 MB out; 14.5 MB for one of quotes) and
// names from the document in syntax and validation errors. The errors of a parse, a validation, an
// execution and each subscription event are cut to errors.ts's bounds on every surface (HTTP, SSE,
// WebSocket), before Yoga caches a parse error or a validation result. The REST facade's
// envelope bounds its own (http/responses.ts).
import { GraphQLError, type ExecutionResult } from 'graphql';
import { handleStreamOrSingleExecutionResult, type Plugin } from 'graphql-yoga';
import { boundedDetails, boundedText, MAX_ERROR_DETAILS_CHARS } from '../../errors.ts';

/** Errors of one result at most; graphql-js stops validation at 100. */
export const MAX_ERRORS = 100;
/** Characters of one result's error messages and details together; the errors past it are counted in a last one. */
export const MAX_ERRORS_CHARS = 2 * MAX_ERROR_DETAILS_CHARS;

const detailsOf = (error: GraphQLError): unknown => error.extensions?.details;

function charsOf(error: GraphQLError): number {
  const details = detailsOf(error);
  return error.message.length + (Array.isArray(details) ? details.reduce((n: number, d) => n + String(d).length, 0) : 0);
}

/** `error`, or a copy with its message and details bounded. */
export function boundedError(error: GraphQLError): GraphQLError {
  const message = boundedText(error.message);
  const details = detailsOf(error);
  const bounded = Array.isArray(details) && details.every((d) => typeof d === 'string') ? boundedDetails(details) : details;
  if (message === error.message && bounded === details) return error;
  return new GraphQLError(message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    // What was thrown stays visible: masking still masks an unexpected error, the REST facade
    // still finds its AppError.
    originalError: error.originalError ?? error,
    extensions: bounded === details ? error.extensions : { ...error.extensions, details: bounded },
  });
}

/** `errors` each bounded, at most MAX_ERRORS and MAX_ERRORS_CHARS together; the same array when nothing was cut. */
export function boundedErrors(errors: readonly GraphQLError[]): readonly GraphQLError[] {
  let out: GraphQLError[] | null = null;
  let total = 0;
  for (let i = 0; i < errors.length; i++) {
    const error = boundedError(errors[i]);
    total += charsOf(error);
    if (i > 0 && (i >= MAX_ERRORS || total > MAX_ERRORS_CHARS)) {
      out ??= errors.slice(0, i);
      out.push(new GraphQLError(`${errors.length - i} more errors not shown`));
      return out;
    }
    if (error !== errors[i]) out ??= errors.slice(0, i);
    out?.push(error);
  }
  return out ?? errors;
}

function boundResult({ result, setResult }: { result: ExecutionResult; setResult: (r: ExecutionResult) => void }): void {
  if (!result.errors?.length) return;
  const errors = boundedErrors(result.errors);
  if (errors !== result.errors) setResult({ ...result, errors });
}

/** First among the plugins: a plugin that stops an execution early still has its result bounded. */
export function useBoundedErrors(): Plugin {
  return {
    onParse:
      () =>
      ({ result, replaceParseResult }) => {
        if (!(result instanceof GraphQLError)) return;
        const bounded = boundedError(result);
        if (bounded !== result) replaceParseResult(bounded);
      },
    onValidate:
      () =>
      ({ result, setResult }) => {
        if (!result.length || !result.every((e) => e instanceof GraphQLError)) return;
        const bounded = boundedErrors(result);
        if (bounded !== result) setResult([...bounded]);
      },
    onExecute: () => ({ onExecuteDone: (payload) => handleStreamOrSingleExecutionResult(payload, boundResult) }),
    onSubscribe: () => ({ onSubscribeResult: (payload) => handleStreamOrSingleExecutionResult(payload, boundResult) }),
  };
}
